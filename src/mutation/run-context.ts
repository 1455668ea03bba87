// The state one mutation run shares across its phases: the tree copies and their test hosts, the
// lock for serial projects, the timing budget, the run's fatal findings, and the two moves every
// phase makes on a host (a run, with bless mode's golden restore; a mutant written and restored).
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Mutant } from "./catalog.ts";
import { writeMutant } from "./apply.ts";
import type { SpecRequest } from "./host-protocol.ts";
import { startHost, type Host, type RunReply } from "./host-pool.ts";
import { findProject } from "./killers.ts";
import type { LoadedCatalog } from "./load.ts";
import { copyTree, hashDir, readFiles, restoreFiles } from "./tree-copy.ts";
import type { RecordedLoads } from "./cache-key.ts";
import { armReads, mergeLoads, readsAreVisible, takeReads } from "./recorded-loads.ts";
import type { RunOutcome } from "./verdict.ts";

export type RunOptions = {
  root: string;
  /**
   * JUnit reports (paths under root) of a green `npm test` that may stand for the before- and
   * after-runs when their tree hash is this tree's (proven-run.ts); [] always runs the suite.
   */
  provenReports: readonly string[];
  /** Where the tree copies go (`<scratch>/<run>/<host>`); removed after a run that passed its checks. */
  scratch: string;
  workers: number;
  pool: "threads" | "forks";
  /** Mutants to run, in catalog order. */
  selected: Mutant[];
  /** The mutant every host must see killed before it runs any other. */
  sentinel: Mutant;
  /** A run may take this long beyond four times its tests' baseline time before it is a timeout. */
  timeoutFloorMs: number;
  /** Projects that run one test file at a time across all hosts (real sandboxes, real CLIs). */
  serialProjects: string[];
  /**
   * Bless mode: the hosts run with snapshot update on, so a golden mismatch is written into the
   * tree copy and passes; only an assertion can kill. The copy's goldens are restored after every
   * run; a mutant whose runs rewrote a golden and that no assertion killed is golden-only.
   */
  blessGoldens: boolean;
  /**
   * Both verdicts in one pass: the hosts run ordinary, and a mutant's test files where a golden
   * mismatched run again with goldens written (bless mode's run of them), so each mutant gets its
   * ordinary verdict and its verdict with goldens blessed away.
   */
  bothVerdicts?: boolean;
  log: (line: string) => void;
};

/**
 * The budget's guess for a test file the run before did not time (a tier file run only to hunt
 * for the test that noticed a mutant its killers missed): a live file takes up to a minute.
 */
export const UNTIMED_FILE_MS = 60_000;

/** A host's reply as an outcome; a host that died failed every test it was asked for. */
export const asOutcome = (reply: RunReply): RunOutcome | undefined =>
  reply.kind === "done"
    ? reply.outcome
    : reply.kind === "died"
      ? { tests: [], loadErrors: [], unhandled: [reply.message], wallMs: 0, fileMs: 0 }
      : undefined;

/** One lock for the serial projects: their files never run on two hosts at once. */
function makeLock(): () => Promise<() => void> {
  let tail = Promise.resolve();
  return () => {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const ready = tail;
    tail = tail.then(() => next);
    return ready.then(() => release);
  };
}

export class RunContext {
  readonly fatal: string[] = [];
  readonly hosts: Host[] = [];
  /** Each tree copy's goldens hash when it was made: a run must never change it. */
  readonly treeGoldens: string[] = [];
  readonly rootSources: ReadonlyMap<string, Buffer>;
  readonly rootGoldens: string;
  /** Short on purpose: a socket path under a tree copy has at most 107 bytes. */
  readonly runDir: string;
  readonly bless: boolean;
  readonly both: boolean;
  /** Whether a read moves a file's access time here: without it no run's loads are known. */
  readsVisible = false;
  private readonly goldenFiles: ReadonlyMap<string, Buffer>;
  private readonly configFile: string | undefined;
  private readonly lock = makeLock();
  private readonly serial: ReadonlySet<string>;
  /** Hosts killed for a timeout; each is replaced only when it is needed again. */
  private readonly dead = new Set<number>();
  private durations = new Map<string, number>();
  private readonly t0 = performance.now();

  readonly catalog: LoadedCatalog;
  readonly opts: RunOptions;

  constructor(catalog: LoadedCatalog, opts: RunOptions) {
    this.catalog = catalog;
    this.opts = opts;
    this.bless = opts.blessGoldens;
    this.both = opts.bothVerdicts === true && !opts.blessGoldens;
    this.rootGoldens = hashDir(join(opts.root, "goldens"));
    this.goldenFiles = readFiles(join(opts.root, "goldens"));
    this.rootSources = new Map([...catalog.sources].map(([f]) => [f, readFileSync(join(opts.root, f))]));
    // A live test's socket sits about 45 bytes below its tree's root.
    this.runDir = join(opts.scratch, process.pid.toString(36));
    this.configFile = existsSync(join(opts.root, "vitest.config.ts")) ? "vitest.config.ts" : undefined;
    this.serial = new Set(opts.serialProjects);
  }

