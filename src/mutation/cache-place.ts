// Where stored verdicts live: outside the checkout, so nothing a change commits (a pull request's
// `reports/mutant-cache.json`, say) is ever read as a verdict. CI keeps the file in its own cache,
// saved only by runs on main; locally it is the user's cache directory.
import { execFileSync } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";

/** `$XDG_CACHE_HOME/mosaic-harness/mutant-cache.json`, or under `~/.cache` when that is unset. */
export function defaultCachePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "mosaic-harness", "mutant-cache.json");
}

/** True when path lies in the checkout: a file there is one a change under test can write. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

const refusal = (asked: string | undefined, path: string) =>
  `${asked === undefined ? "the verdict cache" : `--cache ${asked}`}: ${path} lies inside the checkout, where a change under test could write its own verdicts; keep it outside (docs/mutants.md)`;

/** The cache file a run may use, or why it may not: a path inside the checkout is refused. */
export function placeCache(
  root: string,
  asked: string | undefined,
  env?: NodeJS.ProcessEnv,
): { path: string } | { error: string } {
  const path = asked === undefined ? defaultCachePath(env) : resolve(root, asked);
  if (isInside(root, path)) return { error: refusal(asked, path) }; // safety: cache-outside-checkout
  return { path };
}

/**
 * Files git tracks under the run outputs' folder (`reports/`): a verdict file committed there would
 * be the change's own word. `.gitignore` does not stop a forced add; the contract tier refuses any.
 */
export function listTrackedReports(root: string): string[] {
  const listed = execFileSync("git", ["-C", root, "ls-files", "-z", "--", "reports"], { encoding: "utf8" });
  return listed.split("\0").filter(Boolean); // safety: reports-untracked
}

/** Whether a run keeps its fresh kills: a pull request's run (--since) reads main's and keeps none. */
export const keepsVerdicts = (run: { since: string | undefined }): boolean => run.since === undefined; // safety: since-keeps-nothing

/** The stored kills that may answer a run's selected mutants: none under --since, where what is selected runs. */
export function answeringHits<T>(
  hits: ReadonlyMap<string, T>,
  run: { since: string | undefined },
): ReadonlyMap<string, T> {
  return run.since === undefined ? hits : new Map(); // safety: since-runs-selected
}
