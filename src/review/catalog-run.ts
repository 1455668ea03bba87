// The golden review's catalog self-test: on copies of the tree, apply each mutant, update the
// goldens the contract tests write, review them against the checkout's, and restore. A mutant that
// changes a golden must show at least one weakens line. Reuses the mutation runner's catalog,
// selection, tree copy, mutant apply and test host; the copies' goldens are written, the checkout's never.
import { availableParallelism } from "node:os";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeMutant } from "../mutation/apply.ts";
import type { Mutant } from "../mutation/catalog.ts";
import type { SpecRequest } from "../mutation/host-protocol.ts";
import { startHost, type Host } from "../mutation/host-pool.ts";
import { loadCatalog, type LoadedCatalog } from "../mutation/load.ts";
import { selectOnly } from "../mutation/plan.ts";
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

export type CatalogRunOptions = {
  root: string;
  only: string[] | undefined;
  keep: boolean;
  workers: number | undefined;
  log: (line: string) => void;
};
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
    const host = await startHost(
      index,
      tree,
      { root: tree, configFile, pool: "threads", projects: ["contract"], update: true },
      join(tree, ".scratch", "host.log"),
    );
    return new CopyHost(tree, host);
  }

  /** An update run of the given tests; the goldens written, or why the run failed. */
  async update(specs: SpecRequest[], changed: string[]): Promise<Set<string> | string> {
    writeFileSync(this.logFile, "");
    writeFileSync(this.writersFile, "");
    const reply = await this.host.run(specs, [...new Set([...this.host.dirty, ...changed])], 300_000);
    this.host.dirty.clear();
    if (reply.kind !== "done") return reply.kind === "timeout" ? "the update run timed out" : reply.message;
    if (reply.outcome.loadErrors.length > 0)
      return `a golden writer did not load: ${reply.outcome.loadErrors.map((e) => `${e.file}: ${e.message}`).join("; ")}`;
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

  /** Writes a mutant into the copy; the returned undo restores the source (checked) and the goldens. */
  apply(root: string, catalog: LoadedCatalog, m: Mutant): () => void {
    const restore = writeMutant(this.tree, catalog, m, readFileSync(join(root, m.file)));
    return () => {
      restore();
      this.host.dirty.add(m.file);
      this.restoreGoldens(root);
    };
  }

  /** Puts the copy's goldens back to the checkout's bytes, and removes any the run added. */
  restoreGoldens(root: string): void {
    for (const p of listGoldenFiles(this.tree)) if (!existsSync(join(root, p))) rmSync(join(this.tree, p));
    for (const p of listGoldenFiles(root)) {
      const want = readFileSync(join(root, p));
      if (!existsSync(join(this.tree, p)) || !readFileSync(join(this.tree, p)).equals(want))
        writeFileSync(join(this.tree, p), want);
    }
  }
}

/**
 * The review of a copy's goldens against the checkout's. A golden the unmutated writers write but
 * this run did not is an orphan, which goldens-check would have the pull request remove.
 */
function reviewCopy(
  root: string,
  tree: string,
  written: ReadonlySet<string>,
  expected: ReadonlySet<string>,
): { report: Report; notWritten: number } {
  const byPath = new Map(readTreeGoldens(root, tree).map((p) => [p.path, p]));
  const orphans = [...expected].filter((p) => !written.has(p));
  for (const p of orphans) byPath.set(p, { path: p, before: readFileSync(join(root, p), "utf8"), after: null });
  return { report: reviewGoldens([...byPath.values()]), notWritten: orphans.length };
}

/** What the unmutated writers write: each writer file's goldens and the tests in it that write them. */
type Writers = {
  /** The writer specs whose tests load a mutant's file: only their goldens can change. */
  specsFor: (m: Mutant) => SpecRequest[];
  goldensOf: (specs: readonly SpecRequest[]) => Set<string>;
};

/** The state of one self-test run, shared by its phases. */
type Review = {
  root: string;
  catalog: LoadedCatalog;
  hosts: CopyHost[];
  fatal: string[];
  log: (line: string) => void;
  at: () => string;
};

