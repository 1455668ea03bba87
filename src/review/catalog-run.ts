// The golden review's catalog self-test: on copies of the tree, apply each mutant, update the
// goldens the contract tests write, review them against the checkout's, and restore. A mutant that
// changes a golden must show at least one weakens line. Reuses the mutation runner's catalog,
// tree copy and test host; the copies' goldens are written, the checkout's never.
import { availableParallelism } from "node:os";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyMutant, type Mutant } from "../mutation/catalog.ts";
import type { SpecRequest } from "../mutation/host-protocol.ts";
import { startHost, type Host } from "../mutation/host-pool.ts";
import { loadCatalog, type LoadedCatalog } from "../mutation/load.ts";
import { copyTree, hashDir } from "../mutation/tree-copy.ts";
import { GOLDEN_LOG_ENV } from "../conformance/golden/golden.ts";
import { importGraph } from "../host/import-graph.ts";
import { reviewGoldens, type Report } from "./classify.ts";
import { judgeMutant, labelOutcome, type CatalogRow } from "./catalog-verdict.ts";
import { listGoldenFiles, readTreeGoldens } from "./git-goldens.ts";

/** The positive control: this mutant must change goldens and fire this rule on every host, or the setup is broken. */
export const SENTINEL = { id: "no-remount-ro", rule: "remount-ro-removed" } as const;

/** Where the soft-expect setup records the tests that write a golden. */
const WRITERS_ENV = "MOSAIC_REVIEW_WRITERS";

export type CatalogRunOptions = { root: string; only: string[] | undefined; keep: boolean; workers: number | undefined; log: (line: string) => void };
export type CatalogRunResult = { rows: CatalogRow[]; fatal: string[] };

/** Contract test files that write goldens, except the review's own (mutants do not reach them). */
function listGoldenWriterFiles(root: string): string[] {
  return readdirSync(join(root, "contract"))
    .filter((n) => n.endsWith(".test.ts") && n !== "review.test.ts")
    .filter((n) => readFileSync(join(root, "contract", n), "utf8").includes("matchGolden("))
    .map((n) => `contract/${n}`)
    .sort();
}

/** The copy's vitest config: the project's, with the soft-expect setup on the contract project. */
function writeCopyConfig(tree: string): string {
  const file = join(tree, ".scratch", "review-catalog.config.ts");
  mkdirSync(join(tree, ".scratch"), { recursive: true });
  writeFileSync(
    file,
    `// Written by the golden review's catalog self-test into its own tree copy.
import base from ${JSON.stringify("../vitest.config.ts")};
const soft = new URL("../src/review/catalog-soft-expect.ts", import.meta.url).pathname;
const projects = (base.test?.projects ?? []).map((p) => {
  const q = p as { test?: { name?: string; setupFiles?: string[] } };
  return q.test?.name === "contract" ? { ...q, test: { ...q.test, setupFiles: [...(q.test.setupFiles ?? []), soft] } } : p;
});
export default { ...base, test: { ...base.test, projects } };
`,
  );
  return file;
}

const readLines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

/** One tree copy with its test host, and the moves the self-test makes on it. */
class CopyHost {
  readonly tree: string;
  readonly host: Host;
  private readonly logFile: string;
  private readonly writersFile: string;
  constructor(tree: string, host: Host) {
    this.tree = tree;
    this.host = host;
    this.logFile = join(tree, ".scratch", "golden-log.txt");
    this.writersFile = join(tree, ".scratch", "golden-writers.txt");
  }

  static async start(root: string, index: number, dir: string): Promise<CopyHost> {
    const tree = join(dir, String(index));
    copyTree(root, tree);
    const configFile = writeCopyConfig(tree);
    // The host inherits this process's environment: the writers file is this copy's.
    process.env[WRITERS_ENV] = join(tree, ".scratch", "golden-writers.txt");
    const host = await startHost(index, tree, { root: tree, configFile, pool: "threads", projects: ["contract"], update: true }, join(tree, ".scratch", "host.log"));
    return new CopyHost(tree, host);
  }

  /** An update run of the given tests; the goldens written, or why the run failed. */
  async update(specs: SpecRequest[], changed: string[]): Promise<Set<string> | string> {
    writeFileSync(this.logFile, "");
    writeFileSync(this.writersFile, "");
    const reply = await this.host.run(specs, [...new Set([...this.host.dirty, ...changed])], 300_000);
    this.host.dirty.clear();
    if (reply.kind !== "done") return reply.kind === "timeout" ? "the update run timed out" : reply.message;
    if (reply.outcome.loadErrors.length > 0) return `a golden writer did not load: ${reply.outcome.loadErrors.map((e) => `${e.file}: ${e.message}`).join("; ")}`;
    return new Set(readLines(this.logFile));
  }

