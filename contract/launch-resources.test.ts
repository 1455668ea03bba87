// What a launch holds and releases (src/host/launch-resources.ts): newest first, each once, every
// release run even when one throws, and each told whether the launch failed or its session ended.
import { describe, expect, it } from "vitest";
import { LaunchResources, type Ending } from "../src/host/launch-resources.ts";

describe("LaunchResources", () => {
  it("releases what it holds newest first, awaiting each, and hands back the value and the ending", async () => {
    const res = new LaunchResources();
    const seen: string[] = [];
    const release = (name: string) => async (v: number, e: Ending) => {
      await new Promise((r) => setTimeout(r, 3 - v));
      seen.push(`${name}=${v}:${e.kind}`);
    };
    expect(res.hold("a", 1, release("a"))).toBe(1);
    res.hold("b", 2, release("b"));
    res.hold("c", 3, release("c"));
    expect(res.names()).toEqual(["a", "b", "c"]);
    expect(await res.release({ kind: "failed", error: new Error("x") })).toEqual([]);
    expect(seen, "the newest first, each finished before the next").toEqual(["c=3:failed", "b=2:failed", "a=1:failed"]);
  });

  it("a release that throws is reported and the others still run; a second release releases nothing", async () => {
    const res = new LaunchResources();
    const seen: string[] = [];
    res.hold("first", null, () => void seen.push("first"));
    res.hold("broken", null, () => {
      throw new Error("cannot let go");
    });
    res.hold("last", null, () => void seen.push("last"));
    const failures = await res.release({ kind: "ended" });
    expect(seen).toEqual(["last", "first"]);
    expect(failures.map((f) => [f.name, (f.error as Error).message])).toEqual([["broken", "cannot let go"]]);
    expect(await res.release({ kind: "ended" }), "once only").toEqual([]);
    expect(seen, "nothing released twice").toEqual(["last", "first"]);
  });

  it("nothing can be held once the resources are released", async () => {
    const res = new LaunchResources();
    await res.release({ kind: "ended" });
    expect(() => res.hold("late", 1, () => {})).toThrow("late: acquired after the launch's resources were released");
  });
});
