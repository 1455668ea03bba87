// `npm run mutants`: run the catalog (or a shard or subset of it), list it, or merge shard reports.
// Exit 0 only when every mutant run was killed by an expected test's assertion and the run's own
// checks held; otherwise 1 with the reason per mutant; 2 for a bad command line. --bless-goldens
// runs the same with golden mismatches written into the tree copies: a mutant only a golden
// noticed is "golden only" there, and fails the mode.
import { availableParallelism } from "node:os";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { applyMutant, type Mutant } from "./catalog.ts";
import { USAGE, parseCliArgs } from "./cli-args.ts";
import { loadCatalog, locateMutantLine, type LoadedCatalog } from "./load.ts";
import { buildHtml, buildMutationReport, listBlessedAway, listFailures, renderTable, summarise, renderDiff, listGoldenOnlyKills, type MutantRecord } from "./report.ts";
import { runMutation } from "./runner.ts";
import { mergePartials, selectShard, type PartialReport } from "./shard.ts";

/** Projects whose tests start real sandboxes and CLIs: one file at a time across the whole run. */
const SERIAL_PROJECTS = ["live"];
/** The reports `npm test` writes, each with its tree's sha256 beside it (scripts/tree-proof.ts). */
const PROVEN_REPORTS = ["reports/junit/contract.xml", "reports/junit/selftest.xml", "reports/junit/live.xml"];

function viewerScript(): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve("mutation-testing-elements/dist/mutation-test-elements.js"), "utf8");
}

function writeDiffs(dir: string, catalog: LoadedCatalog, mutants: readonly Mutant[]): void {
  mkdirSync(dir, { recursive: true });
  for (const m of mutants) {
    const site = catalog.sites.get(m.id);
    const text = catalog.sources.get(m.file);
    if (site?.kind !== "found" || text === undefined) continue;
    writeFileSync(join(dir, `${m.id}.diff`), renderDiff(m.file, text, applyMutant(m, text, site)));
  }
}

function writeFullReport(reports: string, root: string, records: readonly MutantRecord[], sources: ReadonlyMap<string, string>, tests: ReadonlyMap<string, string[]>): void {
  const report = buildMutationReport({ records, sources, tests, projectRoot: root });
  writeFileSync(join(reports, "mutation.json"), JSON.stringify(report, null, 2) + "\n");
  writeFileSync(join(reports, "mutation.html"), buildHtml(report, viewerScript(), "mosaic-harness safety mutants"));
}

/** Prints the table and the verdict lines; returns the exit code they call for. */
function conclude(records: readonly MutantRecord[], fatal: readonly string[], out: (s: string) => void): number {
  if (records.length > 0) {
    out("");
    out(renderTable(records));
    out("");
    out(summarise(records));
  }
  const weak = listGoldenOnlyKills(records);
  if (weak.length > 0) out(`weaker evidence, killed by a golden only (no assertion names the protection): ${weak.join(", ")}`);
  const rewrote = records.filter((r) => r.verdict.kind === "killed" && (r.goldensBlessed?.length ?? 0) > 0).length;
  if (records.some((r) => r.goldensBlessed)) out(`goldens blessed away: ${rewrote} killed mutant(s) also changed a golden, and an assertion killed each anyway`);
  const blessedAway = listBlessedAway(records);
  if (blessedAway.length > 0) out(`golden only, with goldens blessed away no assertion kills them (npm run goldens:update would bless each): ${blessedAway.join(", ")}`);
  const reasons = listFailures(records);
  for (const f of fatal) out(`RUN FAILED: ${f}`);
  for (const r of reasons) out(`NOT KILLED: ${r}`);
  return fatal.length > 0 || reasons.length > 0 ? 1 : 0;
}

