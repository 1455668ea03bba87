// The sentinel, on every host: its tests pass, fail once it is applied, and pass again once it is
// restored. A host serving a cached module fails one of the three, and then no verdict it gives
// can be trusted.
import type { Host, RunReply } from "./host-pool.ts";
import { specifyKillers } from "./killers.ts";
import { asOutcome, type RunContext } from "./run-context.ts";
import { BASELINE_LIMIT_MS } from "./before.ts";
import { findExpectedKills, type RunOutcome } from "./verdict.ts";

/** Hosts other than host 0 load the sentinel's tests while host 0 runs the baseline. */
export function startWarmups(ctx: RunContext): Map<number, Promise<RunReply>> {
  const specs = specifyKillers(ctx.opts.sentinel);
  return new Map(ctx.hosts.slice(1).map((h) => [h.index, h.run(specs, [], BASELINE_LIMIT_MS)]));
}

const isGreen = (o: RunOutcome | undefined): o is RunOutcome =>
  o !== undefined && !o.tests.some((t) => t.state === "failed") && o.loadErrors.length === 0;

/** True when the sentinel was killed and restored on every host; otherwise ctx.fatal says why. */
export async function proveSentinel(
  ctx: RunContext,
  warmups: ReadonlyMap<number, Promise<RunReply>>,
): Promise<boolean> {
  await Promise.all(ctx.hosts.map((h) => proveOn(ctx, h, warmups.get(h.index))));
  if (ctx.fatal.length > 0) return false;
  ctx.log(`${ctx.at()} sentinel ${ctx.opts.sentinel.id}: killed and restored on ${ctx.hosts.length} host(s)`);
  return true;
}

async function proveOn(ctx: RunContext, h: Host, warmup: Promise<RunReply> | undefined): Promise<void> {
  const sentinel = ctx.opts.sentinel;
  // Host 0's baseline already loaded the sentinel's tests; the others loaded them in their warmup.
  if (warmup !== undefined) {
    const warm = asOutcome(await warmup);
    if (ctx.restoreGoldens(h).length > 0) {
      ctx.fatal.push(`host ${h.index}: the sentinel ${sentinel.id}'s tests rewrote goldens on the unmutated tree`);
      return;
    }
    if (!isGreen(warm)) {
      ctx.fatal.push(`host ${h.index}: the sentinel ${sentinel.id}'s tests do not pass on the unmutated tree`);
      return;
    }
  }
  const specs = specifyKillers(sentinel);
  const restore = ctx.mutate(h, sentinel);
  const hit = asOutcome((await ctx.runBlessing(h, specs, [sentinel.file])).reply);
  restore();
  if (!hit || findExpectedKills(sentinel.killedBy, hit, ctx.bless).length === 0) {
    ctx.fatal.push(
      `host ${h.index}: the sentinel ${sentinel.id} was not killed: mutations do not reach the tests (a stale module?) or its test no longer asks`,
    );
    return;
  }
  if (!isGreen(asOutcome(await ctx.runUnmutated(h, specs)))) {
    ctx.fatal.push(
      `host ${h.index}: after restoring the sentinel ${sentinel.id} its tests still fail: the restored code does not reach the tests`,
    );
  }
}
