// The run before any mutant: every killer's test file is green on the unmutated tree, and every
// killer named is one of its passing tests. A green `npm test` of this very tree stands for it
// when there is one (proven-run.ts), and then covers the killers' whole tiers. Its per-file times
// set every later run's budget.
import { parseTestRef, type Mutant } from "./catalog.ts";
import { listTierFiles, specifyKillers } from "./killers.ts";
import { readProvenRun, type Proven } from "./proven-run.ts";
import { asOutcome, type RunContext } from "./run-context.ts";
import type { RunOutcome } from "./verdict.ts";

/**
 * How long the run before any mutant may take: every tier the catalog's killers live in, the whole
 * live tier included (about 10 minutes on a loaded 2-core machine, its attack table touching
 * gigabytes of memory page by page). Past it the run is broken, not a mutant's timeout.
 */
export const BASELINE_LIMIT_MS = 30 * 60_000;

export type Baseline = {
  /** The test files of every tier the run uses, sorted. */
  files: string[];
  proven: Proven;
  /** Every test in the tiers run, by test file. */
  tests: Map<string, string[]>;
};

/** A baseline, or why there is none; `red` when the suite itself failed (another pool may pass). */
export type BeforeResult = { kind: "green"; baseline: Baseline } | { kind: "stop"; red: boolean };

export async function runBefore(ctx: RunContext, killers: readonly Mutant[]): Promise<BeforeResult> {
  const h0 = ctx.hosts[0]!;
  const tierFiles = [...new Set(killers.flatMap((m) => listTierFiles(h0, m)))].sort();
  const proven = readProof(ctx, tierFiles);
  // Without a proven run, the killers' own files: a kill needs only its killer green before it.
  // A mutant they do not kill runs its tier then, and that hunt only names the failure.
  const files =
    proven.kind === "proven"
      ? tierFiles
      : [...new Set(killers.flatMap((m) => specifyKillers(m).map((s) => s.file)))].sort();
  const base =
    proven.kind === "proven"
      ? proven.outcome
      : asOutcome(
          await h0.run(
            files.map((file) => ({ file })),
            [],
            BASELINE_LIMIT_MS,
          ),
        );
  const blessed = ctx.restoreGoldens(h0);
  if (blessed.length > 0) {
    ctx.fatal.push(
      `the suite is not green before the run: it rewrote ${blessed.join(", ")}, which do not match the unmutated code`,
    );
    return { kind: "stop", red: false };
  }
  if (!base) {
    ctx.fatal.push("the baseline run (the suite before any mutant) did not finish");
    return { kind: "stop", red: true };
  }
  const red = listRed(base);
  if (red.length > 0) {
    ctx.fatal.push(`the suite is not green before the run (${ctx.opts.pool} pool):`, ...red.map((r) => `  ${r}`));
    return { kind: "stop", red: true };
  }
  ctx.log(
    `${ctx.at()} before: ${base.tests.filter((t) => t.state === "passed").length} tests of ${files.length} files green`,
  );
  const tests = learnTimes(ctx, base);
  ctx.fatal.push(...listUnknownKillers(base, killers));
  return ctx.fatal.length > 0 ? { kind: "stop", red: false } : { kind: "green", baseline: { files, proven, tests } };
}

/** A green `npm test` on this very tree stands for the before-run, and the byte checks after for the after-run. */
function readProof(ctx: RunContext, files: readonly string[]): Proven {
  const offered = ctx.opts.provenReports;
  const proven =
    offered.length > 0
      ? readProvenRun(ctx.opts.root, offered, files)
      : { kind: "unproven" as const, why: "no report offered" };
  if (proven.kind === "proven")
    ctx.log(
      `${ctx.at()} before: taken from ${proven.reports.join(", ")}, a green run of this tree byte for byte (its sha256 beside each report)`,
    );
  else if (offered.length > 0) ctx.log(`${ctx.at()} before: running the suite: ${proven.why}`);
  return proven;
}

const listRed = (base: RunOutcome): string[] => [
  ...base.loadErrors.map((e) => `${e.file}: ${e.message}`),
  ...base.unhandled,
  ...base.tests.filter((t) => t.state === "failed").map((t) => `${t.test}: ${t.failure?.message}`),
];

/** The baseline's tests by file, and its time per file as every later run's budget. */
function learnTimes(ctx: RunContext, base: RunOutcome): Map<string, string[]> {
  const tests = new Map<string, string[]>();
  const durations = new Map<string, number>();
  for (const t of base.tests) {
    const file = parseTestRef(t.test).file;
    tests.set(file, [...(tests.get(file) ?? []), t.test]);
    durations.set(file, (durations.get(file) ?? 0) + t.durationMs);
  }
  ctx.setDurations(durations);
  return tests;
}

/** A killedBy that names no passing test could never kill. */
function listUnknownKillers(base: RunOutcome, killers: readonly Mutant[]): string[] {
  const known = new Set(base.tests.filter((t) => t.state === "passed").map((t) => t.test));
  const pairs = new Set(killers.flatMap((m) => m.killedBy.map((k) => `${m.id}\0${k}`)));
  return [...pairs].flatMap((k) => {
    const [id, name] = k.split("\0") as [string, string];
    return known.has(name) ? [] : [`${id}: killedBy names "${name}", which is not a passing test of the suite`];
  });
}
