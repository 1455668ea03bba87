// `npm run mutants`: run the catalog (or a shard or subset of it), list it, or merge shard reports.
// Exit 0 only when every mutant run was killed by an expected test's assertion and the run's own
// checks held; otherwise 1 with the reason per mutant; 2 for a bad command line. --bless-goldens
// runs the same with golden mismatches written into the tree copies: a mutant only a golden
// noticed is "golden only" there, and fails the mode. --both gives each mutant both verdicts in one
// pass, with both reports, and exits 1 when either mode would.
import { availableParallelism } from "node:os";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Mutant } from "./catalog.ts";
import type { MutantRecord } from "./report.ts";
import { USAGE, parseCliArgs, type CliArgs } from "./cli-args.ts";
import { loadCatalog, locateMutantLine, type LoadedCatalog } from "./load.ts";
import { planRun } from "./plan.ts";
import { conclude, describeTiming, writeDiffs, writeFullReport, writeShardReport } from "./reporters.ts";
import { runMutation, type RunResult } from "./runner.ts";
import { mergePartials, type PartialReport } from "./shard.ts";
import { layBaseTree, readChanges, selectSince, type Changes } from "./since.ts";
import { readCache, writeCache, type CacheMode, type VerdictCache } from "./cache.ts";
import { readKeyFacts, rememberVerdicts, splitByCache, type CacheSplit } from "./cache-run.ts";
import { makeKeyReader } from "./cache-key.ts";
import { answeringHits, keepsVerdicts, placeCache } from "./cache-place.ts";

/** Projects whose tests start real sandboxes and CLIs: one file at a time across the whole run. */
const SERIAL_PROJECTS = ["live", "matrix"];
/** The reports `npm test` and `npm run test:matrix` write, each with its tree's sha256 beside it (scripts/tree-proof.ts). */
const PROVEN_REPORTS = [
  "reports/junit/contract.xml",
  "reports/junit/selftest.xml",
  "reports/junit/live.xml",
  "reports/junit/matrix.xml",
];

type Out = (s: string) => void;
type RunArgs = Extract<CliArgs, { command: "run" }>;

export async function main(argv: readonly string[], cwd: string, out: Out = console.log): Promise<number> {
  const args = parseCliArgs(argv, cwd);
  if ("error" in args) {
    out(`${args.error}\n${USAGE}`);
    return 2;
  }
  const root = resolve(args.root);
  const catalog = loadCatalog(root);
  if (args.command === "list") return listCatalog(catalog, out);
  if (catalog.problems.length > 0) {
    for (const p of catalog.problems) out(`CATALOG: ${p}`);
    out("The catalog is broken: no mutant runs until it is fixed (see mutants/README.md).");
    return 1;
  }
  // Bless mode keeps its own reports, so CI's ordinary run and the bless run do not overwrite each other.
  const reports = resolve(
    root,
    args.reports || (args.command === "run" && args.blessGoldens ? "reports/mutation-blessed" : "reports/mutation"),
  );
  return args.command === "merge"
    ? mergeShards(root, catalog, reports, out)
    : runCatalog(root, catalog, reports, args, out);
}

/** Where a both-verdicts run puts its bless-mode reports: beside the ordinary ones. */
export function blessedReportsOf(reports: string): string {
  return `${reports}-blessed`;
}

function listCatalog(catalog: LoadedCatalog, out: Out): number {
  for (const m of catalog.mutants)
    out(
      `${m.id} | ${m.file}:${locateMutantLine(m, catalog.tags, catalog.sites.get(m.id))} | ${m.undoes} | ${m.killedBy.join("; ")}`,
    );
  for (const p of catalog.problems) out(`CATALOG: ${p}`);
  return catalog.problems.length > 0 ? 1 : 0;
}

function mergeShards(root: string, catalog: LoadedCatalog, reports: string, out: Out): number {
  const dir = join(reports, "shards");
  const names = existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.endsWith(".json"))
        .sort()
    : [];
  const partials = names.map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as PartialReport);
  const merged = mergePartials(
    partials,
    catalog.mutants.map((m) => m.id),
    catalog.hash,
  );
  if (!merged.ok) {
    for (const p of merged.problems) out(`MERGE REFUSED: ${p}`);
    return 1;
  }
  const tests = new Map(partials.flatMap((p) => p.tests));
  writeFullReport(reports, root, merged.records, catalog.sources, tests);
  out(`merged ${partials.length} shard(s) into ${join(reports, "mutation.json")}`);
  const code = conclude(merged.records, [], out);
  return merged.blessedRecords
    ? Math.max(code, concludeBlessed(reports, root, catalog, merged.blessedRecords, tests, [], out))
    : code;
}

