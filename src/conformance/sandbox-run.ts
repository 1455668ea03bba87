import { dirname, join } from "node:path";
import type { HostFacts } from "../core/sandbox/types.ts";
import { SESSION_LIMITS } from "../core/sandbox/limits.ts";
import { makeSessionCgroup, removeSessionCgroup } from "../host/pids-cgroup.ts";
import { prepareRunnerNode } from "../host/runner-node.ts";
import { prepareSeccompFile } from "../host/sandbox-probe.ts";
import { spawnSandbox } from "../host/sandbox-spawn.ts";
import { collectProcess, type ProcessResult } from "./run-process.ts";

export interface ConfinedRun {
  /** bwrap's argv as planned (or changed on purpose by a control), possibly behind a wrapper. */
  command: string[];
  env: Record<string, string>;
  facts: HostFacts;
  timeoutMs: number;
  /** Bytes for the runner's stdin; closed after. */
  stdin?: string;
  /** A seccomp program other than the shipped one (a control with a rule dropped). */
  seccomp?: Uint8Array;
  /** false: no pids cgroup even as root (a control). */
  cgroup?: boolean;
}

/**
 * Runs one sandbox the way the launcher does (spawnSandbox: the seccomp program on its descriptor,
 * a root host's pids cgroup) and collects its output. Killed with its whole group at the timeout.
 */
export async function runConfined(r: ConfinedRun): Promise<ProcessResult> {
  const stateDir = dirname(dirname(r.facts.runnerNode));
  prepareRunnerNode(r.facts.runnerNode, r.facts.node.path);
  const seccompFile = prepareSeccompFile(stateDir, r.facts.arch, r.seccomp);
  const cg = r.cgroup !== false && r.facts.uid === 0 && r.facts.pidsCgroup !== null
    ? makeSessionCgroup(r.facts.pidsCgroup, `live-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, SESSION_LIMITS.tasks.value)
    : null;
  try {
    const child = spawnSandbox({ command: r.command, env: r.env, seccompFile, cgroupProcs: cg === null ? null : join(cg, "cgroup.procs"), stdio: ["pipe", "pipe", "pipe"] });
    const result = collectProcess(child, r.timeoutMs);
    child.stdin!.on("error", () => {});
    child.stdin!.end(r.stdin ?? "");
    return await result;
  } finally {
    if (cg !== null) {
      // The pids of a dead sandbox leave the cgroup a moment after its last process exits.
      for (let i = 0; i < 50 && !removeSessionCgroup(cg); i++) await new Promise((ok) => setTimeout(ok, 20));
    }
  }
}
