// The mutation run: copies of the tree (tree-copy.ts), one test host per copy, the before/after checks, and each
// mutant applied, tested and restored byte for byte. Verdicts come from verdict.ts; this file
// only moves files and messages.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyMutant, parseTestRef, type Mutant } from "./catalog.ts";
import type { SpecRequest } from "./host-protocol.ts";
import { startHost, type Host, type RunReply } from "./host-pool.ts";
import { readProvenRun } from "./proven-run.ts";
import { copyTree, hashDir, readFiles, restoreFiles } from "./tree-copy.ts";
import { locateMutantLine, type LoadedCatalog } from "./load.ts";
import type { MutantRecord } from "./report.ts";
import { classifyMutant, findExpectedKills, needsTierRun, labelVerdict, type RunOutcome, type Verdict } from "./verdict.ts";

/**
 * How long the run before any mutant may take: every tier the catalog's killers live in, the whole
 * live tier included (about 10 minutes on a loaded 2-core machine, its attack table touching
 * gigabytes of memory page by page). Past it the run is broken, not a mutant's timeout.
 */
const BASELINE_LIMIT_MS = 30 * 60_000;

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
  log: (line: string) => void;
};

export type RunResult = {
  records: MutantRecord[];
  /** Problems that make the whole run untrustworthy, whatever the verdicts. */
  fatal: string[];
  /** Every test in the tiers run, by test file, from the baseline. */
  tests: Map<string, string[]>;
  overheadMs: number[];
  /** The suite was not green before any mutant: no verdict was reached. */
  redBefore: boolean;
};

/** The expected killers as spec requests, one per test file. */
function specifyKillers(m: Mutant): SpecRequest[] {
  const byFile = new Map<string, string[]>();
  for (const k of m.killedBy) {
    const ref = parseTestRef(k);
    byFile.set(ref.file, [...(byFile.get(ref.file) ?? []), ref.name]);
  }
  return [...byFile].map(([file, names]) => ({ file, names }));
}

function findProject(host: Host, file: string): string | undefined {
  return host.projects.find((p) => p.files.includes(file))?.name;
}

function listTierFiles(host: Host, m: Mutant): string[] {
  const tiers = new Set(specifyKillers(m).map((s) => findProject(host, s.file)).filter((p): p is string => p !== undefined));
  return host.projects.filter((p) => tiers.has(p.name)).flatMap((p) => p.files);
}

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

const asOutcome = (reply: RunReply): RunOutcome | undefined =>
  reply.kind === "done" ? reply.outcome : reply.kind === "died" ? { tests: [], loadErrors: [], unhandled: [reply.message], wallMs: 0, fileMs: 0 } : undefined;

