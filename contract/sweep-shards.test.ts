// The cold sweep in shards: `--shard i/n` mutates a share of the swept files balanced by work, and
// `--merge` takes each file's mutants from the one shard that mutated it. Pure over the files, the
// work and the reports; the merge's shell over real report directories.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { mergeSweepShards } from "../src/mutation/sweep-shard-run.ts";
import {
  mergeShardReports,
  planSweepShards,
  readShardArgs,
  readShardSpec,
  sweepWork,
  type ShardReport,
} from "../src/mutation/sweep-shards.ts";

const scratch = makeScratch("sweep-shards");
afterAll(() => scratch.remove());

const WORK: Record<string, number> = { "a.ts": 10, "b.ts": 7, "c.ts": 5, "d.ts": 4, "e.ts": 1 };
const work = (f: string) => WORK[f] ?? 0;

const shard = (name: string, files: string[], ids: string): ShardReport => ({
  shard: name,
  files,
  report: {
    schemaVersion: "1.0",
    files: Object.fromEntries(
      files.map((f) => [
        f,
        { source: `// ${f}`, mutants: [{ id: ids, status: "Killed", coveredBy: [ids], killedBy: [ids] }] },
      ]),
    ),
    testFiles: { "contract/t.test.ts": { source: "t", tests: [{ id: ids, name: `t${ids}` }] } },
  },
});

describe("--shard: the swept files split by work", () => {
  it("every file lands in exactly one shard, the heaviest first to the lightest shard", () => {
    const shards = planSweepShards(Object.keys(WORK), work, 2);
    // a (10) to the first; b (7), then c (5) to the second (7 < 10); d (4) to the first (10 < 12);
    // e (1) to the second (12 < 14): 14 against 13.
    expect(shards).toEqual([
      ["a.ts", "d.ts"],
      ["b.ts", "c.ts", "e.ts"],
    ]);
    expect(shards.flat().sort()).toEqual(Object.keys(WORK));
  });

  it("more shards than files leaves the extra shards empty; one shard holds every file", () => {
    expect(planSweepShards(["a.ts", "b.ts"], work, 3)).toEqual([["a.ts"], ["b.ts"], []]);
    expect(planSweepShards(Object.keys(WORK), work, 1)).toEqual([Object.keys(WORK)]);
  });

  it("a file's work: one run per covering test of each mutant that runs, one at least; ignored ones none", () => {
    const report = {
      files: {
        "a.ts": {
          mutants: [{ coveredBy: ["1", "2", "3"] }, { coveredBy: [] }, { status: "Ignored", coveredBy: ["1"] }, {}],
        },
      },
    };
    expect(sweepWork(report, "a.ts")).toBe(5);
    expect(sweepWork(report, "gone.ts")).toBe(0);
    expect(sweepWork(null, "a.ts")).toBe(0);
  });

  it("i/n is read with 1 ≤ i ≤ n; anything else is refused, naming it", () => {
    expect(readShardSpec("2/4")).toEqual({ index: 2, count: 4 });
    for (const bad of ["0/4", "5/4", "1", "1/0", "a/b", " 1/2"])
      expect(readShardSpec(bad), bad).toEqual({
        problem: `--shard ${JSON.stringify(bad)}: give i/n, a shard i of n with 1 ≤ i ≤ n`,
      });
  });

  it("the options: a shard with stryker's own options, the merge's directories, neither, or a problem", () => {
    expect(readShardArgs(["--shard", "1/2", "--concurrency", "4"])).toEqual({
      kind: "shard",
      spec: { index: 1, count: 2 },
      strykerArgs: ["--concurrency", "4"],
    });
    expect(readShardArgs(["--shard", "1/2", "--force"])).toMatchObject({ strykerArgs: [] });
    expect(readShardArgs(["--merge", "s1", "s2"])).toEqual({ kind: "merge", dirs: ["s1", "s2"] });
    expect(readShardArgs(["--changed"])).toBe(null);
    expect(readShardArgs(["--merge"])).toEqual({
      problem: "--merge takes the shards' report directories, and nothing else",
    });
    for (const other of ["--changed", "--mutate"])
      expect(readShardArgs(["--shard", "1/2", other])).toEqual({
        problem: "--shard mutates its own share of the swept files, cold: leave out --changed, --mutate and --merge",
      });
    expect(readShardArgs(["--shard"])).toEqual({ problem: '--shard "": give i/n, a shard i of n with 1 ≤ i ≤ n' });
  });
});

