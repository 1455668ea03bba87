// Each mutant on a warm host: written into the host's tree, its killers run (and, when they do not
// kill it, the rest of their tiers), then restored byte for byte. Hosts take mutants from one
// queue, so a slow mutant holds up only its own host.
import type { Mutant } from "./catalog.ts";
import { listTierFiles, specifyKillers } from "./killers.ts";
import { locateMutantLine } from "./load.ts";
import type { MutantRecord } from "./report.ts";
import { asOutcome, type RunContext } from "./run-context.ts";
import { classifyMutant, labelVerdict, needsTierRun, type MutantVerdict, type RunOutcome } from "./verdict.ts";

const EMPTY: RunOutcome = { tests: [], loadErrors: [], unhandled: [], wallMs: 0, fileMs: 0 };

/** Every selected mutant's record, in catalog order; overheadMs gets each untimed-out run's overhead. */
export async function runQueue(ctx: RunContext, overheadMs: number[]): Promise<MutantRecord[]> {
  const selected = ctx.opts.selected;
  const queue = [...selected];
  const done = new Map<string, MutantRecord>();
  const width = String(selected.length).length;
  await Promise.all(
    ctx.hosts.map(async (_, index) => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        const r = await runMutant(ctx, index, m, overheadMs);
        done.set(m.id, r);
        const by = r.verdict.kind === "killed" || r.verdict.kind === "killed-by-other" ? ` by ${r.verdict.by[0]}` : "";
        ctx.log(
          `[${String(done.size).padStart(width)}/${selected.length}] ${m.id}: ${labelVerdict(r.verdict)}${by} (${r.seconds.toFixed(2)}s)`,
        );
      }
    }),
  );
  return selected.map((m) => done.get(m.id)!);
}

type Runs = { killers?: RunOutcome; tier?: RunOutcome; timedOut?: "killers" | "tier"; blessed: Set<string> };

async function runMutant(ctx: RunContext, index: number, m: Mutant, overheadMs: number[]): Promise<MutantRecord> {
  const site = ctx.catalog.sites.get(m.id)!;
  const line = locateMutantLine(m, ctx.catalog.tags, site);
  if (site.kind === "stale")
    return { mutant: m, line, site, verdict: { kind: "stale", why: site.why }, seconds: 0, testsRun: [] };
  const h = await ctx.hostFor(index);
  const start = performance.now();
  const restore = ctx.mutate(h, m);
  const runs: Runs = { blessed: new Set() };
  try {
    await runKillersThenTier(ctx, index, m, runs);
  } finally {
    restore();
  }
  if (runs.timedOut) ctx.killHost(index);
  const seconds = (performance.now() - start) / 1000;
  const verdict: MutantVerdict = classifyMutant(
    m.killedBy,
    runs.killers ?? EMPTY,
    runs.tier,
    runs.timedOut,
    ctx.bless ? { goldensWritten: [...runs.blessed] } : undefined,
  );
  const ran = [...(runs.killers?.tests ?? []), ...(runs.tier?.tests ?? [])].filter((t) => t.state !== "skipped");
  const ownMs = ran.reduce((s, t) => s + t.durationMs, 0) + (runs.killers?.fileMs ?? 0) + (runs.tier?.fileMs ?? 0);
  if (!runs.timedOut) overheadMs.push(seconds * 1000 - ownMs);
  return {
    mutant: m,
    line,
    site,
    verdict,
    seconds,
    testsRun: [...new Set(ran.map((t) => t.test))],
    ...(ctx.bless ? { goldensBlessed: [...runs.blessed].sort() } : {}),
  };
}

/** The killers first; the rest of their tiers only when the killers did not kill (a killed-by-other hunt). */
async function runKillersThenTier(ctx: RunContext, index: number, m: Mutant, runs: Runs): Promise<void> {
  const h = ctx.hosts[index]!;
  const first = await ctx.runBlessing(h, specifyKillers(m), [m.file]);
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
  rest.blessed.forEach((g) => runs.blessed.add(g));
  runs.tier = asOutcome(rest.reply);
  if (!runs.tier) runs.timedOut = "tier";
}
