// Each mutant on a warm host: written into the host's tree, its killers run (and, when they do not
// kill it, the rest of their tiers), then restored byte for byte. Hosts take mutants from one
// queue, so a slow mutant holds up only its own host.
import type { Mutant } from "./catalog.ts";
import type { Host } from "./host-pool.ts";
import type { SpecRequest } from "./host-protocol.ts";
import { listTierFiles, specifyKillers } from "./killers.ts";
import { locateMutantLine } from "./load.ts";
import type { MutantRecord } from "./report.ts";
import { asOutcome, type RunContext } from "./run-context.ts";
import type { RecordedLoads } from "./cache-key.ts";
import { mergeLoads } from "./recorded-loads.ts";
import { classifyMutant, labelVerdict, needsTierRun, type MutantVerdict, type RunOutcome } from "./verdict.ts";

const EMPTY: RunOutcome = { tests: [], loadErrors: [], unhandled: [], wallMs: 0, fileMs: 0 };

/** What the queue gives: every selected mutant's record, and in a both-verdicts run its bless-mode record. */
export type QueueResult = { records: MutantRecord[]; blessedRecords: MutantRecord[] | undefined };

/** Every selected mutant's record, in catalog order; overheadMs gets each untimed-out run's overhead. */
export async function runQueue(ctx: RunContext, overheadMs: number[]): Promise<QueueResult> {
  const selected = ctx.opts.selected;
  const queue = [...selected];
  const done = new Map<string, { record: MutantRecord; blessed?: MutantRecord }>();
  const width = String(selected.length).length;
  await Promise.all(
    ctx.hosts.map(async (_, index) => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        const r = await runMutant(ctx, index, m, overheadMs);
        done.set(m.id, r);
        const blessed = r.blessed ? `; goldens blessed away: ${describeVerdict(r.blessed)}` : "";
        ctx.log(
          `[${String(done.size).padStart(width)}/${selected.length}] ${m.id}: ${describeVerdict(r.record)}${blessed} (${r.record.seconds.toFixed(2)}s)`,
        );
      }
    }),
  );
  return {
    records: selected.map((m) => done.get(m.id)!.record),
    blessedRecords: ctx.both ? selected.map((m) => done.get(m.id)!.blessed!) : undefined,
  };
}

const describeVerdict = (r: MutantRecord): string =>
  `${labelVerdict(r.verdict)}${r.verdict.kind === "killed" || r.verdict.kind === "killed-by-other" ? ` by ${r.verdict.by[0]}` : ""}`;

type Runs = {
  killers?: RunOutcome;
  tier?: RunOutcome;
  timedOut?: "killers" | "tier";
  blessed: Set<string>;
  /** A bless arm's own test time: only its runs again, not the ordinary outcomes it reuses. */
  rerunMs?: number;
  /** What the runs loaded; "unknown" once any run's loads were not recorded. */
  loads?: RecordedLoads | "unknown";
};

/** Adds one run's recorded loads to the mutant's; a run without them makes the whole unknown. */
function noteLoads(runs: Runs, loads: RecordedLoads | undefined): void {
  if (runs.loads === "unknown") return;
  runs.loads = loads === undefined ? "unknown" : mergeLoads("", runs.loads, loads);
}

async function runMutant(
  ctx: RunContext,
  index: number,
  m: Mutant,
  overheadMs: number[],
): Promise<{ record: MutantRecord; blessed?: MutantRecord }> {
  const site = ctx.catalog.sites.get(m.id)!;
  const line = locateMutantLine(m, ctx.catalog.tags, site);
  if (site.kind === "stale") {
    const record: MutantRecord = {
      mutant: m,
      line,
      site,
      verdict: { kind: "stale", why: site.why },
      seconds: 0,
      testsRun: [],
    };
    return { record, ...(ctx.both ? { blessed: record } : {}) };
  }
  const h = await ctx.hostFor(index);
  const start = performance.now();
  const restore = ctx.mutate(h, m);
  const runs: Runs = { blessed: new Set() };
  let blessedRuns: Runs | undefined;
  try {
    await runKillersThenTier(ctx, index, m, runs);
    if (ctx.both) blessedRuns = runs.timedOut ? runs : await runBlessedArm(ctx, index, m, runs);
  } finally {
    restore();
  }
  if (runs.timedOut || blessedRuns?.timedOut) ctx.killHost(index);
  const seconds = (performance.now() - start) / 1000;
  const record = recordOf(m, line, site, runs, seconds, ctx.bless);
  if (!runs.timedOut && !blessedRuns?.timedOut)
    overheadMs.push(seconds * 1000 - ownMs(runs) - (blessedRuns?.rerunMs ?? 0));
  return { record, ...(blessedRuns ? { blessed: recordOf(m, line, site, blessedRuns, seconds, true) } : {}) };
}

/** The time runs spent in their tests and test files, not in the runner. */
const ownMs = (runs: Pick<Runs, "killers" | "tier">): number =>
  [runs.killers, runs.tier].reduce(
    (s, o) =>
      s + (o?.fileMs ?? 0) + (o?.tests ?? []).reduce((t, x) => t + (x.state === "skipped" ? 0 : x.durationMs), 0),
    0,
  );

