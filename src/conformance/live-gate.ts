import { it, type TestFunction } from "vitest";

type LiveIt = (name: string, fn: TestFunction, timeout?: number) => void;

/**
 * `it` for a live test that needs something the machine may lack. With the need met it is `it`.
 * Without it: under CI=true the test runs and fails with the reason, so CI never passes on a
 * skip; locally it skips and says why, loudly, on stderr.
 */
export function liveIt(need: string, problem: string | null, env: NodeJS.ProcessEnv = process.env): LiveIt {
  if (problem === null) return (name, fn, timeout) => it(name, fn, timeout);
  if (env.CI === "true") {
    return (name) =>
      it(name, () => {
        throw new Error(`live test cannot run under CI=true: ${need}: ${problem}`);
      });
  }
  process.stderr.write(`\n!!! LIVE TESTS SKIPPED: ${need}: ${problem}\n!!! Under CI=true these tests fail instead.\n\n`);
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