/** A both-verdicts run's bless-mode reports beside the ordinary ones, its table and its exit code. */
function concludeBlessed(
  reports: string,
  root: string,
  catalog: LoadedCatalog,
  records: MutantRecord[],
  tests: ReadonlyMap<string, string[]>,
  fatal: readonly string[],
  out: Out,
): number {
  const blessedReports = blessedReportsOf(reports);
  mkdirSync(blessedReports, { recursive: true });
  if (records.length > 0) writeFullReport(blessedReports, root, records, catalog.sources, tests);
  out("");
  out("== the same mutants with goldens blessed away (only an assertion kills)");
  const code = conclude(records, fatal, out);
  out(`bless-mode reports in ${blessedReports}`);
  return code;
}

/** The cache a run reads, and whether it may write it; or why the command line is refused. */
type CacheUse = { path: string; cache: VerdictCache; split: CacheSplit; writes: boolean };

function openCache(
  root: string,
  catalog: LoadedCatalog,
  args: RunArgs,
  mode: CacheMode,
  out: Out,
): CacheUse | undefined | { error: string } {
  // A shard is one part of a nightly run that uses no cache; its merge scores runs, not reuses.
  if (args.shard || args.noCache) return undefined;
  const placed = placeCache(root, args.cache);
  if ("error" in placed) return placed;
  const cache = readCache(placed.path, out);
  const baseRoot =
    args.since === undefined ? undefined : layBaseTree(root, args.since, resolve(root, args.scratch ?? ".scratch/mut"));
  const split = splitByCache(root, catalog, catalog.mutants, cache, mode, readKeyFacts(), baseRoot);
  // A pull request's run reads main's verdicts and keeps none of its own.
  return { path: placed.path, cache, split, writes: keepsVerdicts(args) };
}

async function runCatalog(
  root: string,
  catalog: LoadedCatalog,
  reports: string,
  args: RunArgs,
  out: Out,
): Promise<number> {
  const mode: CacheMode = args.both ? "both" : args.blessGoldens ? "blessed" : "ordinary";
  const changes = args.since === undefined ? undefined : readChanges(root, args.since);
  if (changes && "error" in changes) {
    out(changes.error);
    return 2;
  }
  const use = openCache(root, catalog, args, mode, out);
  if (use && "error" in use) {
    out(use.error);
    return 2;
  }
  let only = args.only;
  if (changes) {
    const picked = pickSince(catalog, args.since!, changes, use?.split, out);
    if (picked.length === 0) return 0;
    only = picked;
  }
  const plan = planRun(catalog, { ...args, only });
  if (plan.kind === "refuse") {
    out(plan.message);
    return plan.exitCode;
  }
  const started = performance.now();
  // What --since selects always runs: a stored kill only decides what is left out.
  const hits = use ? answeringHits(use.split.hits, args) : new Map<string, never>();
  const toRun = plan.selected.filter((m) => !hits.has(m.id));
  if (use) describeCache(plan.selected.length, toRun, use.split, use.path, out);
  const ran =
    toRun.length > 0 ? await runWithPoolFallback(root, catalog, toRun, plan.sentinel, args, out) : NOTHING_RAN;
  if (use?.writes) {
    const kept = rememberVerdicts(use.cache, use.split.keys, ran, mode, makeKeyReader(root));
    writeCache(use.path, use.cache);
    out(`cache: ${kept} mutant(s) with a stored kill in ${use.path}`);
  } else if (use) out(`cache: --since keeps no verdict; ${use.path} is as it was`);
  const result = withHits(plan.selected, ran, hits, mode);
  return reportRun(root, catalog, reports, args, plan.selected, result, started, out);
}

async function reportRun(
  root: string,
  catalog: LoadedCatalog,
  reports: string,
  args: RunArgs,
  selected: readonly Mutant[],
  result: RunResult,
  started: number,
  out: Out,
): Promise<number> {
  mkdirSync(reports, { recursive: true });
  writeDiffs(join(reports, "diffs"), catalog, [...selected], !args.shard);
  if (args.shard) writeShardReport(reports, catalog, args.shard, [...selected], result);
  else if (result.records.length > 0) writeFullReport(reports, root, result.records, catalog.sources, result.tests);
  let code = conclude(result.records, result.fatal, out);
  if (result.blessedRecords && args.shard) {
    // A shard's bless-mode records go into its partial report; the merge writes their reports.
    out("");
    out("== the same mutants with goldens blessed away (only an assertion kills)");
    code = Math.max(code, conclude(result.blessedRecords, result.fatal, out));
  } else if (result.blessedRecords)
    code = Math.max(
      code,
      concludeBlessed(reports, root, catalog, result.blessedRecords, result.tests, result.fatal, out),
    );
  out(describeTiming(started, result.overheadMs, reports));
  return code;
}

const NOTHING_RAN: RunResult = { records: [], fatal: [], tests: new Map(), overheadMs: [], redBefore: false };

/**
 * A pull request's own mutants: those the change touches, and with the cache read, every one it
 * cannot answer for both the base tree and this one, in catalog order.
 */
