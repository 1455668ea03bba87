// `npm run mutants:sweep -- --changed`: which swept files a sweep mutates again, from the record of
// inputs kept with the committed report. Pure over the record, the inputs now and the report.
import { globSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { readSweepRecord } from "../src/mutation/sweep-inputs.ts";
import {
  changedInputs,
  planSweepScope,
  readSweepArgs,
  SWEEP_INERT,
  type InputDigests,
  type ScopeReport,
} from "../src/mutation/sweep-scope.ts";

const SWEPT = ["src/core/**/*.ts", "src/host/launcher.ts"];
const REPORT: ScopeReport = {
  files: {
    "src/core/a.ts": { mutants: [{ coveredBy: ["1"] }, { coveredBy: [] }] },
    "src/core/b.ts": { mutants: [{ coveredBy: ["2"], killedBy: ["2"] }] },
    "src/host/launcher.ts": { mutants: [{ coveredBy: [], killedBy: ["3"] }] },
  },
  testFiles: {
    "contract/a.test.ts": { tests: [{ id: "1" }] },
    "contract/b.test.ts": { tests: [{ id: "2" }] },
    "contract/launcher.test.ts": { tests: [{ id: "3" }] },
    "contract/none.test.ts": { tests: [{ id: "4" }] },
  },
};
const RECORDED: InputDigests = {
  "src/core/a.ts": "a1",
  "src/core/b.ts": "b1",
  "src/host/launcher.ts": "l1",
  "contract/a.test.ts": "ta1",
  "contract/b.test.ts": "tb1",
  "contract/launcher.test.ts": "tl1",
  "contract/none.test.ts": "tn1",
  "contract/support/helper.ts": "h1",
  "package-lock.json": "p1",
};
const plan = (
  now: InputDigests,
  record: { report: string; inputs: InputDigests } | null = { report: "r1", inputs: RECORDED },
) => planSweepScope({ record, reportDigest: "r1", now, swept: SWEPT, report: REPORT });
const edit = (changes: Record<string, string | undefined>): InputDigests => {
  const out: Record<string, string> = { ...RECORDED };
  for (const [p, d] of Object.entries(changes))
    if (d === undefined) delete out[p];
    else out[p] = d;
  return out;
};

describe("--changed: the swept files a sweep mutates again", () => {
  it("nothing changed, or only an inert path: nothing runs, every verdict is the report's (the control for the rest)", () => {
    expect(plan(RECORDED)).toEqual({ kind: "none" });
    expect(plan(edit({ "mutants/equivalent.md": "e2", "mutants/sweep/inputs.json": "i2" }))).toEqual({ kind: "none" });
  });

  it("a changed swept file is mutated again, and only it; a new file under a swept pattern too", () => {
    expect(plan(edit({ "src/core/b.ts": "b2" }))).toEqual({
      kind: "narrow",
      mutate: ["src/core/b.ts"],
      why: { "src/core/b.ts": "changed" },
    });
    expect(plan(edit({ "src/core/new.ts": "n1" }))).toEqual({
      kind: "narrow",
      mutate: ["src/core/new.ts"],
      why: { "src/core/new.ts": "changed" },
    });
  });

  it("a changed or removed test file reruns the swept files its tests covered or killed, and no other", () => {
    expect(plan(edit({ "contract/a.test.ts": "ta2" }))).toEqual({
      kind: "narrow",
      mutate: ["src/core/a.ts"],
      why: { "src/core/a.ts": "its test file contract/a.test.ts changed" },
    });
    expect(plan(edit({ "contract/launcher.test.ts": "tl2" })), "a killer that is not among the covering tests").toEqual(
      {
        kind: "narrow",
        mutate: ["src/host/launcher.ts"],
        why: { "src/host/launcher.ts": "its test file contract/launcher.test.ts changed" },
      },
    );
    expect(plan(edit({ "contract/b.test.ts": undefined }))).toMatchObject({
      kind: "narrow",
      mutate: ["src/core/b.ts"],
    });
    expect(plan(edit({ "contract/none.test.ts": "tn2" })), "a test file that covered nothing swept").toEqual({
      kind: "none",
    });
  });

  it("any other changed, added or removed input makes the run whole, naming it", () => {
    for (const [path, d] of [
      ["contract/support/helper.ts", "h2"],
      ["package-lock.json", undefined],
      ["contract/brand-new.test.ts", "x1"],
    ] as const)
      expect(plan(edit({ [path]: d, "src/core/a.ts": "a2" }))).toEqual({
        kind: "whole",
        why: `${path} changed: it is neither a swept file nor a test file the report knows, so which verdicts it moves only a whole dry run shows`,
      });
  });

  it("a swept file that is gone makes the run whole", () => {
    expect(plan(edit({ "src/core/a.ts": undefined }))).toEqual({
      kind: "whole",
      why: "src/core/a.ts, a swept file, is gone",
    });
  });

  it("no record, or a report other than the one the record was kept with: the run is whole", () => {
    expect(plan(RECORDED, null)).toEqual({
      kind: "whole",
      why: "no record of the inputs the committed report was made from",
    });
    expect(plan(RECORDED, { report: "r0", inputs: RECORDED })).toEqual({
      kind: "whole",
      why: "the committed report is not the one its record of inputs was kept with",
    });
  });

  it("changedInputs: changed, added and removed paths, sorted; inert ones left out", () => {
    expect(
      changedInputs({ b: "1", c: "1", "mutants/sweep/x": "1" }, { a: "1", b: "2", "mutants/sweep/x": "2" }),
    ).toEqual(["a", "b", "c"]);
  });
});

describe("the sweep's options and its record", () => {
  it("--changed picks its own files: with --mutate or --force it is refused; a run over part of the scope keeps no record", () => {
    const problem = { problem: "--changed picks the files to mutate itself; leave out --mutate and --force" };
    for (const extra of [["--mutate", "src/core/a.ts"], ["-m", "x"], ["--mutate=x"], ["--force"]])
      expect(readSweepArgs(["--changed", ...extra]), extra.join(" ")).toEqual(problem);
    expect(readSweepArgs(["--changed"])).toEqual({ changed: true, keepsRecord: true, strykerArgs: [] });
    expect(readSweepArgs(["--force"])).toEqual({ changed: false, keepsRecord: true, strykerArgs: ["--force"] });
    expect(readSweepArgs(["--mutate", "src/core/a.ts"])).toMatchObject({ changed: false, keepsRecord: false });
  });

  it("a record that cannot be read says what is wrong with it; none at all is null", () => {
    expect(readSweepRecord(null)).toBe(null);
    expect(readSweepRecord("{")).toEqual({ problem: "mutants/sweep/inputs.json is not JSON" });
    expect(readSweepRecord('{"inputs":{}}')).toEqual({
      problem: 'mutants/sweep/inputs.json: "report" is not a digest',
    });
    expect(readSweepRecord('{"report":"r","inputs":[]}')).toEqual({
      problem: 'mutants/sweep/inputs.json: "inputs" is not an object of digests',
    });
    expect(readSweepRecord('{"report":"r","inputs":{"a":1}}')).toEqual({
      problem: "mutants/sweep/inputs.json: the digest of a is not a string",
    });
    expect(readSweepRecord('{"report":"r","inputs":{"a":"d"}}')).toEqual({ report: "r", inputs: { a: "d" } });
  });

  it("the inert paths are named by no swept file and no file of a test the sweep runs", async () => {
    const { SWEPT: swept }: { SWEPT: string[] } = await import(
      pathToFileURL(join(REPO_ROOT, "stryker.config.mjs")).href
    );
    const { default: sweepConfig }: { default: { test: { exclude: string[] } } } = await import(
      pathToFileURL(join(REPO_ROOT, "vitest.sweep.config.ts")).href
    );
    const left = new Set(sweepConfig.test.exclude);
    expect(
      left.has("contract/sweep-scope.test.ts"),
      "this test names the inert paths, so the sweep leaves it out",
    ).toBe(true);
    const files = [...swept, "contract/**/*.ts"]
      .flatMap((g) => globSync(g, { cwd: REPO_ROOT }))
      .filter((f) => !left.has(f) && !f.startsWith("contract/fixtures/"));
    expect(files.length).toBeGreaterThan(100);
    for (const f of files) {
      const text = readFileSync(join(REPO_ROOT, f), "utf8");
      for (const { prefix } of SWEEP_INERT) expect(text.includes(prefix), `${f} names ${prefix}`).toBe(false);
    }
  });
});
