// The mutation run, in phases: tree copies and warm hosts (run-context.ts), the run before any
// mutant (before.ts), the sentinel on every host (sentinel.ts), the queue of mutants (execute.ts),
// and the checks after (after.ts). Verdicts come from verdict.ts; this file only orders the phases.
import { rmSync } from "node:fs";
import { checkAfter } from "./after.ts";
import { runBefore } from "./before.ts";
import { runQueue } from "./execute.ts";
import { listUnknownKillerFiles } from "./killers.ts";
import type { LoadedCatalog } from "./load.ts";
import type { MutantRecord } from "./report.ts";
import { RunContext, type RunOptions } from "./run-context.ts";
import { proveSentinel, startWarmups } from "./sentinel.ts";

export type RunResult = {
  records: MutantRecord[];
  /** A both-verdicts run's records with goldens blessed away, in the same order. */
  blessedRecords?: MutantRecord[];
  /** Problems that make the whole run untrustworthy, whatever the verdicts. */
  fatal: string[];
  /** Every test in the tiers run, by test file, from the baseline. */
  tests: Map<string, string[]>;
  overheadMs: number[];
  /** The suite was not green before any mutant: no verdict was reached. */
  redBefore: boolean;
};

export async function runMutation(catalog: LoadedCatalog, opts: RunOptions): Promise<RunResult> {
  const ctx = new RunContext(catalog, opts);
  const result: RunResult = { records: [], fatal: ctx.fatal, tests: new Map(), overheadMs: [], redBefore: false };
  try {
    await runPhases(ctx, result);
  } catch (e) {
    ctx.fatal.push(`the runner failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    await ctx.close();
    if (ctx.fatal.length === 0) rmSync(ctx.runDir, { recursive: true, force: true });
    else opts.log(`tree copies and host logs kept for inspection: ${ctx.runDir}`);
  }
  return result;
}

/** Each phase runs only when the ones before it left no fatal finding. */
async function runPhases(ctx: RunContext, result: RunResult): Promise<void> {
  const { opts } = ctx;
  await ctx.startHosts(Math.max(1, Math.min(opts.workers, opts.selected.length)));
  ctx.log(`${ctx.at()} ${ctx.hosts.length} test host(s) ready on tree copies in ${ctx.runDir}`);
  const killers = [...opts.selected, opts.sentinel];
  ctx.fatal.push(...listUnknownKillerFiles(ctx.hosts[0]!, killers));
  if (ctx.fatal.length > 0) return;
  const warmups = startWarmups(ctx);
  const before = await runBefore(ctx, killers);
  if (before.kind === "stop") {
    result.redBefore = before.red;
    return;
  }
  result.tests = before.baseline.tests;
  if (!(await proveSentinel(ctx, warmups))) return;
  const queued = await runQueue(ctx, result.overheadMs);
  ctx.log(`${ctx.at()} mutants: ${queued.records.length} run`);
  result.records = queued.records;
  if (queued.blessedRecords) result.blessedRecords = queued.blessedRecords;
  await checkAfter(ctx, before.baseline);
}