  /** The tests that wrote a golden in the last run, as spec requests by file. */
  writerSpecs(): SpecRequest[] {
    const byFile = new Map<string, string[]>();
    for (const line of readLines(this.writersFile)) {
      const [file, name] = line.split("\0") as [string, string];
      byFile.set(file, [...new Set([...(byFile.get(file) ?? []), name])]);
    }
    return [...byFile].sort().map(([file, names]) => ({ file, names }));
  }

  /** Writes a mutant into the copy; the returned undo restores the source and the goldens. */
  apply(root: string, catalog: LoadedCatalog, m: Mutant): () => void {
    const site = catalog.sites.get(m.id)!;
    if (site.kind !== "found") throw new Error(`${m.id} is stale`);
    const path = join(this.tree, m.file);
    const original = readFileSync(join(root, m.file));
    writeFileSync(path, applyMutant(m, catalog.sources.get(m.file)!, site));
    return () => {
      writeFileSync(path, original);
      this.host.dirty.add(m.file);
      this.restoreGoldens(root);
    };
  }

  /** Puts the copy's goldens back to the checkout's bytes, and removes any the run added. */
  restoreGoldens(root: string): void {
    for (const p of listGoldenFiles(this.tree)) if (!existsSync(join(root, p))) rmSync(join(this.tree, p));
    for (const p of listGoldenFiles(root)) {
      const want = readFileSync(join(root, p));
      if (!existsSync(join(this.tree, p)) || !readFileSync(join(this.tree, p)).equals(want)) writeFileSync(join(this.tree, p), want);
    }
  }
}

/**
 * The review of a copy's goldens against the checkout's. A golden the unmutated writers write but
 * this run did not is an orphan, which goldens-check would have the pull request remove.
 */
function reviewCopy(root: string, tree: string, written: ReadonlySet<string>, expected: ReadonlySet<string>): { report: Report; notWritten: number } {
  const byPath = new Map(readTreeGoldens(root, tree).map((p) => [p.path, p]));
  const orphans = [...expected].filter((p) => !written.has(p));
  for (const p of orphans) byPath.set(p, { path: p, before: readFileSync(join(root, p), "utf8"), after: null });
  return { report: reviewGoldens([...byPath.values()]), notWritten: orphans.length };
}

