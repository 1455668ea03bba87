// What a mutant's test runs prove. Only an expected test failing on an assertion (or a golden
// mismatch, which is an assertion on a reviewed file) is a kill: a module that does not load, a
// crash and a timeout say the mutant broke something, not that a test noticed the protection go.

/** Why one test failed. */
export type FailureKind = "assertion" | "golden" | "crash" | "timeout";

export type TestOutcome = {
  /** `<test file> > <describe> > <test>`, the catalog's killedBy form. */
  test: string;
  state: "passed" | "failed" | "skipped";
  failure?: { kind: FailureKind; message: string };
  durationMs: number;
};

/** One vitest run as the runner sees it. */
export type RunOutcome = {
  tests: TestOutcome[];
  /** Test files that failed to load or collect: no test in them ran. */
  loadErrors: { file: string; message: string }[];
  /** Errors vitest caught outside any test. */
  unhandled: string[];
  wallMs: number;
  /** Time vitest spent preparing, loading and collecting the test files: the tests' own cost, not the runner's. */
  fileMs: number;
};

export type MutantVerdict =
  | { kind: "killed"; by: string[]; evidence: "assertion" | "golden-only"; message: string }
  | { kind: "killed-by-other"; by: string[]; message: string }
  | { kind: "survived"; testsRun: number }
  /** Bless mode only: no assertion noticed, but the mutant's runs rewrote these goldens. */
  | { kind: "golden-only"; goldens: string[]; testsRun: number }
  | { kind: "invalid-load"; message: string }
  | { kind: "invalid-crash"; tests: string[]; message: string }
  | { kind: "timeout"; message: string }
  | { kind: "stale"; why: string };

export type MutantVerdictKind = MutantVerdict["kind"];

type ErrorLike = { name?: string | undefined; message?: string | undefined };

/** Why a test failed, from its errors. An assertion anywhere wins over a golden, a golden over a crash. */
export function classifyErrors(errors: readonly ErrorLike[]): { kind: FailureKind; message: string } {
  const kinds = errors.map((e) => ({ kind: classifyError(e), message: firstLine(e.message ?? e.name ?? "") }));
  for (const k of ["assertion", "golden", "timeout", "crash"] as const) {
    const hit = kinds.find((x) => x.kind === k);
    if (hit) return hit;
  }
  return { kind: "crash", message: "failed without an error" };
}

function classifyError(e: ErrorLike): FailureKind {
  const message = e.message ?? "";
  if (/Snapshot .* mismatched/.test(message)) return "golden";
  if (/^Test timed out in \d+ms/.test(message) || /^Hook timed out in \d+ms/.test(message)) return "timeout";
  if (e.name === "AssertionError") return "assertion";
  return "crash";
}

function firstLine(s: string): string {
  const line = s.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 200 ? line.slice(0, 197) + "..." : line;
}

const KILLING = new Set<FailureKind>(["assertion", "golden"]);
/** With goldens blessed away only an assertion kills: a golden mismatch cannot fail the run. */
const KILLING_BLESSED = new Set<FailureKind>(["assertion"]);

function kills(o: TestOutcome, blessed: boolean): boolean {
  return o.state === "failed" && o.failure !== undefined && (blessed ? KILLING_BLESSED : KILLING).has(o.failure.kind);
}

/** The expected tests that killed the mutant in this run. */
export function findExpectedKills(expected: readonly string[], run: RunOutcome, blessed = false): TestOutcome[] {
  const want = new Set(expected);
  return run.tests.filter((o) => want.has(o.test) && kills(o, blessed));
}

/** Whether the rest of the tier must run: only when no expected test killed the mutant and nothing timed out. */
export function needsTierRun(
  expected: readonly string[],
  killers: RunOutcome,
  timedOut: boolean,
  blessed = false,
): boolean {
  return !timedOut && findExpectedKills(expected, killers, blessed).length === 0;
}

/**
 * Bless mode (`--bless-goldens`): the runs wrote golden mismatches into the tree copy instead of
 * failing. goldensWritten names the goldens they rewrote; a mutant only they noticed is golden-only.
 */
export type Blessing = { goldensWritten: readonly string[] };

/**
 * The verdict from the expected killers' run and, when they did not kill, the rest of the tier.
 * timedOut names the run the runner had to stop.
 */