function recordOf(
  m: Mutant,
  line: MutantRecord["line"],
  site: MutantRecord["site"],
  runs: Runs,
  seconds: number,
  blessed: boolean,
): MutantRecord {
  const verdict: MutantVerdict = classifyMutant(
    m.killedBy,
    runs.killers ?? EMPTY,
    runs.tier,
    runs.timedOut,
    blessed ? { goldensWritten: [...runs.blessed] } : undefined,
  );
  const ran = [...(runs.killers?.tests ?? []), ...(runs.tier?.tests ?? [])].filter((t) => t.state !== "skipped");
  return {
    mutant: m,
    line,
    site,
    verdict,
    seconds,
    testsRun: [...new Set(ran.map((t) => t.test))],
    ...(blessed ? { goldensBlessed: [...runs.blessed].sort() } : {}),
    ...(runs.loads && runs.loads !== "unknown" ? { loads: runs.loads } : {}),
  };
}

/**
 * The runs bless mode would have made, from the ordinary ones. A run with no golden mismatch writes
 * nothing with goldens blessed away, so it runs the same; only the files where a golden mismatched
 * run again, with goldens written, and their tests' outcomes replace the ordinary ones. When the
 * ordinary killers killed and these do not, the rest of the tier runs with goldens written, as bless
 * mode's own hunt for another killer would.
 */
async function runBlessedArm(ctx: RunContext, index: number, m: Mutant, ordinary: Runs): Promise<Runs> {
  const h = ctx.hosts[index]!;
  // Its verdict stands on the ordinary runs it reuses, so on what they loaded too.
  const out: Runs = { blessed: new Set(), rerunMs: 0, ...(ordinary.loads ? { loads: ordinary.loads } : {}) };
  out.killers = await rerunGoldenFiles(ctx, h, specifyKillers(m), ordinary.killers!, out);
  if (!out.killers) {
    out.timedOut = "killers";
    return out;
  }
  if (!needsTierRun(m.killedBy, out.killers, false, true)) return out;
  const tier = listTierFiles(h, m).map((file) => ({ file }));
  if (ordinary.tier) out.tier = await rerunGoldenFiles(ctx, h, tier, ordinary.tier, out);
  else {
    const rest = await ctx.runBlessing(h, tier, [], undefined, true);
    noteLoads(out, rest.loads);
    rest.blessed.forEach((g) => out.blessed.add(g));
    out.tier = asOutcome(rest.reply);
    out.rerunMs! += ownMs({ tier: out.tier });
  }
  if (!out.tier) out.timedOut = "tier";
  return out;
}

/** The file of a test id (`<file> > <name>`). */
const fileOfTest = (test: string): string => test.slice(0, test.indexOf(" > "));

/** `ordinary` with the specs' files where a golden mismatched run again with goldens written. */
async function rerunGoldenFiles(
  ctx: RunContext,
  h: Host,
  specs: SpecRequest[],
  ordinary: RunOutcome,
  out: Runs,
): Promise<RunOutcome | undefined> {
  const again = new Set(ordinary.tests.filter((t) => t.failure?.kind === "golden").map((t) => fileOfTest(t.test)));
  if (again.size === 0) return ordinary;
  const rerun = await ctx.runBlessing(
    h,
    specs.filter((s) => again.has(s.file)),
    [],
    undefined,
    true,
  );
  noteLoads(out, rerun.loads);
  rerun.blessed.forEach((g) => out.blessed.add(g));
  const fresh = asOutcome(rerun.reply);
  if (!fresh) return undefined;
  out.rerunMs = (out.rerunMs ?? 0) + ownMs({ killers: fresh });
  const kept = (file: string) => !again.has(file);
  return {
    tests: [...ordinary.tests.filter((t) => kept(fileOfTest(t.test))), ...fresh.tests],
    loadErrors: [...ordinary.loadErrors.filter((e) => kept(e.file)), ...fresh.loadErrors],
    unhandled: [
      ...ordinary.unhandled.filter((u) => ![...again].some((f) => u.startsWith(`${f}: `))),
      ...fresh.unhandled,
    ],
    wallMs: ordinary.wallMs + fresh.wallMs,
    fileMs: ordinary.fileMs + fresh.fileMs,
  };
}

/** The killers first; the rest of their tiers only when the killers did not kill (a killed-by-other hunt). */
async function runKillersThenTier(ctx: RunContext, index: number, m: Mutant, runs: Runs): Promise<void> {
  const h = ctx.hosts[index]!;
  const first = await ctx.runBlessing(h, specifyKillers(m), [m.file]);
  noteLoads(runs, first.loads);
  first.blessed.forEach((g) => runs.blessed.add(g));
  runs.killers = asOutcome(first.reply);
  if (!runs.killers) {
    runs.timedOut = "killers";
    return;
  }
  if (!needsTierRun(m.killedBy, runs.killers, false, ctx.bless)) return;
  const rest = await ctx.runBlessing(
    h,
    listTierFiles(h, m).map((file) => ({ file })),
    [],
  );
  noteLoads(runs, rest.loads);
  rest.blessed.forEach((g) => runs.blessed.add(g));
  runs.tier = asOutcome(rest.reply);
  if (!runs.tier) runs.timedOut = "tier";
}