export async function runCatalogReview(opts: CatalogRunOptions): Promise<CatalogRunResult> {
  const { root, log } = opts;
  const fatal: string[] = [];
  const catalog = loadCatalog(root);
  if (catalog.problems.length > 0) return { rows: [], fatal: catalog.problems.map((p) => `catalog: ${p}`) };
  const unknownIds = (opts.only ?? []).filter((id) => !catalog.mutants.some((m) => m.id === id));
  if (unknownIds.length > 0) return { rows: [], fatal: [`--only: no mutant ${unknownIds.join(", ")} in the catalog`] };
  const selected = opts.only ? catalog.mutants.filter((m) => opts.only!.includes(m.id)) : catalog.mutants;
  const sentinel = catalog.mutants.find((m) => m.id === SENTINEL.id);
  if (!sentinel || catalog.sites.get(sentinel.id)?.kind !== "found") return { rows: [], fatal: [`the sentinel mutant ${SENTINEL.id} is missing or stale`] };

  const checkoutGoldens = hashDir(join(root, "goldens"));
  const dir = join(root, ".scratch", "review-catalog", process.pid.toString(36));
  const files = listGoldenWriterFiles(root);
  const workers = Math.max(1, Math.min(opts.workers ?? Math.min(2, availableParallelism()), selected.length));
  const t0 = performance.now();
  const at = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`;
  const hosts: CopyHost[] = [];
  const done = new Map<string, CatalogRow>();
  const savedEnv = { log: process.env[GOLDEN_LOG_ENV], writers: process.env[WRITERS_ENV] };
  try {
    // Each copy's tests log the goldens they write into that copy (vitest's globalSetup sets the log).
    delete process.env[GOLDEN_LOG_ENV];
    for (let i = 0; i < workers; i++) hosts.push(await CopyHost.start(root, i, dir));
    log(`${at()} ${hosts.length} tree cop${hosts.length === 1 ? "y" : "ies"} under ${dir}; golden writers: ${files.join(", ")}`);

    // Before: each writer file alone, unmutated, writes the checkout's goldens; this also learns which
    // goldens each file writes and which of its tests write them (one file a run: no attribution race).
    const h0 = hosts[0]!;
    const perFile = new Map<string, { goldens: Set<string>; spec: SpecRequest }>();
    for (const file of files) {
      const w = await h0.update([{ file }], []);
      if (typeof w === "string") return { rows: [], fatal: [`the unmutated update run of ${file} failed: ${w}`] };
      const spec = h0.writerSpecs().find((sp) => sp.file === file);
      if (w.size > 0 && spec) perFile.set(file, { goldens: w, spec });
    }
    const drift = readTreeGoldens(root, h0.tree).map((p) => p.path);
    if (drift.length > 0) return { rows: [], fatal: [`the checkout's goldens are not what its tests write (run npm run goldens:update): ${drift.join(", ")}`] };
    const specs = [...perFile.values()].map((x) => x.spec);
    const expected = new Set([...perFile.values()].flatMap((x) => [...x.goldens]));
    log(`${at()} before: the unmutated update writes the checkout's ${expected.size} goldens, from ${specs.reduce((n, x) => n + (x.names?.length ?? 0), 0)} tests in ${specs.length} files`);
    // A mutant can change only the goldens of the tests that load its file: run just those.
    const loads = new Map(specs.map((sp) => [sp.file, new Set(importGraph([join(root, sp.file)]).files)]));
    const specsFor = (m: Mutant) => specs.filter((sp) => loads.get(sp.file)!.has(join(root, m.file)));
    const goldensOf = (sps: readonly SpecRequest[]) => new Set(sps.flatMap((sp) => [...perFile.get(sp.file)!.goldens]));

    // The sentinel on every host: its goldens change and its rule fires, so updates reach the goldens.
    for (const h of hosts) {
      const undo = h.apply(root, catalog, sentinel);
      const written = await h.update(specsFor(sentinel), [sentinel.file]);
      const hit = typeof written === "string" ? written : reviewCopy(root, h.tree, written, goldensOf(specsFor(sentinel)));
      undo();
      if (typeof hit === "string" || !hit.report.findings.some((f) => f.rule === SENTINEL.rule)) {
        return { rows: [], fatal: [`host ${h.host.index}: the sentinel ${SENTINEL.id} did not show ${SENTINEL.rule}: the update does not reach the goldens (${typeof hit === "string" ? hit : `${hit.report.goldens.length} goldens changed`})`] };
      }
    }
    log(`${at()} sentinel ${SENTINEL.id}: ${SENTINEL.rule} shown and restored on ${hosts.length} host(s)`);

    const queue = [...selected];
    let finished = 0;
    await Promise.all(
      hosts.map(async (h) => {
        for (let m = queue.shift(); m; m = queue.shift()) {
          const start = performance.now();
          const site = catalog.sites.get(m.id);
          let row: CatalogRow;
          const mine = specsFor(m);
          if (site?.kind !== "found") {
            const why = site?.kind === "stale" ? site.why : "stale";
            row = { id: m.id, goldensChanged: 0, notWritten: 0, report: reviewGoldens([]), outcome: { kind: "stale", why }, seconds: 0 };
          } else if (mine.length === 0) {
            row = { id: m.id, goldensChanged: 0, notWritten: 0, report: reviewGoldens([]), outcome: { kind: "no-golden-change", why: `no golden-writing test loads ${m.file}` }, seconds: 0 };
          } else {
            const undo = h.apply(root, catalog, m);
            let written: Set<string> | string;
            let reviewed: { report: Report; notWritten: number } | null = null;
            try {
              written = await h.update(mine, [m.file]);
              // Only the goldens of the tests that ran can be orphaned by this mutant.
              if (typeof written !== "string") reviewed = reviewCopy(root, h.tree, written, goldensOf(mine));
            } finally {
              undo();
            }
            if (reviewed === null) {
              fatal.push(`${m.id}: ${written}`);
              log(`[${++finished}/${selected.length}] ${m.id}: RUN FAILED: ${written}`);
              continue;
            }
            const { report, notWritten } = reviewed;
            row = { id: m.id, goldensChanged: report.goldens.length, notWritten, report, outcome: judgeMutant(m.id, report), seconds: (performance.now() - start) / 1000 };
          }
          done.set(m.id, row);
          log(`[${++finished}/${selected.length}] ${m.id}: ${labelOutcome(row.outcome)} (${row.goldensChanged} goldens, ${row.report.counts.weakens} weakens, ${row.seconds.toFixed(2)}s)`);
        }
      }),
    );

    // After: each copy writes the checkout's goldens again, and the checkout's goldens never moved.
    for (const h of hosts) {
      const after = await h.update(files.map((file) => ({ file })), []);
      const drift = typeof after === "string" ? [after] : readTreeGoldens(root, h.tree).map((p) => p.path);
      if (drift.length > 0) fatal.push(`host ${h.host.index}: after the run the unmutated copy no longer writes the checkout's goldens: ${drift.join(", ")}`);
    }
    if (hashDir(join(root, "goldens")) !== checkoutGoldens) fatal.push("the checkout's goldens/ changed during the run");
    if (fatal.length === 0) log(`${at()} after: every copy writes the checkout's goldens again`);
  } catch (e) {
    fatal.push(`the catalog review failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  } finally {
    await Promise.all(hosts.map((h) => h.host.close()));
    for (const [k, v] of [[GOLDEN_LOG_ENV, savedEnv.log], [WRITERS_ENV, savedEnv.writers]] as const) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    if (fatal.length === 0 && !opts.keep) rmSync(dir, { recursive: true, force: true });
    else log(`tree copies kept for inspection: ${dir}`);
  }
  return { rows: selected.flatMap((m) => (done.has(m.id) ? [done.get(m.id)!] : [])), fatal };
}