function pickSince(
  catalog: LoadedCatalog,
  since: string,
  changes: Changes,
  split: CacheSplit | undefined,
  out: Out,
): string[] {
  const missed = split ? new Set(split.misses.keys()) : new Set<string>();
  const picked = selectSince(catalog.mutants, changes, missed);
  const touched = picked.filter((p) => p.why !== "cache miss");
  for (const p of touched) out(`--since ${since}: ${p.mutant.id} (its ${p.why} changed)`);
  if (picked.length > touched.length)
    out(`--since ${since}: and ${picked.length - touched.length} mutant(s) no stored kill answers on both trees`);
  if (picked.length === 0)
    out(
      `--since ${since}: no mutant's file, catalog entry or killer test changed, and stored kills answer the rest on both trees; nothing to run`,
    );
  return picked.map((p) => p.mutant.id);
}

/** How many verdicts the cache answers, and why each of the first few others must run. */
function describeCache(selected: number, toRun: readonly Mutant[], split: CacheSplit, file: string, out: Out): void {
  out(`cache: ${selected - toRun.length} of ${selected} verdict(s) reused from ${file}; ${toRun.length} to run`);
  const SHOWN = 20;
  for (const m of toRun.slice(0, SHOWN)) {
    const why = split.misses.get(m.id) ?? [];
    out(`  ${m.id}: ${why.slice(0, 2).join("; ")}${why.length > 2 ? ` and ${why.length - 2} more` : ""}`);
  }
  if (toRun.length > SHOWN) out(`  and ${toRun.length - SHOWN} more`);
}

/** The run's records with the cache's in catalog order: one table, one report, one exit code. */
function withHits(
  selected: readonly Mutant[],
  ran: RunResult,
  hits: ReadonlyMap<string, { ordinary?: MutantRecord; blessed?: MutantRecord }>,
  mode: CacheMode,
): RunResult {
  if (hits.size === 0) return ran;
  const fresh = new Map(ran.records.map((r, i) => [r.mutant.id, { r, b: ran.blessedRecords?.[i] }]));
  const pick = (m: Mutant, blessed: boolean): MutantRecord | undefined => {
    const h = hits.get(m.id);
    if (h) return blessed || mode === "blessed" ? h.blessed : h.ordinary;
    return blessed ? fresh.get(m.id)?.b : fresh.get(m.id)?.r;
  };
  // A run that stopped before its queue has no fresh records: only the cache's are shown.
  const records = selected.map((m) => pick(m, false)).filter((r): r is MutantRecord => r !== undefined);
  const blessedRecords =
    mode === "both" ? selected.map((m) => pick(m, true)).filter((r): r is MutantRecord => r !== undefined) : undefined;
  return { ...ran, records, ...(blessedRecords ? { blessedRecords } : {}) };
}

/**
 * Threads are faster, but not every test runs in a worker thread (process.chdir, or HOME for
 * os.homedir(), for two): when the suite is red under threads and no pool was asked for, vitest's
 * default forks decide.
 */
async function runWithPoolFallback(
  root: string,
  catalog: LoadedCatalog,
  selected: Mutant[],
  sentinel: Mutant,
  args: RunArgs,
  out: Out,
): Promise<RunResult> {
  // Two hosts suit two cores; more hosts than mutants would only start idle vitests.
  const workers = Math.max(1, Math.min(args.workers ?? Math.min(2, availableParallelism()), selected.length));
  const run = (pool: "threads" | "forks") => {
    const shard = args.shard ? ` (shard ${args.shard.k}/${args.shard.n})` : "";
    out(
      `mutants: ${selected.length} of ${catalog.mutants.length}${shard}${args.only ? " (--only)" : ""}${args.since !== undefined ? ` (--since ${args.since})` : ""}, ${workers} host(s), ${pool} pool, sentinel ${sentinel.id}${args.blessGoldens ? ", goldens blessed away (only an assertion kills)" : ""}${args.both ? ", both verdicts (ordinary, and with goldens blessed away)" : ""}`,
    );
    const scratch = resolve(root, args.scratch ?? ".scratch/mut");
    const provenReports = args.rerunSuite ? [] : PROVEN_REPORTS;
    return runMutation(catalog, {
      root,
      scratch,
      workers,
      pool,
      selected,
      sentinel,
      timeoutFloorMs: args.timeoutFloorMs,
      serialProjects: SERIAL_PROJECTS,
      blessGoldens: args.blessGoldens,
      bothVerdicts: args.both,
      provenReports,
      log: out,
    });
  };
  const result = await run(args.pool ?? "threads");
  if (!result.redBefore || args.pool !== undefined) return result;
  for (const f of result.fatal) out(`  (threads) ${f}`);
  out("the suite is not green under the threads pool; running again under forks");
  return run("forks");
}
