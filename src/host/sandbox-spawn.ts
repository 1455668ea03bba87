import { spawn, type ChildProcess, type IOType } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { SECCOMP_FD } from "../core/sandbox/bwrap-argv.ts";

export interface SandboxSpawn {
  /** bwrap and its arguments (or a wrapper ending in them). */
  command: string[];
  /** The session's environment and nothing else (sessionEnv()). */
  env: Record<string, string>;
  /** The seccomp program's file (prepareSeccompFile); bwrap reads it from SECCOMP_FD. */
  seccompFile: string;
  /** A root host's session cgroup: the process joins it before it execs bwrap. */
  cgroupProcs: string | null;
  stdio: [IOType, IOType, IOType];
  cwd?: string;
}

/**
 * Starts a sandbox. With a cgroup, a shell writes its own pid into cgroup.procs and execs bwrap,
 * so bwrap and everything under it are counted from the first fork; the process is still bwrap,
 * pid for pid, which is what recover() looks for.
 */
export function spawnSandbox(s: SandboxSpawn): ChildProcess {
  const fd = openSync(s.seccompFile, "r");
  try {
    const [cmd, ...args] = s.cgroupProcs === null // safety: cgroup-skipped
      ? s.command
      : ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', s.cgroupProcs, ...s.command];
    const stdio: Array<IOType | number> = [...s.stdio];
    stdio[SECCOMP_FD] = fd;
    return spawn(cmd!, args, { env: s.env, stdio, cwd: s.cwd, detached: true });
  } finally {
    // The child holds its own copy of the descriptor from here on.
    closeSync(fd);
  }
}