  /** Seconds since the run began, for progress lines. */
  at(): string {
    return `${((performance.now() - this.t0) / 1000).toFixed(1)}s`;
  }

  log(line: string): void {
    this.opts.log(line);
  }

  /** One tree copy per worker, each with a warm test host. */
  async startHosts(workers: number): Promise<void> {
    mkdirSync(this.runDir, { recursive: true });
    this.readsVisible = readsAreVisible(this.runDir);
    if (!this.readsVisible)
      this.log("reads do not move access times on this file system: no run's loads are known, and no verdict is kept");
    for (let i = 0; i < workers; i++) {
      const tree = join(this.runDir, String(i));
      copyTree(this.opts.root, tree);
      // Every entry unread: from now on each run's reads are taken, and set unread, after it.
      if (this.readsVisible) armReads(tree);
      this.treeGoldens.push(hashDir(join(tree, "goldens")));
    }
    this.hosts.push(
      ...(await Promise.all(this.treeGoldens.map((_, i) => this.spawn(i, join(this.runDir, String(i)))))),
    );
  }

  private spawn(i: number, tree: string): Promise<Host> {
    const args = {
      root: tree,
      configFile: this.configFile && join(tree, this.configFile),
      pool: this.opts.pool,
      projects: undefined,
      update: this.bless,
    };
    return startHost(i, tree, args, join(this.runDir, `host-${i}.log`));
  }

  /** The host at index, started again on its tree if a timeout killed it. */
  async hostFor(index: number): Promise<Host> {
    if (!this.dead.has(index)) return this.hosts[index]!;
    this.dead.delete(index);
    this.hosts[index] = await this.spawn(index, this.hosts[index]!.tree);
    return this.hosts[index]!;
  }

  /** Kills a host whose run timed out; hostFor replaces it. */
  killHost(index: number): void {
    this.hosts[index]!.kill();
    this.dead.add(index);
  }

  /** The baseline's time per test file, which sets every later run's budget. */
  setDurations(durations: Map<string, number>): void {
    this.durations = durations;
  }

  private budget(files: readonly string[]): number {
    return this.opts.timeoutFloorMs + 4 * files.reduce((s, f) => s + (this.durations.get(f) ?? UNTIMED_FILE_MS), 0);
  }

  /** Puts a tree's goldens back to the checkout's; the ones that differed (after a run that wrote goldens). */
  restoreGoldens(h: Host, updated = this.bless): string[] {
    return updated ? restoreFiles(join(h.tree, "goldens"), this.goldenFiles, "goldens") : [];
  }

  /**
   * One run on a host; in bless mode, or with `update` for this run, also the goldens it rewrote,
   * already restored.
   */
  async runBlessing(
    h: Host,
    specs: SpecRequest[],
    changed: string[],
    limitMs?: number,
    update = false,
  ): Promise<{ reply: RunReply; blessed: string[]; loads?: RecordedLoads }> {
    const files = specs.map((s) => s.file);
    const release = files.some((f) => this.serial.has(findProject(h, f) ?? "")) ? await this.lock() : () => {};
    try {
      const all = [...new Set([...h.dirty, ...changed])];
      h.dirty.clear();
      const reply = await h.run(specs, all, limitMs ?? this.budget(files), update);
      // Before the goldens' restore, which reads every golden.
      const loads =
        this.readsVisible && reply.kind === "done"
          ? mergeLoads(h.tree, takeReads(h.tree), { files: reply.loaded, folders: [] })
          : undefined;
      const blessed = this.restoreGoldens(h, this.bless || update);
      // The restore read every golden: they are not the next run's loads.
      if (this.readsVisible && (this.bless || update)) armReads(join(h.tree, "goldens"));
      return { reply, blessed, ...(loads ? { loads } : {}) };
    } finally {
      release();
    }
  }

  /** A run of the unmutated tree: in bless mode a golden it rewrote means the suite was not green. */
  async runUnmutated(h: Host, specs: SpecRequest[]): Promise<RunReply> {
    const { reply, blessed } = await this.runBlessing(h, specs, []);
    if (blessed.length > 0)
      this.fatal.push(
        `host ${h.index}: the unmutated tree's run rewrote ${blessed.join(", ")}: its goldens do not match the code`,
      );
    return reply;
  }

  /** Writes m into a host's tree; the restore checks the bytes came back and marks the file for reload. */
  mutate(h: Host, m: Mutant): () => void {
    const restore = writeMutant(h.tree, this.catalog, m, this.rootSources.get(m.file)!);
    return () => {
      restore();
      h.dirty.add(m.file);
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.close()));
  }
}
