import { chmodSync, copyFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Mode of the runner's node: execute only, for everyone, the owner included. */
export const RUNNER_NODE_MODE = 0o111; // safety: runner-node-mode

/**
 * Where the execute-only copy of `node` lives: keyed by node's version and size, so an upgrade gets
 * a fresh copy and a reused one is the same build.
 */
export function runnerNodePath(stateDir: string, node: string, version: string): string {
  return join(stateDir, "runner-node", `node-${version}-${statSync(node).size}`);
}

/**
 * Makes the execute-only copy once (copy, chmod 0111, rename into place). The kernel marks a
 * process that execs a binary it may not read as not dumpable (fs/exec.c, would_dump), and a task
 * that is not dumpable cannot be traced, nor its memory or environment read through /proc, by
 * anything without CAP_SYS_PTRACE over the host: the runner holds the capability in memory.
 */
export function prepareRunnerNode(path: string, node: string): string {
  try {
    const st = statSync(path);
    if (st.isFile() && (st.mode & 0o777) === RUNNER_NODE_MODE) return path;
  } catch {
    // not there yet
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const tmp = `${path}.${process.pid}.tmp`;
  copyFileSync(node, tmp);
  chmodSync(tmp, RUNNER_NODE_MODE);
  renameSync(tmp, path);
  return path;
}