export async function runCatalogReview(opts: CatalogRunOptions): Promise<CatalogRunResult> {
  const { root, log } = opts;
  const catalog = loadCatalog(root);
  if (catalog.problems.length > 0) return { rows: [], fatal: catalog.problems.map((p) => `catalog: ${p}`) };
  const only = selectOnly(catalog, opts.only);
  if (!only.ok) return { rows: [], fatal: [`--only: no mutant ${only.unknown.join(", ")} in the catalog`] };
  const selected = only.selected;
  const sentinel = catalog.mutants.find((m) => m.id === SENTINEL.id);
  if (!sentinel || catalog.sites.get(sentinel.id)?.kind !== "found")
    return { rows: [], fatal: [`the sentinel mutant ${SENTINEL.id} is missing or stale`] };

  const dir = join(root, ".scratch", "review-catalog", process.pid.toString(36));
  const t0 = performance.now();
  const run: Review = {
    root,
    catalog,
    hosts: [],
    fatal: [],
    log,
    at: () => `${((performance.now() - t0) / 1000).toFixed(1)}s`,
  };
  const savedEnv = { log: process.env[GOLDEN_LOG_ENV], writers: process.env[WRITERS_ENV] };
  let rows: CatalogRow[] = [];
  try {
    rows = await reviewPhases(run, dir, selected, sentinel, opts.workers);
  } catch (e) {
    run.fatal.push(`the catalog review failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    await Promise.all(run.hosts.map((h) => h.host.close()));
    for (const [k, v] of [
      [GOLDEN_LOG_ENV, savedEnv.log],
      [WRITERS_ENV, savedEnv.writers],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    if (run.fatal.length === 0 && !opts.keep) rmSync(dir, { recursive: true, force: true });
    else log(`tree copies kept for inspection: ${dir}`);
  }
  return { rows, fatal: run.fatal };
}

/** Copies, the unmutated writers, the sentinel, every mutant, and the checks after; each phase only when the last held. */
async function reviewPhases(
  run: Review,
  dir: string,
  selected: readonly Mutant[],
  sentinel: Mutant,
  workersAsked: number | undefined,
): Promise<CatalogRow[]> {
  const checkoutGoldens = hashDir(join(run.root, "goldens"));
  const files = listGoldenWriterFiles(run.root);
  const workers = Math.max(1, Math.min(workersAsked ?? Math.min(2, availableParallelism()), selected.length));
  // Each copy's tests log the goldens they write into that copy (vitest's globalSetup sets the log).
  delete process.env[GOLDEN_LOG_ENV];
  for (let i = 0; i < workers; i++) run.hosts.push(await CopyHost.start(run.root, i, dir));
  run.log(
    `${run.at()} ${run.hosts.length} tree cop${run.hosts.length === 1 ? "y" : "ies"} under ${dir}; golden writers: ${files.join(", ")}`,
  );
  const writers = await learnWriters(run, files);
  if (typeof writers === "string") {
    run.fatal.push(writers);
    return [];
  }
  const problem = await proveSentinel(run, sentinel, writers);
  if (problem !== null) {
    run.fatal.push(problem);
    return [];
  }
  const rows = await reviewQueue(run, selected, writers);
  await checkAfter(run, files, checkoutGoldens);
  return rows;
}

/**
 * Before: each writer file alone, unmutated, writes the checkout's goldens; this also learns which
 * goldens each file writes and which of its tests write them (one file a run: no attribution race).
 */
async function learnWriters(run: Review, files: readonly string[]): Promise<Writers | string> {
  const h0 = run.hosts[0]!;
  const perFile = new Map<string, { goldens: Set<string>; spec: SpecRequest }>();
  for (const file of files) {
    const w = await h0.update([{ file }], []);
    if (typeof w === "string") return `the unmutated update run of ${file} failed: ${w}`;
    const spec = h0.writerSpecs().find((sp) => sp.file === file);
    if (w.size > 0 && spec) perFile.set(file, { goldens: w, spec });
  }
  const drift = readTreeGoldens(run.root, h0.tree).map((p) => p.path);
  if (drift.length > 0)
    return `the checkout's goldens are not what its tests write (run npm run goldens:update): ${drift.join(", ")}`;
  const specs = [...perFile.values()].map((x) => x.spec);
  const expected = new Set([...perFile.values()].flatMap((x) => [...x.goldens]));
  run.log(
    `${run.at()} before: the unmutated update writes the checkout's ${expected.size} goldens, from ${specs.reduce((n, x) => n + (x.names?.length ?? 0), 0)} tests in ${specs.length} files`,
  );
  // A mutant can change only the goldens of the tests that load its file: run just those.
  const loads = new Map(specs.map((sp) => [sp.file, new Set(importGraph([join(run.root, sp.file)]).files)]));
  return {
    specsFor: (m) => specs.filter((sp) => loads.get(sp.file)!.has(join(run.root, m.file))),
    goldensOf: (sps) => new Set(sps.flatMap((sp) => [...perFile.get(sp.file)!.goldens])),
  };
}

/** The sentinel on every host: its goldens change and its rule fires, so updates reach the goldens. Null when it held. */
async function proveSentinel(run: Review, sentinel: Mutant, writers: Writers): Promise<string | null> {
  const specs = writers.specsFor(sentinel);
  for (const h of run.hosts) {
    const undo = h.apply(run.root, run.catalog, sentinel);
    const written = await h.update(specs, [sentinel.file]);
    const hit = typeof written === "string" ? written : reviewCopy(run.root, h.tree, written, writers.goldensOf(specs));
    undo();
    if (typeof hit === "string" || !hit.report.findings.some((f) => f.rule === SENTINEL.rule)) {
      return `host ${h.host.index}: the sentinel ${SENTINEL.id} did not show ${SENTINEL.rule}: the update does not reach the goldens (${typeof hit === "string" ? hit : `${hit.report.goldens.length} goldens changed`})`;
    }
  }
  run.log(`${run.at()} sentinel ${SENTINEL.id}: ${SENTINEL.rule} shown and restored on ${run.hosts.length} host(s)`);
  return null;
}

/** Every selected mutant's row, in catalog order; a run that failed leaves a fatal line and no row. */
async function reviewQueue(run: Review, selected: readonly Mutant[], writers: Writers): Promise<CatalogRow[]> {
  const queue = [...selected];
  const done = new Map<string, CatalogRow>();
  let finished = 0;
  await Promise.all(
    run.hosts.map(async (h) => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        const row = await reviewMutant(run, h, m, writers);
        if (typeof row === "string") {
          run.fatal.push(`${m.id}: ${row}`);
          run.log(`[${++finished}/${selected.length}] ${m.id}: RUN FAILED: ${row}`);
          continue;
        }
        done.set(m.id, row);
        run.log(
          `[${++finished}/${selected.length}] ${m.id}: ${labelOutcome(row.outcome)} (${row.goldensChanged} goldens, ${row.report.counts.weakens} weakens, ${row.seconds.toFixed(2)}s)`,
        );
      }
    }),
  );
  return selected.flatMap((m) => (done.has(m.id) ? [done.get(m.id)!] : []));
}