export async function main(argv: readonly string[], cwd: string, out: (s: string) => void = console.log): Promise<number> {
  const args = parseCliArgs(argv, cwd);
  if ("error" in args) {
    out(`${args.error}\n${USAGE}`);
    return 2;
  }
  const root = resolve(args.root);
  const catalog = loadCatalog(root);
  // Bless mode keeps its own reports, so CI's ordinary run and the bless run do not overwrite each other.
  const reports = resolve(root, ("reports" in args && args.reports) || (args.command === "run" && args.blessGoldens ? "reports/mutation-blessed" : "reports/mutation"));

  if (args.command === "list") {
    for (const m of catalog.mutants) {
      out(`${m.id} | ${m.file}:${locateMutantLine(m, catalog.tags, catalog.sites.get(m.id))} | ${m.undoes} | ${m.killedBy.join("; ")}`);
    }
    for (const p of catalog.problems) out(`CATALOG: ${p}`);
    return catalog.problems.length > 0 ? 1 : 0;
  }
  if (catalog.problems.length > 0) {
    for (const p of catalog.problems) out(`CATALOG: ${p}`);
    out("The catalog is broken: no mutant runs until it is fixed (see mutants/README.md).");
    return 1;
  }

  if (args.command === "merge") {
    const dir = join(reports, "shards");
    const partials: PartialReport[] = existsSync(dir)
      ? readdirSync(dir).filter((n) => n.endsWith(".json")).sort().map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as PartialReport)
      : [];
    const merged = mergePartials(partials, catalog.mutants.map((m) => m.id), catalog.hash);
    if (!merged.ok) {
      for (const p of merged.problems) out(`MERGE REFUSED: ${p}`);
      return 1;
    }
    const tests = new Map(partials.flatMap((p) => p.tests));
    writeFullReport(reports, root, merged.records, catalog.sources, tests);
    out(`merged ${partials.length} shard(s) into ${join(reports, "mutation.json")}`);
    return conclude(merged.records, [], out);
  }

  let selected = catalog.mutants;
  if (args.only) {
    const unknown = args.only.filter((id) => !catalog.mutants.some((m) => m.id === id));
    if (unknown.length > 0) {
      out(`--only: no mutant ${unknown.join(", ")} in the catalog`);
      return 2;
    }
    selected = selected.filter((m) => args.only!.includes(m.id));
  }
  if (args.shard) selected = selectShard(selected, args.shard);
  const sentinel = args.sentinel ? catalog.mutants.find((m) => m.id === args.sentinel) : catalog.mutants.find((m) => catalog.sites.get(m.id)?.kind === "found");
  if (!sentinel || catalog.sites.get(sentinel.id)?.kind !== "found") {
    out(args.sentinel ? `--sentinel ${args.sentinel}: no such mutant, or it is stale` : "no mutant can serve as the sentinel: every find is stale");
    return 1;
  }

  const started = performance.now();
  // Two hosts suit two cores; more hosts than mutants would only start idle vitests.
  const workers = Math.max(1, Math.min(args.workers ?? Math.min(2, availableParallelism()), selected.length));
  const run = (pool: "threads" | "forks") => {
    out(`mutants: ${selected.length} of ${catalog.mutants.length}${args.shard ? ` (shard ${args.shard.k}/${args.shard.n})` : ""}${args.only ? " (--only)" : ""}, ${workers} host(s), ${pool} pool, sentinel ${sentinel.id}${args.blessGoldens ? ", goldens blessed away (only an assertion kills)" : ""}`);
    return runMutation(catalog, {
      root,
      scratch: resolve(root, args.scratch ?? ".scratch/mut"),
      workers,
      pool,
      selected,
      sentinel,
      timeoutFloorMs: args.timeoutFloorMs,
      serialProjects: SERIAL_PROJECTS,
      blessGoldens: args.blessGoldens,
      provenReports: args.rerunSuite ? [] : PROVEN_REPORTS,
      log: out,
    });
  };
  let result = await run(args.pool ?? "threads");
  // Threads are faster, but not every test runs in a worker thread (process.chdir, or HOME for
  // os.homedir(), for two): when the suite is red under threads and no pool was asked for,
  // vitest's default forks decide.
  if (result.redBefore && args.pool === undefined) {
    for (const f of result.fatal) out(`  (threads) ${f}`);
    out("the suite is not green under the threads pool; running again under forks");
    result = await run("forks");
  }

  mkdirSync(reports, { recursive: true });
  const diffs = join(reports, "diffs");
  if (!args.shard) rmSync(diffs, { recursive: true, force: true });
  writeDiffs(diffs, catalog, selected);
  if (args.shard) {
    const partial: PartialReport = {
      kind: "mosaic-mutants-partial",
      catalogHash: catalog.hash,
      shard: args.shard,
      ids: selected.map((m) => m.id),
      records: result.records,
      tests: [...result.tests],
      sources: [...catalog.sources],
    };
    mkdirSync(join(reports, "shards"), { recursive: true });
    // A shard that failed its own checks writes no partial, so a merge cannot score it.
    if (result.fatal.length === 0) writeFileSync(join(reports, "shards", `shard-${args.shard.k}-of-${args.shard.n}.json`), JSON.stringify(partial) + "\n");
  } else if (result.records.length > 0) {
    writeFullReport(reports, root, result.records, catalog.sources, result.tests);
  }
  const code = conclude(result.records, result.fatal, out);
  const o = result.overheadMs;
  const overhead = o.length > 0 ? ` per-mutant overhead beyond test time: mean ${(o.reduce((a, b) => a + b, 0) / o.length / 1000).toFixed(2)}s, max ${(Math.max(...o) / 1000).toFixed(2)}s;` : "";
  out(`took ${((performance.now() - started) / 1000).toFixed(1)}s;${overhead} reports in ${reports}`);
  return code;
}
