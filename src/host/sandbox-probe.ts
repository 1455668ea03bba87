import { spawnSync } from "node:child_process";
import { systemBinds } from "../core/sandbox/binds.ts";
import { NAMESPACES, bindArgs } from "../core/sandbox/bwrap-argv.ts";
import type { HostFacts } from "../core/sandbox/types.ts";

export const BWRAP_MISSING_HINT = "install it with `apt-get install bubblewrap` (Debian, Ubuntu) or your distribution's bubblewrap package";

/**
 * Proves bwrap can build a session's namespaces and system binds here, by running `true` in them.
 * Returns null when it can, else one line saying what is wrong: bwrap's own first stderr line,
 * or that bwrap is missing and how to get it.
 */
export function sandboxProblem(facts: HostFacts, bwrap = "bwrap"): string | null {
  const argv = [...NAMESPACES, ...systemBinds(facts).flatMap(bindArgs), "--", "true"];
  const r = spawnSync(bwrap, argv, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return `bwrap is missing (${bwrap} not found): ${BWRAP_MISSING_HINT}`;
    return `bwrap could not be run (${bwrap}): ${r.error.message}`;
  }
  if (r.status === 0) return null; // safety: probe-always-ok
  const first = (r.stderr ?? "").split("\n").find((l) => l.trim() !== "");
  return first?.trim() ?? `bwrap exited ${r.status ?? r.signal} with no message`;
}