/** One mutant's row, or why its update run failed. */
async function reviewMutant(run: Review, h: CopyHost, m: Mutant, writers: Writers): Promise<CatalogRow | string> {
  const start = performance.now();
  const site = run.catalog.sites.get(m.id);
  const mine = writers.specsFor(m);
  const none = { goldensChanged: 0, notWritten: 0, report: reviewGoldens([]), seconds: 0 };
  if (site?.kind !== "found")
    return { id: m.id, ...none, outcome: { kind: "stale", why: site?.kind === "stale" ? site.why : "stale" } };
  if (mine.length === 0)
    return { id: m.id, ...none, outcome: { kind: "no-golden-change", why: `no golden-writing test loads ${m.file}` } };
  const undo = h.apply(run.root, run.catalog, m);
  let written: Set<string> | string;
  let reviewed: { report: Report; notWritten: number } | null = null;
  try {
    written = await h.update(mine, [m.file]);
    // Only the goldens of the tests that ran can be orphaned by this mutant.
    if (typeof written !== "string") reviewed = reviewCopy(run.root, h.tree, written, writers.goldensOf(mine));
  } finally {
    undo();
  }
  if (reviewed === null) return String(written);
  const { report, notWritten } = reviewed;
  return {
    id: m.id,
    goldensChanged: report.goldens.length,
    notWritten,
    report,
    outcome: judgeMutant(m.id, report),
    seconds: (performance.now() - start) / 1000,
  };
}

/** After: each copy writes the checkout's goldens again, and the checkout's goldens never moved. */
async function checkAfter(run: Review, files: readonly string[], checkoutGoldens: string): Promise<void> {
  for (const h of run.hosts) {
    const after = await h.update(
      files.map((file) => ({ file })),
      [],
    );
    const drift = typeof after === "string" ? [after] : readTreeGoldens(run.root, h.tree).map((p) => p.path);
    if (drift.length > 0)
      run.fatal.push(
        `host ${h.host.index}: after the run the unmutated copy no longer writes the checkout's goldens: ${drift.join(", ")}`,
      );
  }
  if (hashDir(join(run.root, "goldens")) !== checkoutGoldens)
    run.fatal.push("the checkout's goldens/ changed during the run");
  if (run.fatal.length === 0) run.log(`${run.at()} after: every copy writes the checkout's goldens again`);
}
