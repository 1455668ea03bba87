// The two verdicts that decide whether `npm start` (and so CI) is green: a scenario's, from its
// assertions, and the run's exit code, from every repeat of every scenario.
import type { AssertionVerdictKind } from "./assert.ts";

/** A scenario passes only when every assertion passed: an unobserved one is not a pass. */
export function scenarioVerdict(assertions: ReadonlyArray<{ verdict: AssertionVerdictKind }>): "pass" | "fail" {
  return assertions.every((a) => a.verdict === "pass") ? "pass" : "fail"; // safety: scenario-unobserved-passes
}

/** 0 only when every run of every scenario passed: one good run in N is not a pass (--repeat is a rate, never a retry). */
export function runExitCode(all: ReadonlyArray<{ runs: ReadonlyArray<{ verdict: "pass" | "fail" }> }>): 0 | 1 {
  return all.every((s) => s.runs.every((r) => r.verdict === "pass")) ? 0 : 1; // safety: repeat-one-good-run-passes
}
