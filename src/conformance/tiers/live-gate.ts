import { it, type TestFunction } from "vitest";
import { isCi } from "./ci.ts";

type LiveIt = (name: string, fn: TestFunction, timeout?: number) => void;

/**
 * `it` for a live test that needs something the machine may lack. With the need met it is `it`.
 * Without it: under CI the test runs and fails with the reason, so CI never passes on a
 * skip; locally it skips and says why, loudly, on stderr.
 */
/** What a live test does about its need: run, fail (CI never passes on a skip), or skip loudly. */
export function liveMode(problem: string | null, env: NodeJS.ProcessEnv): "run" | "fail" | "skip" {
  if (problem === null) return "run";
  return isCi(env) ? "fail" : "skip";
}

export function liveIt(need: string, problem: string | null, env: NodeJS.ProcessEnv = process.env): LiveIt {
  const mode = liveMode(problem, env);
  if (mode === "run") return (name, fn, timeout) => it(name, fn, timeout);
  if (mode === "fail") {
    return (name) =>
      it(name, () => {
        throw new Error(`live test cannot run under CI: ${need}: ${problem}`);
      });
  }
  process.stderr.write(
    `\n!!! LIVE TESTS SKIPPED: ${need}: ${problem}\n!!! Under CI (CI=true) these tests fail instead.\n\n`,
  );
  return (name) => it.skip(`${name} [SKIPPED: ${need}: ${problem}]`, () => {});
}

/**
 * Why a confined session cannot start from this checkout, or null. The private /tmp is bound last,
 * so node, Claude Code and node_modules in a checkout under /tmp would vanish inside the sandbox.
 */
export function checkoutProblem(repoRoot: string): string | null {
  return repoRoot === "/tmp" || repoRoot.startsWith("/tmp/")
    ? `the checkout ${repoRoot} lies under /tmp, which every session's private /tmp hides; clone it elsewhere (.ci/run relocates itself)`
    : null;
}
