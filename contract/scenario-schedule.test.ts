import { describe, expect, it } from "vitest";
import { runPool, runScenarioInChild } from "../src/conformance/scenario/schedule.ts";

/** A task that takes `ms` (a real timer) and records how many ran at once while it did. */
function recorder() {
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const run = async (ms: number, i: number) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, ms));
    running--;
    order.push(i);
    return `result ${i}`;
  };
  return { run, most: () => most, order };
}

describe("runPool: scenarios side by side, results in the order given", () => {
  const durations = [30, 5, 20, 1, 15, 1, 10];

  it("returns every result in task order, whatever order they finished in", async () => {
    const r = recorder();
    const out = await runPool(durations, 4, r.run);
    expect(out).toEqual(durations.map((_, i) => `result ${i}`));
    expect(r.order, "they did finish out of order").not.toEqual([...r.order].sort((a, b) => a - b));
    expect(
      r.order.sort((a, b) => a - b),
      "each task ran exactly once",
    ).toEqual(durations.map((_, i) => i));
  });
  it("never runs more than `jobs` at once, and does reach `jobs`", async () => {
    for (const jobs of [1, 2, 4]) {
      const r = recorder();
      await runPool(durations, jobs, r.run);
      expect(r.most(), `jobs ${jobs}`).toBe(jobs);
    }
  });
  it("jobs 1 runs them one after another, in order", async () => {
    const r = recorder();
    await runPool(durations, 1, r.run);
    expect(r.order).toEqual(durations.map((_, i) => i));
  });
  it("the same tasks give the same results at 1 and at 4 jobs", async () => {
    const a = await runPool(durations, 1, recorder().run);
    const b = await runPool(durations, 4, recorder().run);
    expect(b).toEqual(a);
  });
  it("done hears each result as it finishes, with its index", async () => {
    const heard: Array<[string, number]> = [];
    await runPool(durations, 3, recorder().run, (res, i) => heard.push([res, i]));
    expect(heard.length).toBe(durations.length);
    for (const [res, i] of heard) expect(res).toBe(`result ${i}`);
  });
  it("more jobs than tasks, and no tasks, are fine; a jobs below 1 is refused naming it", async () => {
    expect(await runPool([1], 8, recorder().run)).toEqual(["result 0"]);
    expect(await runPool([], 8, recorder().run)).toEqual([]);
    await expect(runPool([1], 0, recorder().run)).rejects.toThrow("jobs must be a whole number of 1 or more, got 0");
  });
});

describe("runScenarioInChild: a scenario's process that ends without a result", () => {
  it("gives a failed result, every assertion unobserved, naming the exit and the child's last stderr", async () => {
    const r = await runScenarioInChild("/no/such/scenario.yaml", "gone", {
      name: "gone",
      harness: "pi",
      assertions: 2,
      runDir: "/no/such/runs/gone",
    });
    expect(r.verdict).toBe("fail");
    expect(r.problem).toMatch(
      /^the scenario's process ended \(exit 1\) without a result: .*\/no\/such\/scenario\.yaml/,
    );
    expect(r.assertions.map((a) => a.verdict)).toEqual(["unobserved", "unobserved"]);
    expect(r.assertions[0]?.detail).toBe(r.problem);
  });
});