export function classifyMutant(
  expected: readonly string[],
  killers: RunOutcome,
  tier: RunOutcome | undefined,
  timedOut: "killers" | "tier" | undefined,
  blessing?: Blessing,
): MutantVerdict {
  const blessed = blessing !== undefined;
  const mine = findExpectedKills(expected, killers, blessed);
  if (mine.length > 0) {
    const byAssertion = mine.filter((o) => o.failure!.kind === "assertion");
    const evidence = byAssertion.length > 0 ? "assertion" : "golden-only";
    const by = (byAssertion.length > 0 ? byAssertion : mine).map((o) => o.test);
    return { kind: "killed", by, evidence, message: (byAssertion[0] ?? mine[0]!).failure!.message };
  }
  if (timedOut === "killers")
    return { kind: "timeout", message: "the expected tests did not finish in the time budget" };
  const runs = tier ? [killers, tier] : [killers];
  const want = new Set(expected);
  const others = runs.flatMap((r) => r.tests).filter((o) => kills(o, blessed) && !want.has(o.test));
  if (others.length > 0) {
    const by = [...new Set(others.map((o) => o.test))];
    return {
      kind: "killed-by-other",
      by,
      message: `not killed by ${expected.join(", ")}; ${by[0]} failed: ${others[0]!.failure!.message}`,
    };
  }
  if (timedOut === "tier")
    return { kind: "timeout", message: "the rest of the tier did not finish in the time budget" };
  const testsRun = new Set(
    runs
      .flatMap((r) => r.tests)
      .filter((o) => o.state !== "skipped")
      .map((o) => o.test),
  ).size;
  if (blessing && blessing.goldensWritten.length > 0)
    return { kind: "golden-only", goldens: [...blessing.goldensWritten].sort(), testsRun };
  const load = runs.flatMap((r) => r.loadErrors);
  if (load.length > 0) return { kind: "invalid-load", message: `${load[0]!.file}: ${load[0]!.message}` };
  // With goldens blessed away a golden mismatch cannot fail a test; if one does, it is no kill either.
  const crashed = runs
    .flatMap((r) => r.tests)
    .filter((o) => o.state === "failed" && (o.failure?.kind === "crash" || (blessed && o.failure?.kind === "golden")));
  const unhandled = runs.flatMap((r) => r.unhandled);
  if (crashed.length > 0 || unhandled.length > 0) {
    return {
      kind: "invalid-crash",
      tests: [...new Set(crashed.map((o) => o.test))],
      message: crashed[0]?.failure?.message ?? unhandled[0]!,
    };
  }
  const timedOutTests = runs
    .flatMap((r) => r.tests)
    .filter((o) => o.state === "failed" && o.failure?.kind === "timeout");
  if (timedOutTests.length > 0)
    return { kind: "timeout", message: `${timedOutTests[0]!.test}: ${timedOutTests[0]!.failure!.message}` };
  return { kind: "survived", testsRun };
}

/** Why a verdict fails the run, in one line for the reader of the exit message; null when it passes. */
export function explainFailure(v: MutantVerdict): string | null {
  switch (v.kind) {
    case "killed":
      return null;
    case "killed-by-other":
      return `killed only by ${v.by.join(", ")}, not by its killedBy: fix the catalog or the test`;
    case "survived":
      return `survived ${v.testsRun} tests: no test notices this protection go`;
    case "golden-only":
      return `golden only: no assertion noticed, only ${v.goldens.join(", ")} changed, which npm run goldens:update would bless; add an assertion beside the golden`;
    case "invalid-load":
      return `the mutated code does not load (${v.message}): fix the replacement`;
    case "invalid-crash":
      return `only crashes, no assertion (${v.message}): a crash is not a kill`;
    case "timeout":
      return `timeout (${v.message}): a timeout is not a kill`;
    case "stale":
      return `stale: ${v.why}`;
  }
}

/** The label in the table's verdict column. */
export function labelVerdict(v: MutantVerdict): string {
  if (v.kind === "killed") return v.evidence === "golden-only" ? "killed (golden only: weaker)" : "killed";
  if (v.kind === "golden-only") return "golden only: not killed";
  return v.kind;
}

/** The tests a verdict names in the table's "killed by" column. */
export function listKillingTests(v: MutantVerdict): string[] {
  return v.kind === "killed" || v.kind === "killed-by-other" ? v.by : [];
}
