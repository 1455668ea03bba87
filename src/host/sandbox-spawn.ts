import { spawn, type ChildProcess, type IOType } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { SECCOMP_FD } from "../core/sandbox/bwrap-argv.ts";
import { TOOL_SOCKET_FD } from "../core/runner/run-paths.ts";

export interface SandboxSpawn {
  /** bwrap and its arguments (or a wrapper ending in them). */
  command: string[];
  /** The session's environment and nothing else (sessionEnv()). */
  env: Record<string, string>;
  /** The seccomp program's file (prepareSeccompFile); bwrap reads it from SECCOMP_FD. */
  seccompFile: string;
  /** A root host's session cgroups' cgroup.procs files: the process joins them before it execs bwrap. */
  cgroupProcs: readonly string[];
  stdio: [IOType, IOType, IOType];
  /** A listening socket the runner serves (tools.sock), passed as descriptor TOOL_SOCKET_FD. */
  toolSocketFd?: number;
  cwd?: string;
  /** A session of its own (setsid): no controlling terminal of the host's. Default: yes. */
  ownSession?: boolean;
}

/**
 * A command that first joins the cgroups: a shell writes its own pid into each cgroup.procs and
 * execs the rest, so everything after it is counted from the first fork, pid for pid the same.
 */
export function joinCgroups(cgroupProcs: readonly string[], command: readonly string[]): string[] {
  if (cgroupProcs.length === 0) return [...command]; // safety: cgroup-skipped
  return [
    "/bin/sh",
    "-c",
    // A cgroup it cannot join ends the launch here: the command never runs unbounded.
    'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"', // safety: cgroup-join-failure-ignored
    "sh",
    ...cgroupProcs,
    "--",
    ...command,
  ];
}

/**
 * Starts a sandbox. With cgroups, a shell joins them and execs the command (setpriv, then bwrap),
 * so bwrap and everything under it are counted from the first fork; the process is still bwrap,
 * pid for pid, which is what recover() looks for.
 */
export function spawnSandbox(s: SandboxSpawn): ChildProcess {
  const fd = openSync(s.seccompFile, "r");
  try {
    const [cmd, ...args] = joinCgroups(s.cgroupProcs, s.command);
    const stdio: Array<IOType | number> = [...s.stdio];
    stdio[SECCOMP_FD] = fd;
    if (s.toolSocketFd !== undefined) stdio[TOOL_SOCKET_FD] = s.toolSocketFd;
    return spawn(cmd!, args, { env: s.env, stdio, cwd: s.cwd, detached: s.ownSession ?? true });
  } finally {
    // The child holds its own copy of the descriptor from here on.
    closeSync(fd);
  }
}
