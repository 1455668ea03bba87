import { chmodSync, copyFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { RUNNER_NODE_MODE } from "../core/sandbox/runner-node.ts";

/**
 * Where the execute-only copy of `node` lives: keyed by node's version and size, so an upgrade gets
 * a fresh copy and a reused one is the same build.
 */
export function runnerNodePath(stateDir: string, node: string, version: string): string {
  return join(stateDir, "runner-node", `node-${version}-${statSync(node).size}`);
}

/**
 * Makes the runner's copy of node once (copy, chmod to `mode`, rename into place): execute-only
 * unless a positive control asks for a readable one (RUNNER_NODE_MODE says why).
 */
export function prepareRunnerNode(path: string, node: string, mode: number = RUNNER_NODE_MODE): string {
  try {
    const st = statSync(path);
    if (st.isFile() && (st.mode & 0o777) === mode) return path;
  } catch {
    // not there yet
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const tmp = `${path}.${process.pid}.tmp`;
  copyFileSync(node, tmp);
  chmodSync(tmp, mode);
  renameSync(tmp, path);
  return path;
}
