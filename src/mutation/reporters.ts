// What a run leaves behind: the table and verdict lines on stdout (with the exit code they call
// for), one diff per mutant, the full JSON and HTML report, or a shard's partial report.
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyMutant, type Mutant } from "./catalog.ts";
import type { LoadedCatalog } from "./load.ts";
import {
  buildHtml,
  buildMutationReport,
  listBlessedAway,
  listFailures,
  listGoldenOnlyKills,
  renderDiff,
  renderTable,
  summarise,
  type MutantRecord,
} from "./report.ts";
import type { RunResult } from "./runner.ts";
import type { PartialReport, Shard } from "./shard.ts";

function viewerScript(): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve("mutation-testing-elements/dist/mutation-test-elements.js"), "utf8");
}

/** One `<id>.diff` per mutant whose find still matches; a whole run starts from an empty folder. */
export function writeDiffs(dir: string, catalog: LoadedCatalog, mutants: readonly Mutant[], fresh: boolean): void {
  if (fresh) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const m of mutants) {
    const site = catalog.sites.get(m.id);
    const text = catalog.sources.get(m.file);
    if (site?.kind !== "found" || text === undefined) continue;
    writeFileSync(join(dir, `${m.id}.diff`), renderDiff(m.file, text, applyMutant(m, text, site)));
  }
}

export function writeFullReport(
  reports: string,
  root: string,
  records: readonly MutantRecord[],
  sources: ReadonlyMap<string, string>,
  tests: ReadonlyMap<string, string[]>,
): void {
  const report = buildMutationReport({ records, sources, tests, projectRoot: root });
  writeFileSync(join(reports, "mutation.json"), JSON.stringify(report, null, 2) + "\n");
  writeFileSync(join(reports, "mutation.html"), buildHtml(report, viewerScript(), "mosaic-harness safety mutants"));
}

/** A shard's partial report; a shard that failed its own checks writes none, so a merge cannot score it. */
export function writeShardReport(
  reports: string,
  catalog: LoadedCatalog,
  shard: Shard,
  selected: readonly Mutant[],
  result: RunResult,
): void {
  if (result.fatal.length > 0) return;
  const partial: PartialReport = {
    kind: "mosaic-mutants-partial",
    catalogHash: catalog.hash,
    shard,
    ids: selected.map((m) => m.id),
    records: result.records,
    ...(result.blessedRecords ? { blessedRecords: result.blessedRecords } : {}),
    tests: [...result.tests],
    sources: [...catalog.sources],
  };
  mkdirSync(join(reports, "shards"), { recursive: true });
  writeFileSync(join(reports, "shards", `shard-${shard.k}-of-${shard.n}.json`), JSON.stringify(partial) + "\n");
}

/** Prints the table and the verdict lines; returns the exit code they call for. */
export function conclude(records: readonly MutantRecord[], fatal: readonly string[], out: (s: string) => void): number {
  if (records.length > 0) {
    out("");
    out(renderTable(records));
    out("");
    out(summarise(records));
  }
  const weak = listGoldenOnlyKills(records);
  if (weak.length > 0)
    out(`weaker evidence, killed by a golden only (no assertion names the protection): ${weak.join(", ")}`);
  const rewrote = records.filter((r) => r.verdict.kind === "killed" && (r.goldensBlessed?.length ?? 0) > 0).length;
  if (records.some((r) => r.goldensBlessed))
    out(`goldens blessed away: ${rewrote} killed mutant(s) also changed a golden, and an assertion killed each anyway`);
  const blessedAway = listBlessedAway(records);
  if (blessedAway.length > 0)
    out(
      `golden only, with goldens blessed away no assertion kills them (npm run goldens:update would bless each): ${blessedAway.join(", ")}`,
    );
  const reasons = listFailures(records);
  for (const f of fatal) out(`RUN FAILED: ${f}`);
  for (const r of reasons) out(`NOT KILLED: ${r}`);
  return fatal.length > 0 || reasons.length > 0 ? 1 : 0;
}

/** The closing line: wall time, per-mutant overhead beyond test time, and where the reports are. */
export function describeTiming(startedMs: number, overheadMs: readonly number[], reports: string): string {
  const o = overheadMs;
  const overhead =
    o.length > 0
      ? ` per-mutant overhead beyond test time: mean ${(o.reduce((a, b) => a + b, 0) / o.length / 1000).toFixed(2)}s, max ${(Math.max(...o) / 1000).toFixed(2)}s;`
      : "";
  return `took ${((performance.now() - startedMs) / 1000).toFixed(1)}s;${overhead} reports in ${reports}`;
}
