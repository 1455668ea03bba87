import type { Bind, HostFacts, SandboxSpec } from "./types.ts";

/** The namespaces every session gets; the runner is pid 1 of its own PID namespace. */
export const NAMESPACES = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--as-pid-1"] as const; // safety: no-pid-namespace // safety: die-with-parent

export function bindArgs(b: Bind): string[] {
  switch (b.mode) {
    case "ro":
      return ["--ro-bind", b.source!, b.inside];
    case "rw":
      return ["--bind", b.source!, b.inside];
    case "symlink":
      return ["--symlink", b.source!, b.inside];
    case "private":
      return b.inside === "/proc" ? ["--proc", "/proc"] : ["--dev", b.inside];
  }
}

/**
 * The runner's command after bwrap's `--`. setpriv's parent-death signal, not bwrap's
 * --die-with-parent: the runner dies with its bwrap, while bwrap outlives a host that died hard,
 * so the next host can find and end the session.
 */
export function runnerCommand(spec: SandboxSpec, facts: HostFacts): string[] {
  return ["setpriv", "--pdeathsig", "KILL", "--", facts.node.path, spec.runner, spec.runDir]; // safety: no-pdeathsig
}

/**
 * The whole bwrap command line for one session, seed 002's shape. The environment is not in argv
 * (it would show in /proc/<pid>/cmdline); the host passes sessionEnv() to the spawn instead.
 */
export function bwrapArgv(spec: SandboxSpec, facts: HostFacts, table: Bind[]): string[] {
  return [
    "bwrap",
    ...NAMESPACES,
    ...table.flatMap(bindArgs),
    "--remount-ro", "/", // safety: no-remount-ro
    "--setenv", "HOME", `${spec.runDir}/home`, // safety: host-home
    "--setenv", "TMPDIR", "/tmp",
    "--chdir", spec.runDir,
    "--",
    ...runnerCommand(spec, facts),
  ];
}
