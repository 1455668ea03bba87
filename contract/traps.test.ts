// The network trap and canaries every live test and scenario uses (src/conformance/traps/): a trap
// that did not count a connection would make every "nothing got out" assertion pass for nothing.
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canaryPattern, makeCanary } from "../src/conformance/traps/canary.ts";
import { startTrap } from "../src/conformance/traps/listener.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

/** Connects once and reads what the trap answers. */
const knock = (at: { port: number } | { path: string }) =>
  new Promise<string>((ok, bad) => {
    const c = "port" in at ? connect(at.port, "127.0.0.1") : connect(at.path);
    let got = "";
    c.on("data", (d) => (got += d))
      .on("end", () => ok(got))
      .on("error", bad);
  });

describe("network traps", () => {
  it("a TCP trap on the loopback, an abstract and a path socket each count every connection and answer it", async () => {
    const scratch = makeScratch("traps");
    const hits: string[] = [];
    const tcp = await startTrap({ tcp: "127.0.0.1" }, { onHit: () => hits.push("tcp") });
    const abstractName = makeCanary("trap-test");
    const abs = await startTrap({ abstract: abstractName }, { answer: "A\n" });
    const path = join(scratch.root, "t.sock");
    const file = await startTrap({ path }, { answer: "" });
    try {
      expect(tcp.address).toBe(`127.0.0.1:${tcp.port}`);
      expect(abs.address).toBe(`@${abstractName}`);
      expect(await knock({ port: tcp.port! })).toBe("trap\n");
      expect(await knock({ port: tcp.port! })).toBe("trap\n");
      expect(await knock({ path: `\0${abstractName}` })).toBe("A\n");
      expect(await knock({ path })).toBe("");
      expect([tcp.hits(), abs.hits(), file.hits(), hits.length]).toEqual([2, 1, 1, 2]);
    } finally {
      await Promise.all([tcp.close(), abs.close(), file.close()]);
      scratch.remove();
    }
    // Closed, it answers no one. A child a sibling test thread forks holds a copy of the listening
    // socket until its exec closes it, so a knock may first land in that backlog and be reset:
    // never answered, never counted, and refused once the copy is gone.
    const after: string[] = [];
    for (let i = 0; i < 500 && after.at(-1) !== "ECONNREFUSED"; i++) {
      if (i > 0) await new Promise((ok) => setTimeout(ok, 10));
      after.push(
        await knock({ port: tcp.port! }).then(
          (got) => `answered ${JSON.stringify(got)}`,
          (e) => e.code,
        ),
      );
    }
    expect(after.at(-1), after.join(", ")).toBe("ECONNREFUSED");
    expect(
      after.every((a) => a === "ECONNRESET" || a === "ECONNREFUSED"),
      after.join(", "),
    ).toBe(true);
    expect(tcp.hits()).toBe(2);
  });

  it("canaries are labelled and never repeat", () => {
    const a = makeCanary("stand-in-real-key");
    expect(a).toMatch(/^stand-in-real-key-[0-9a-f-]{36}$/);
    expect(makeCanary("stand-in-real-key")).not.toBe(a);
  });

  it("a canary's search pattern finds every canary of its label, in grep and in Perl, and no other", () => {
    const a = makeCanary("mosaic-cap");
    const pattern = canaryPattern("mosaic-cap");
    const haystack = `noise ${a} mosaic-cap-1234-abcdefgh ${makeCanary("mosaic-cat")} end`;
    const grep = spawnSync("grep", ["-oE", pattern], { input: haystack, encoding: "utf8" });
    expect(grep.stdout.trim().split("\n")).toEqual([a]);
    const perl = spawnSync("perl", ["-ne", `print "$1\\n" while /(${pattern})/g`], {
      input: haystack,
      encoding: "utf8",
    });
    expect(perl.stdout.trim().split("\n")).toEqual([a]);
  });
});
