/** Quotes one word for /bin/sh: single quotes, with any ' spelled '\''. */
export function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`; // safety: hook-quote-unescaped
}

/** Seconds the gate gets before timeout sends TERM, then KILL 2 s later. */
export const GATE_TIMEOUT_SECONDS = 10;
export const GATE_KILL_AFTER_SECONDS = 2;
/** Claude Code's own limit on the hook: longer than the wrapper's, so the wrapper always decides. */
export const HOOK_TIMEOUT_SECONDS = 20;

/** Node's compile cache for the gate, inside the bundle: the host fills it, the session only reads it. */
export function gateCompileCacheDir(bundleDir: string): string {
  return `${bundleDir}/gate-compile-cache`; // safety: gate-cache-writable
}

/**
 * The PreToolUse hook command. Claude Code lets a tool run when the hook command is missing or
 * exits anything but 2, so the gate runs under timeout and any other exit becomes 2: a missing
 * gate, a crash and a hang all block (S0 lines 2 to 4). NODE_COMPILE_CACHE names a cache under the
 * read-only bundle, so a session cannot plant code there; an empty one only costs speed.
 */
export function gateHookCommand(node: string, repo: string, policyFile: string, compileCache: string): string {
  const gate = [node, `${repo}/src/host/claude-gate.ts`, policyFile].map(shQuote).join(" ");
  // safety: hook-no-timeout
  const bounded = `NODE_COMPILE_CACHE=${shQuote(compileCache)} timeout -k ${GATE_KILL_AFTER_SECONDS} ${GATE_TIMEOUT_SECONDS} ${gate}`;
  return `${bounded} || exit 2`; // safety: hook-fails-open
}