export async function runMutation(catalog: LoadedCatalog, opts: RunOptions): Promise<RunResult> {
  const fatal: string[] = [];
  const records: MutantRecord[] = [];
  const overheadMs: number[] = [];
  const tests = new Map<string, string[]>();
  const rootGoldens = hashDir(join(opts.root, "goldens"));
  const goldenFiles = readFiles(join(opts.root, "goldens"));
  const bless = opts.blessGoldens;
  const rootSources = new Map([...catalog.sources].map(([f]) => [f, readFileSync(join(opts.root, f))]));
  // Short on purpose: tests bind Unix sockets under the tree copy, and a socket path has at most
  // 107 bytes (a live test's socket sits about 45 bytes below its tree's root).
  const runDir = join(opts.scratch, process.pid.toString(36));
  const configFile = existsSync(join(opts.root, "vitest.config.ts")) ? "vitest.config.ts" : undefined;
  const workers = Math.max(1, Math.min(opts.workers, opts.selected.length));
  const hosts: Host[] = [];
  const treeGoldens: string[] = [];
  const t0 = performance.now();
  const at = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`;

  const spawn = async (i: number, tree: string) =>
    startHost(i, tree, { root: tree, configFile: configFile && join(tree, configFile), pool: opts.pool, projects: undefined, update: bless }, join(runDir, `host-${i}.log`));

  try {
    mkdirSync(runDir, { recursive: true });
    for (let i = 0; i < workers; i++) {
      const tree = join(runDir, String(i));
      copyTree(opts.root, tree);
      treeGoldens.push(hashDir(join(tree, "goldens")));
    }
    hosts.push(...(await Promise.all(treeGoldens.map((_, i) => spawn(i, join(runDir, String(i)))))));
    opts.log(`${at()} ${hosts.length} test host(s) ready on tree copies in ${runDir}`);

    // Every killer must be a test file of some project, and every tier the catalog uses runs green first.
    const h0 = hosts[0]!;
    const allKillers = [...opts.selected, opts.sentinel];
    for (const m of allKillers) for (const s of specifyKillers(m)) if (!findProject(h0, s.file)) fatal.push(`${m.id}: killedBy file ${s.file} is not a test file of any vitest project`);
    if (fatal.length > 0) return { records, fatal, tests, overheadMs, redBefore: false };
    const baselineFiles = [...new Set(allKillers.flatMap((m) => listTierFiles(h0, m)))].sort();
    // The other hosts load the sentinel's tests while host 0 runs the baseline.
    const sentinelSpecs = specifyKillers(opts.sentinel);
    const warmups = new Map(hosts.slice(1).map((h) => [h.index, h.run(sentinelSpecs, [], BASELINE_LIMIT_MS)]));
    // A green `npm test` on this very tree stands for the before-run, and the byte checks below for the after-run.
    const proven = opts.provenReports.length > 0 ? readProvenRun(opts.root, opts.provenReports, baselineFiles) : { kind: "unproven" as const, why: "no report offered" };
    if (proven.kind === "proven") opts.log(`${at()} before: taken from ${proven.reports.join(", ")}, a green run of this tree byte for byte (its sha256 beside each report)`);
    else if (opts.provenReports.length > 0) opts.log(`${at()} before: running the suite: ${proven.why}`);
    const base = proven.kind === "proven" ? proven.outcome : asOutcome(await h0.run(baselineFiles.map((file) => ({ file })), [], BASELINE_LIMIT_MS));
    const baseBlessed = bless ? restoreFiles(join(h0.tree, "goldens"), goldenFiles, "goldens") : [];
    if (baseBlessed.length > 0) {
      fatal.push(`the suite is not green before the run: it rewrote ${baseBlessed.join(", ")}, which do not match the unmutated code`);
      return { records, fatal, tests, overheadMs, redBefore: false };
    }
    if (!base) {
      fatal.push("the baseline run (the suite before any mutant) did not finish");
      return { records, fatal, tests, overheadMs, redBefore: true };
    }
    const red = [...base.loadErrors.map((e) => `${e.file}: ${e.message}`), ...base.unhandled, ...base.tests.filter((t) => t.state === "failed").map((t) => `${t.test}: ${t.failure?.message}`)];
    if (red.length > 0) {
      fatal.push(`the suite is not green before the run (${opts.pool} pool):`, ...red.map((r) => `  ${r}`));
      return { records, fatal, tests, overheadMs, redBefore: true };
    }
    opts.log(`${at()} before: ${base.tests.filter((t) => t.state === "passed").length} tests of ${baselineFiles.length} files green`);
    const durations = new Map<string, number>();
    for (const t of base.tests) {
      const file = parseTestRef(t.test).file;
      tests.set(file, [...(tests.get(file) ?? []), t.test]);
      durations.set(file, (durations.get(file) ?? 0) + t.durationMs);
    }
    const known = new Set(base.tests.filter((t) => t.state === "passed").map((t) => t.test));
    for (const k of new Set(allKillers.flatMap((m) => m.killedBy.map((k) => `${m.id}\0${k}`)))) {
      const [id, name] = k.split("\0") as [string, string];
      if (!known.has(name)) fatal.push(`${id}: killedBy names "${name}", which is not a passing test of the suite`);
    }
    if (fatal.length > 0) return { records, fatal, tests, overheadMs, redBefore: false };
    const budget = (files: readonly string[]) => opts.timeoutFloorMs + 4 * files.reduce((s, f) => s + (durations.get(f) ?? 0), 0);
    const lock = makeLock();
    const serial = new Set(opts.serialProjects);
    const isSerial = (h: Host, files: readonly string[]) => files.some((f) => serial.has(findProject(h, f) ?? ""));

    /** Writes the mutant into a host's tree; returns a restore that checks the bytes came back. */
    const mutate = (h: Host, m: Mutant): (() => void) => {
      const site = catalog.sites.get(m.id)!;
      if (site.kind !== "found") throw new Error(`${m.id} is stale`);
      const path = join(h.tree, m.file);
      const original = rootSources.get(m.file)!;
      if (!readFileSync(path).equals(original)) throw new Error(`${h.tree}/${m.file} differs from the checkout before ${m.id}: an earlier restore failed`);
      writeFileSync(path, applyMutant(m, catalog.sources.get(m.file)!, site));
      return () => {
        writeFileSync(path, original);
        if (!readFileSync(path).equals(original)) throw new Error(`restoring ${m.file} after ${m.id} did not give back the original bytes`);
        h.dirty.add(m.file);
      };
    };

    /** One run on a host; in bless mode also the goldens it rewrote, already restored. */
    const runBlessing = async (h: Host, specs: SpecRequest[], changed: string[]): Promise<{ reply: RunReply; blessed: string[] }> => {
      const files = specs.map((s) => s.file);
      const release = isSerial(h, files) ? await lock() : () => {};
      try {
        const all = [...new Set([...h.dirty, ...changed])];
        h.dirty.clear();
        const reply = await h.run(specs, all, budget(files));
        return { reply, blessed: bless ? restoreFiles(join(h.tree, "goldens"), goldenFiles, "goldens") : [] };
      } finally {
        release();
      }
    };
    /** A run of the unmutated tree: in bless mode a golden it rewrote means the suite was not green. */
    const runOn = async (h: Host, specs: SpecRequest[], changed: string[]): Promise<RunReply> => {
      const { reply, blessed } = await runBlessing(h, specs, changed);
      if (blessed.length > 0) fatal.push(`host ${h.index}: the unmutated tree's run rewrote ${blessed.join(", ")}: its goldens do not match the code`);
      return reply;
    };

    /** Hosts killed for a timeout; each is replaced only when it is needed again. */
    const dead = new Set<number>();
    const hostFor = async (index: number): Promise<Host> => {
      if (!dead.has(index)) return hosts[index]!;
      dead.delete(index);
      hosts[index] = await spawn(index, hosts[index]!.tree);
      return hosts[index]!;
    };

    // The sentinel, on every host: its tests pass, fail once it is applied, and pass again once it
    // is restored. A host serving a cached module fails one of the three.
    await Promise.all(
      hosts.map(async (h) => {
        // Host 0's baseline already loaded the sentinel's tests; the others load them here.
        if (h.index !== 0) {
          const warm = asOutcome(await warmups.get(h.index)!);
          if (bless && restoreFiles(join(h.tree, "goldens"), goldenFiles, "goldens").length > 0) {
            fatal.push(`host ${h.index}: the sentinel ${opts.sentinel.id}'s tests rewrote goldens on the unmutated tree`);
            return;
          }
          if (!warm || warm.tests.some((t) => t.state === "failed") || warm.loadErrors.length > 0) {
            fatal.push(`host ${h.index}: the sentinel ${opts.sentinel.id}'s tests do not pass on the unmutated tree`);
            return;
          }
        }
        const restore = mutate(h, opts.sentinel);
        const hit = asOutcome((await runBlessing(h, sentinelSpecs, [opts.sentinel.file])).reply);
        restore();
        if (!hit || findExpectedKills(opts.sentinel.killedBy, hit, bless).length === 0) {
          fatal.push(`host ${h.index}: the sentinel ${opts.sentinel.id} was not killed: mutations do not reach the tests (a stale module?) or its test no longer asks`);
          return;
        }
        const back = asOutcome(await runOn(h, sentinelSpecs, []));
        if (!back || back.tests.some((t) => t.state === "failed") || back.loadErrors.length > 0) {
          fatal.push(`host ${h.index}: after restoring the sentinel ${opts.sentinel.id} its tests still fail: the restored code does not reach the tests`);
        }
      }),
    );
    if (fatal.length > 0) return { records, fatal, tests, overheadMs, redBefore: false };
    opts.log(`${at()} sentinel ${opts.sentinel.id}: killed and restored on ${hosts.length} host(s)`);

    const queue = [...opts.selected];
    const done = new Map<string, MutantRecord>();
    let finished = 0;
    const total = opts.selected.length;

    const runMutant = async (index: number, m: Mutant): Promise<MutantRecord> => {
      const site = catalog.sites.get(m.id)!;
      const line = locateMutantLine(m, catalog.tags, site);
      if (site.kind === "stale") return { mutant: m, line, site, verdict: { kind: "stale", why: site.why }, seconds: 0, testsRun: [] };
      const h = await hostFor(index);
      const start = performance.now();
      const restore = mutate(h, m);
      let timedOut: "killers" | "tier" | undefined;
      let killers: RunOutcome | undefined;
      let tier: RunOutcome | undefined;
      const blessed = new Set<string>();
      try {
        const first = await runBlessing(h, specifyKillers(m), [m.file]);
        first.blessed.forEach((g) => blessed.add(g));
        killers = asOutcome(first.reply);
        if (!killers) timedOut = "killers";
        else if (needsTierRun(m.killedBy, killers, false, bless)) {
          const rest = await runBlessing(h, listTierFiles(h, m).map((file) => ({ file })), []);
          rest.blessed.forEach((g) => blessed.add(g));
          tier = asOutcome(rest.reply);
          if (!tier) timedOut = "tier";
        }
      } finally {
        restore();
      }
      if (timedOut) {
        h.kill();
        dead.add(index);
      }
      const seconds = (performance.now() - start) / 1000;
      const empty: RunOutcome = { tests: [], loadErrors: [], unhandled: [], wallMs: 0, fileMs: 0 };
      const verdict: Verdict = classifyMutant(m.killedBy, killers ?? empty, tier, timedOut, bless ? { goldensWritten: [...blessed] } : undefined);
      const ran = [...(killers?.tests ?? []), ...(tier?.tests ?? [])].filter((t) => t.state !== "skipped");
      const ownMs = ran.reduce((s, t) => s + t.durationMs, 0) + (killers?.fileMs ?? 0) + (tier?.fileMs ?? 0);
      if (!timedOut) overheadMs.push(seconds * 1000 - ownMs);
      return { mutant: m, line, site, verdict, seconds, testsRun: [...new Set(ran.map((t) => t.test))], ...(bless ? { goldensBlessed: [...blessed].sort() } : {}) };
    };

    await Promise.all(
      hosts.map(async (_, index) => {
        for (let m = queue.shift(); m; m = queue.shift()) {
          const r = await runMutant(index, m);
          done.set(m.id, r);
          finished++;
          const by = r.verdict.kind === "killed" || r.verdict.kind === "killed-by-other" ? ` by ${r.verdict.by[0]}` : "";
          opts.log(`[${String(finished).padStart(String(total).length)}/${total}] ${m.id}: ${labelVerdict(r.verdict)}${by} (${r.seconds.toFixed(2)}s)`);
        }
      }),
    );
    records.push(...opts.selected.map((m) => done.get(m.id)!));

    // After: the suite is green again, and every tree holds the checkout's bytes and goldens. One
    // host's run proves the suite; the byte checks cover every tree, a killed host's included.
    if (proven.kind === "proven") {
      opts.log(`${at()} after: not run again: every tree must hold the checkout's bytes (checked next), and ${proven.reports.join(", ")} proved those green`);
    } else {
      const last = await hostFor(0);
      const after = asOutcome(await runOn(last, baselineFiles.map((file) => ({ file })), []));
      const failed = after ? [...after.loadErrors.map((e) => e.file), ...after.tests.filter((t) => t.state === "failed").map((t) => t.test)] : ["(did not finish)"];
      if (failed.length > 0) fatal.push(`the suite is not green after the run: ${failed.join(", ")}`);
      else opts.log(`${at()} after: the suite is green again`);
    }
    hosts.forEach((h, i) => {
      for (const [file, bytes] of rootSources) if (!readFileSync(join(h.tree, file)).equals(bytes)) fatal.push(`tree ${i}: ${file} differs from the checkout after the run`);
      if (hashDir(join(h.tree, "goldens")) !== treeGoldens[i]) fatal.push(`tree ${i}: goldens/ changed during the mutation run: a run must never write a golden`);
    });
    for (const [file, bytes] of rootSources) if (!readFileSync(join(opts.root, file)).equals(bytes)) fatal.push(`the checkout's ${file} changed during the run`);
    if (hashDir(join(opts.root, "goldens")) !== rootGoldens) fatal.push("the checkout's goldens/ changed during the run");
    return { records, fatal, tests, overheadMs, redBefore: false };
  } catch (e) {
    fatal.push(`the runner failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    return { records, fatal, tests, overheadMs, redBefore: false };
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
    if (fatal.length === 0) rmSync(runDir, { recursive: true, force: true });
    else opts.log(`tree copies and host logs kept for inspection: ${runDir}`);
  }
}
