import { dirname, join } from "node:path";
import type { HostFacts } from "../../core/sandbox/types.ts";
import { dropToSession } from "../../core/sandbox/identity.ts";
import { planCgroups } from "../../core/sandbox/cgroups.ts";
import { handOver } from "../../host/handover.ts";
import { makeSessionCgroups, removeSessionCgroups } from "../../host/session-cgroups.ts";
import { prepareRunnerNode } from "../../host/runner-node.ts";
import { prepareSeccompFile } from "../../host/sandbox-probe.ts";
import { spawnSandbox } from "../../host/sandbox-spawn.ts";
import { collectProcess, type ProcessResult } from "../processes/run-process.ts";

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
  /** Which of a root host's session cgroups to make; a control leaves one out. Default: both. */
  cgroups?: { pids: boolean; memory: boolean };
  /**
   * Run as the launcher runs a session: a root caller hands these trees (the workspace and run) to
   * the session's identity and drops to it before bwrap. Without it the command runs as given.
   */
  asSession?: { trees: readonly string[] };
}

/**
 * Runs one sandbox the way the launcher does (spawnSandbox: the seccomp program on its descriptor,
 * a root host's pids and memory cgroups) and collects its output. Killed with its whole group at the timeout.
 */
export async function runConfined(r: ConfinedRun): Promise<ProcessResult> {
  const stateDir = dirname(dirname(r.facts.runnerNode));
  prepareRunnerNode(r.facts.runnerNode, r.facts.node.path);
  const seccompFile = prepareSeccompFile(stateDir, r.facts.arch, r.seccomp);
  const want = r.cgroups ?? { pids: true, memory: true };
  const cg =
    r.facts.uid === 0
      ? makeSessionCgroups(
          planCgroups(
            { pids: want.pids ? r.facts.cgroups.pids : null, memory: want.memory ? r.facts.cgroups.memory : null },
            `live-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
          ),
        )
      : [];
  let command = r.command;
  if (r.asSession !== undefined && r.facts.uid === 0) {
    for (const t of r.asSession.trees) handOver(t, r.facts.session);
    command = [...dropToSession(r.facts), ...command];
  }
  try {
    const child = spawnSandbox({
      command,
      env: r.env,
      seccompFile,
      cgroupProcs: cg.map((c) => join(c, "cgroup.procs")),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const result = collectProcess(child, r.timeoutMs);
    child.stdin!.on("error", () => {});
    child.stdin!.end(r.stdin ?? "");
    return await result;
  } finally {
    // The pids of a dead sandbox leave the cgroup a moment after its last process exits.
    await removeSessionCgroups(cg);
  }
}
