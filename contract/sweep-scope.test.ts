// `npm run mutants:sweep -- --changed`: which swept files a sweep mutates again, from what git's
// diff says the change touches (never from a record the change could rewrite), and whether the
// committed report and record may stand. Pure over the paths, the inputs now and the base's report,
// and on real git repositories for the diff.
import { execFileSync } from "node:child_process";
import { globSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import {
  digestReportVerdicts,
  readChangedPaths,
  readSweepInputs,
  readSweepRecord,
  sameRecord,
  showAt,
  writeRecordText,
} from "../src/mutation/sweep-inputs.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import {
  changedInputs,
  judgeCommitted,
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
const plan = (now: InputDigests) =>
  planSweepScope({ changed: changedInputs(RECORDED, now), now, swept: SWEPT, report: REPORT });
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
    expect(readSweepArgs(["--changed"])).toEqual({
      changed: true,
      keepsRecord: true,
      base: undefined,
      strykerArgs: [],
    });
    expect(readSweepArgs(["--changed", "--base", "origin/main"])).toMatchObject({
      changed: true,
      base: "origin/main",
      strykerArgs: [],
    });
    expect(readSweepArgs(["--changed", "--base"])).toEqual({ problem: "--base needs a git ref" });
    expect(readSweepArgs(["--force"])).toEqual({
      changed: false,
      keepsRecord: true,
      base: undefined,
      strykerArgs: ["--force"],
    });
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

const REPORT_TEXT = (status: string, ids = ["7", "8"]) =>
  JSON.stringify({
    files: {
      "src/core/a.ts": {
        source: "a1",
        mutants: [
          { id: ids[0], mutatorName: "M", replacement: "x", status, location: { start: { line: 1 } }, coveredBy: ids },
        ],
      },
    },
    testFiles: { "contract/a.test.ts": { tests: [{ id: ids[1] }] } },
  });

describe("a committed report or record the change rewrote stands only when it is what the run computed", () => {
  const same = (a: string, b: string) => digestReportVerdicts(a) === digestReportVerdicts(b);
  const judge = (head: string | null, base: string | null, computed: string) =>
    judgeCommitted({ file: "mutants/sweep/stryker-incremental.json", head, base, computed, same });

  it("the base's own, untouched by the change, stands though older than the tree (the control)", () => {
    expect(judge(REPORT_TEXT("Survived"), REPORT_TEXT("Survived"), REPORT_TEXT("Killed"))).toBeNull();
    expect(judge(null, null, REPORT_TEXT("Killed"))).toBeNull();
  });

  it("a rewritten one equal to the computed verdicts stands; test ids StrykerJS renumbers do not count", () => {
    expect(
      judge(REPORT_TEXT("Killed", ["1", "2"]), REPORT_TEXT("Survived"), REPORT_TEXT("Killed", ["9", "9"])),
    ).toBeNull();
  });

  it("a rewritten one that says Killed where the run computed Survived fails, naming the file", () => {
    // toEqual, not toMatch: a null must fail as an assertion, not as toMatch's type error.
    expect(judge(REPORT_TEXT("Killed"), REPORT_TEXT("Survived"), REPORT_TEXT("Survived"))).toEqual(
      expect.stringMatching(
        /^mutants\/sweep\/stryker-incremental\.json: this change rewrites it, but it is not what the sweep computes/,
      ),
    );
  });

  it("records: the same report and inputs are the same; one input more or another digest is not", () => {
    const r = writeRecordText(REPORT_TEXT("Killed"), { "src/core/a.ts": "a1" });
    expect(sameRecord(r, writeRecordText(REPORT_TEXT("Killed", ["3", "4"]), { "src/core/a.ts": "a1" }))).toBe(true);
    expect(sameRecord(r, writeRecordText(REPORT_TEXT("Killed"), { "src/core/a.ts": "a2" }))).toBe(false);
    expect(sameRecord(r, writeRecordText(REPORT_TEXT("Survived"), { "src/core/a.ts": "a1" }))).toBe(false);
  });
});

const scratch = makeScratch("sweep-forgery");
afterAll(() => scratch.remove());

describe("--changed on a real git repository: the scope is git's diff, whatever the record says", () => {
  /** A repository whose main holds a swept file, its test, a report and a record of the tree. */
  function layRepo(name: string): { root: string; git: (...a: string[]) => string } {
    const root = join(scratch.root, name);
    const git = (...a: string[]) => execFileSync("git", ["-C", root, ...a], { encoding: "utf8" });
    const files: Record<string, string> = {
      "src/core/a.ts": "export const a = (p: string) => !p.includes('..'); // the protection\n",
      "contract/a.test.ts": "// covers a\n",
      "README.md": "# t\n",
      "mutants/sweep/stryker-incremental.json": REPORT_TEXT("Killed"),
    };
    for (const [p, t] of Object.entries(files)) {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), t);
    }
    git("init", "-q", "-b", "main");
    git("config", "user.email", "t@example.invalid");
    git("config", "user.name", "t");
    writeFileSync(
      join(root, "mutants/sweep/inputs.json"),
      writeRecordText(REPORT_TEXT("Killed"), readSweepInputs(root)),
    );
    git("add", ".");
    git("commit", "-qm", "main");
    git("checkout", "-qb", "change");
    return { root, git };
  }
  const scopeOf = (root: string) => {
    const changed = readChangedPaths(root, "main");
    if ("problem" in changed) throw new Error(changed.problem);
    const report = JSON.parse(
      showAt(root, changed.mergeBase, "mutants/sweep/stryker-incremental.json")!,
    ) as ScopeReport;
    return planSweepScope({ changed: changed.paths, now: readSweepInputs(root), swept: SWEPT, report });
  };

  it("a weakened swept file with a record regenerated to match it is still mutated again", () => {
    const { root, git } = layRepo("forged-record");
    writeFileSync(join(root, "src/core/a.ts"), "export const a = (_p: string) => true; // the protection\n");
    writeFileSync(
      join(root, "mutants/sweep/inputs.json"),
      writeRecordText(REPORT_TEXT("Killed"), readSweepInputs(root)),
    );
    git("commit", "-qam", "weaken, and a record that says nothing changed");
    expect(scopeOf(root)).toEqual({ kind: "narrow", mutate: ["src/core/a.ts"], why: { "src/core/a.ts": "changed" } });
  });

  it("control: the same steps without the weakening touch nothing the sweep reads", () => {
    const { root, git } = layRepo("honest");
    writeFileSync(
      join(root, "mutants/sweep/inputs.json"),
      writeRecordText(REPORT_TEXT("Killed"), readSweepInputs(root)),
    );
    git("commit", "-qam", "the record again", "--allow-empty");
    expect(scopeOf(root)).toEqual({ kind: "none" });
  });

  it("a report the change rewrote to say Killed, against the run's Survived, fails naming it; the base's stands", () => {
    const { root, git } = layRepo("forged-report");
    writeFileSync(
      join(root, "mutants/sweep/stryker-incremental.json"),
      REPORT_TEXT("Killed", ["5", "6"]).replace('"a1"', '"a2"'),
    );
    git("commit", "-qam", "a report of its own");
    const judge = (computed: string) =>
      judgeCommitted({
        file: "mutants/sweep/stryker-incremental.json",
        head: showAt(root, "HEAD", "mutants/sweep/stryker-incremental.json"),
        base: showAt(root, "main", "mutants/sweep/stryker-incremental.json"),
        computed,
        same: (a, b) => digestReportVerdicts(a) === digestReportVerdicts(b),
      });
    expect(judge(REPORT_TEXT("Survived"))).toEqual(
      expect.stringMatching(/stryker-incremental\.json: this change rewrites it/),
    );
    git("checkout", "-q", "main", "--", "mutants/sweep/stryker-incremental.json");
    git("commit", "-qm", "the base's report back");
    expect(judge(REPORT_TEXT("Survived")), "control: the base's own report is not this change's claim").toBeNull();
  });
});
