// After every mutant: the suite is green again, and every tree copy and the checkout hold the bytes
// and goldens they began with. One host's run proves the suite (or a proven `npm test` of this tree
// does); the byte checks cover every tree, a killed host's included.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Baseline } from "./before.ts";
import { asOutcome, type RunContext } from "./run-context.ts";
import { hashDir } from "./tree-copy.ts";

export async function checkAfter(ctx: RunContext, baseline: Baseline): Promise<void> {
  await checkSuiteGreen(ctx, baseline);
  checkBytes(ctx);
}

async function checkSuiteGreen(ctx: RunContext, baseline: Baseline): Promise<void> {
  const { proven } = baseline;
  if (proven.kind === "proven") {
    ctx.log(
      `${ctx.at()} after: not run again: every tree must hold the checkout's bytes (checked next), and ${proven.reports.join(", ")} proved those green`,
    );
    return;
  }
  const last = await ctx.hostFor(0);
  const after = asOutcome(
    await ctx.runUnmutated(
      last,
      baseline.files.map((file) => ({ file })),
    ),
  );
  const failed = after
    ? [...after.loadErrors.map((e) => e.file), ...after.tests.filter((t) => t.state === "failed").map((t) => t.test)]
    : ["(did not finish)"];
  if (failed.length > 0) ctx.fatal.push(`the suite is not green after the run: ${failed.join(", ")}`);
  else ctx.log(`${ctx.at()} after: the suite is green again`);
}

function checkBytes(ctx: RunContext): void {
  ctx.hosts.forEach((h, i) => {
    for (const [file, bytes] of ctx.rootSources)
      if (!readFileSync(join(h.tree, file)).equals(bytes))
        ctx.fatal.push(`tree ${i}: ${file} differs from the checkout after the run`);
    if (hashDir(join(h.tree, "goldens")) !== ctx.treeGoldens[i])
      ctx.fatal.push(`tree ${i}: goldens/ changed during the mutation run: a run must never write a golden`);
  });
  const root = ctx.opts.root;
  for (const [file, bytes] of ctx.rootSources)
    if (!readFileSync(join(root, file)).equals(bytes)) ctx.fatal.push(`the checkout's ${file} changed during the run`);
  if (hashDir(join(root, "goldens")) !== ctx.rootGoldens)
    ctx.fatal.push("the checkout's goldens/ changed during the run");
}