describe("--merge: one report from the shards'", () => {
  it("each file from the shard that mutated it, ids made each shard's own, every shard's tests kept", () => {
    const merged = mergeShardReports([shard("1/2", ["a.ts"], "0"), shard("2/2", ["b.ts"], "0")], ["a.ts", "b.ts"]);
    expect(merged).toEqual({
      schemaVersion: "1.0",
      files: {
        "a.ts": {
          source: "// a.ts",
          mutants: [{ id: "1/2:0", status: "Killed", coveredBy: ["1/2:0"], killedBy: ["1/2:0"] }],
        },
        "b.ts": {
          source: "// b.ts",
          mutants: [{ id: "2/2:0", status: "Killed", coveredBy: ["2/2:0"], killedBy: ["2/2:0"] }],
        },
      },
      testFiles: {
        "contract/t.test.ts": {
          source: "t",
          tests: [
            { id: "1/2:0", name: "t0" },
            { id: "2/2:0", name: "t0" },
          ],
        },
      },
    });
  });

  it("a swept file no shard mutated, one two shards mutated, or one its shard has no result for is a problem, never a gap", () => {
    const a = shard("1/2", ["a.ts"], "0");
    expect(mergeShardReports([a], ["a.ts", "b.ts"])).toEqual({ problem: "b.ts is swept but no shard mutated it" });
    expect(mergeShardReports([a, shard("2/2", ["a.ts"], "1")], ["a.ts"])).toEqual({
      problem: "a.ts was mutated by shard 1/2 and by shard 2/2",
    });
    expect(mergeShardReports([{ ...a, files: ["a.ts", "c.ts"] }], ["a.ts", "c.ts"])).toEqual({
      problem: "c.ts: shard 1/2 mutated it but its report has no result for it",
    });
    expect(mergeShardReports([], [])).toEqual({ problem: "no shard reports to merge" });
    expect(mergeShardReports([a], ["a.ts"]), "control: the one file, from its shard").toMatchObject({
      files: { "a.ts": { source: "// a.ts" } },
    });
  });

  it("the shell: the shards' directories merged into the checkout's report; a directory without a shard's files is named", () => {
    const root = join(scratch.root, "checkout");
    mkdirSync(join(root, "src"), { recursive: true });
    for (const f of ["a.ts", "b.ts"]) writeFileSync(join(root, "src", f), "");
    const dirs = [shard("1/2", ["src/a.ts"], "0"), shard("2/2", ["src/b.ts"], "0")].map((s, i) => {
      const d = join(scratch.root, `shard-${i + 1}`);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, "shard.json"), JSON.stringify({ shard: s.shard, files: s.files }));
      writeFileSync(join(d, "mutation.json"), JSON.stringify(s.report));
      return d;
    });
    expect(mergeSweepShards(root, dirs, ["src/*.ts"])).toBe(0);
    const merged = JSON.parse(readFileSync(join(root, "reports/mutation/sweep/mutation.json"), "utf8"));
    expect(Object.keys(merged.files)).toEqual(["src/a.ts", "src/b.ts"]);
    expect(mergeSweepShards(root, [dirs[0]!], ["src/*.ts"]), "a shard missing: the merge fails").toBe(2);
    expect(mergeSweepShards(root, [scratch.root], ["src/*.ts"]), "not a shard's directory").toBe(2);
  });
});
