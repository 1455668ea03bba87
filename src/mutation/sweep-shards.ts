// The cold sweep in shards (npm run mutants:sweep -- --shard i/n, then -- --merge <dirs>): each
// shard mutates its share of the swept files on a machine of its own, and the merge takes each
// file's mutants from the one shard that mutated it. A file no shard reports, or two do, is a
// problem, never a gap: a merged report that lost a file would lose its survivors with it.

export type ShardSpec = { index: number; count: number };

/** `i/n` with 1 ≤ i ≤ n, or what is wrong with it. */
export function readShardSpec(text: string): ShardSpec | { problem: string } {
  const m = /^([1-9]\d*)\/([1-9]\d*)$/.exec(text);
  if (m === null || Number(m[1]) > Number(m[2]))
    return { problem: `--shard ${JSON.stringify(text)}: give i/n, a shard i of n with 1 ≤ i ≤ n` };
  return { index: Number(m[1]), count: Number(m[2]) };
}

type ReportMutant = { id?: string; status?: string; coveredBy?: readonly string[]; killedBy?: readonly string[] };
type FileResult = { mutants?: readonly ReportMutant[]; [key: string]: unknown };
type TestFile = { tests?: readonly { id: string; [key: string]: unknown }[]; [key: string]: unknown };
/** The parts of a mutation.json the shards and the merge read; the rest is carried as it is. */
export type SweepReport = {
  files: Record<string, FileResult>;
  testFiles?: Record<string, TestFile>;
  [key: string]: unknown;
};

/** A file's work in a report: one test run per covering test of each mutant that runs, one at least. */
export function sweepWork(report: SweepReport | null, file: string): number {
  const mutants = report?.files[file]?.mutants ?? [];
  return mutants
    .filter((m) => m.status !== "Ignored")
    .reduce((sum, m) => sum + Math.max(1, m.coveredBy?.length ?? 0), 0);
}

/**
 * The swept files split into `count` shards of about equal work: the heaviest file first, each to
 * the shard with the least work so far (the lowest index on a tie). Every file is in one shard.
 */
export function planSweepShards(files: readonly string[], work: (file: string) => number, count: number): string[][] {
  const shards = Array.from({ length: count }, () => ({ files: [] as string[], work: 0 }));
  const order = [...new Set(files)].sort((a, b) => work(b) - work(a) || a.localeCompare(b));
  for (const file of order) {
    const least = shards.reduce((best, s) => (s.work < best.work ? s : best));
    least.files.push(file); // safety: shard-plan-every-file
    least.work += work(file);
  }
  return shards.map((s) => s.files.sort());
}

/** What one shard left: the files it mutated and its mutation.json. */
export type ShardReport = { shard: string; files: readonly string[]; report: SweepReport };

/** A shard's file with its mutant and test ids made the shard's own (ids are unique only within one run). */
function ownIds(result: FileResult, prefix: string): FileResult {
  const own = (ids: readonly string[] | undefined) => ids?.map((id) => prefix + id);
  return {
    ...result,
    mutants: result.mutants?.map((m) => ({
      ...m,
      ...(m.id === undefined ? {} : { id: prefix + m.id }),
      ...(m.coveredBy === undefined ? {} : { coveredBy: own(m.coveredBy) }),
      ...(m.killedBy === undefined ? {} : { killedBy: own(m.killedBy) }),
    })),
  };
}

/**
 * One report of the swept files from the shards': each expected file's mutants from the one shard
 * that mutated it, every shard's tests under ids prefixed with its name. A file no shard mutated,
 * one two shards did, or one missing from its shard's report is a problem.
 */
export function mergeShardReports(
  shards: readonly ShardReport[],
  expected: readonly string[],
): SweepReport | { problem: string } {
  if (shards.length === 0) return { problem: "no shard reports to merge" };
  const owner = new Map<string, ShardReport>();
  for (const s of shards)
    for (const file of s.files) {
      const other = owner.get(file);
      if (other !== undefined)
        return { problem: `${file} was mutated by shard ${other.shard} and by shard ${s.shard}` };
      owner.set(file, s);
    }
  const prefix = (s: ShardReport) => `${s.shard}:`;
  const files: SweepReport["files"] = {};
  for (const file of [...expected].sort()) {
    const s = owner.get(file);
    if (s === undefined) return { problem: `${file} is swept but no shard mutated it` }; // safety: shard-merge-every-file
    const result = s.report.files[file];
    if (result === undefined)
      return { problem: `${file}: shard ${s.shard} mutated it but its report has no result for it` };
    files[file] = ownIds(result, prefix(s));
  }
  const testFiles: Record<string, TestFile> = {};
  for (const s of shards)
    for (const [name, tf] of Object.entries(s.report.testFiles ?? {})) {
      const tests = (tf.tests ?? []).map((t) => ({ ...t, id: prefix(s) + t.id }));
      testFiles[name] = { ...tf, tests: [...(testFiles[name]?.tests ?? []), ...tests] };
    }
  return { ...shards[0]!.report, files, testFiles };
}

/** The shard options of `npm run mutants:sweep`: a shard to run, the shard reports to merge, neither (null), or a problem. */
export function readShardArgs(
  args: readonly string[],
):
  | { kind: "shard"; spec: ShardSpec; strykerArgs: string[] }
  | { kind: "merge"; dirs: string[] }
  | null
  | { problem: string } {
  if (args[0] === "--merge") {
    const dirs = args.slice(1);
    if (dirs.length === 0 || dirs.some((d) => d.startsWith("-")))
      return { problem: "--merge takes the shards' report directories, and nothing else" };
    return { kind: "merge", dirs };
  }
  const at = args.indexOf("--shard");
  if (at === -1) return null;
  if (args.some((a) => /^(--changed|--mutate|-m|--merge)(=|$)/.test(a)))
    return {
      problem: "--shard mutates its own share of the swept files, cold: leave out --changed, --mutate and --merge",
    };
  const spec = readShardSpec(args[at + 1] ?? "");
  if ("problem" in spec) return spec;
  const rest = args.filter((a, i) => i !== at && i !== at + 1 && a !== "--force");
  return { kind: "shard", spec, strykerArgs: rest };
}
