import type { Bus } from "./launcher.ts";
import type { LaunchRegistry } from "./launch-registry.ts";
import { removeSessionCgroups } from "./session-cgroups.ts";
import { removeMountStubs } from "./mount-stubs.ts";
import { childrenOf, findSessionBwraps, isAlive } from "./session-procs.ts";
import { checkWorkspace } from "./workspace-check.ts";
import type { WorkspaceCheck } from "../core/workspace/remedy.ts";
import { runSockets } from "../core/runner/run-paths.ts";
import { rmSync } from "node:fs";
import { releaseWorkspaceLock } from "./workspace-lock.ts";

/**
 * What the next host does about sessions a host that died hard left behind (seed 002): finds each
 * open launch's bwrap by its command line, kills it and its runner, voids the run's capabilities,
 * removes its mount stubs, cgroup and sockets, checks its workspace as a session's end does, and ends the
 * launch as host-lost.
 */
export async function recover(
  registry: LaunchRegistry,
  bus: Pick<Bus, "endRun">,
): Promise<Array<{ run: string; killed: number[]; survivors: number[]; workspace: WorkspaceCheck | null }>> {
  const out: Array<{ run: string; killed: number[]; survivors: number[]; workspace: WorkspaceCheck | null }> = [];
  for (const r of registry.open()) {
    // Voided first: a runner that somehow outlives its bwrap stops at its next poll.
    bus.endRun(r.run);
    const bwraps = findSessionBwraps(r.runDir);
    // Found before the kill: a runner that outlives its bwrap is no longer its child after it.
    const runners = bwraps.flatMap(childrenOf); // safety: recover-runners-after-kill
    const killed: number[] = [];
    for (const pid of bwraps) {
      try {
        process.kill(pid, "SIGKILL");
        killed.push(pid);
      } catch {
        // already gone
      }
    }
    // The runner dies with its bwrap (setpriv --pdeathsig); whatever is left after a second is killed too.
    for (let i = 0; i < 50 && [...bwraps, ...runners].some(isAlive); i++) await new Promise((ok) => setTimeout(ok, 20));
    const survivors = runners.filter(isAlive);
    for (const pid of survivors) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    removeMountStubs(r.mountStubs);
    await removeSessionCgroups(r.cgroups ?? []);
    // The dead host's sockets: nothing listens on them, and they name the run to whoever looks.
    for (const s of [runSockets(r.runDir).tools, runSockets(r.runDir).model]) rmSync(s, { force: true }); // safety: recover-sockets
    const workspace =
      r.workspace !== undefined && r.quarantine !== undefined ? checkWorkspace(r.workspace, r.quarantine) : null; // safety: ws-check-on-recover
    registry.end(
      r.run,
      "host-lost",
      bwraps.length > 0 ? `found by its command line and killed (bwrap ${killed.join(", ")})` : "no process left",
      workspace,
    );
    // Only now may another launch use the workspace: nothing of the session runs, and it is checked.
    if (r.lock !== undefined) releaseWorkspaceLock(r.lock, r.run); // safety: recover-keeps-lock
    if (r.uidLock !== undefined) releaseWorkspaceLock(r.uidLock, r.run);
    if (r.identityDir !== undefined) rmSync(r.identityDir, { recursive: true, force: true });
    out.push({ run: r.run, killed, survivors, workspace });
  }
  return out;
}
