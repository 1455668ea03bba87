import { SESSION_LIMITS } from "./limits.ts";
import type { Bind, HostFacts, SandboxSpec } from "./types.ts";

/**
 * The namespaces every session gets; the runner is pid 1 of its own PID namespace, and the session's
 * network is its own loopback: its only way out is the model port the runner forwards to the host.
 * Its own UTS namespace keeps kernel.hostname and kernel.domainname its own, and its own cgroup
 * namespace keeps the host's cgroup paths out of /proc/self/cgroup.
 */
export const NAMESPACES = [
  "--unshare-user",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-net",
  "--unshare-uts",
  "--unshare-cgroup",
  "--as-pid-1",
] as const; // safety: no-pid-namespace // safety: die-with-parent // safety: no-unshare-net // safety: no-unshare-uts // safety: no-unshare-cgroup

/** The descriptor bwrap reads the seccomp program from; the host passes the bytes on it. */
export const SECCOMP_FD = 3;

/**
 * What every session gives up beyond the namespaces, each with why. bwrap applies all of them to
 * the runner before it execs it; the seccomp program arrives on SECCOMP_FD.
 */
export const HARDENING: readonly { args: readonly string[]; why: string }[] = [
  {
    args: ["--cap-drop", "ALL"],
    why: "a root caller keeps every capability inside the user namespace otherwise: remount, umount, mknod",
  }, // safety: no-cap-drop
  {
    args: ["--disable-userns"],
    why: "a nested user namespace lets a pivot_root detach the read-only binds, then a rename replaces them",
  }, // safety: no-disable-userns
  {
    args: ["--assert-userns-disabled"],
    why: "bwrap fails rather than start a session in which user namespaces still work",
  },
  {
    args: ["--new-session"],
    why: "no controlling terminal, so TIOCSTI cannot push keystrokes into the terminal outside",
  }, // safety: no-new-session
  {
    args: ["--seccomp", String(SECCOMP_FD)],
    why: "the seccomp filter (seccomp.ts): ptrace, the mount family, namespaces, io_uring, bpf, TIOCSTI",
  }, // safety: no-seccomp
];

export function bindArgs(b: Bind): string[] {
  switch (b.mode) {
    case "ro":
      return ["--ro-bind", b.source!, b.inside];
    case "ro-try":
      return ["--ro-bind-try", b.source!, b.inside];
    case "rw":
      return ["--bind", b.source!, b.inside];
    case "symlink":
      return ["--symlink", b.source!, b.inside];
    case "private":
      return b.inside === "/proc" ? ["--proc", "/proc"] : ["--dev", b.inside];
    case "tmpfs":
      return [
        ...(b.perms !== undefined ? ["--perms", b.perms] : []),
        ...(b.size !== undefined ? ["--size", String(b.size)] : []),
        "--tmpfs",
        b.inside,
      ];
    case "ro-empty":
      return ["--perms", "0555", "--tmpfs", b.inside, "--remount-ro", b.inside];
  }
}

/**
 * The runner's command after bwrap's `--`. setpriv's parent-death signal, not bwrap's
 * --die-with-parent: the runner dies with its bwrap, while bwrap outlives a host that died hard,
 * so the next host can find and end the session. prlimit bounds the session's tasks and each
 * process's writable memory (a root caller's session also has its cgroups). The runner runs on the
 * execute-only node.
 */
export function runnerCommand(spec: SandboxSpec, facts: HostFacts): string[] {
  return [...runnerPrefix(facts), spec.runner, spec.runDir];
}

/** The runner's command up to its script: what the probe runs too, with `-e 0` for the script. */
export function runnerPrefix(facts: Pick<HostFacts, "runnerNode">): string[] {
  return [
    "setpriv",
    "--pdeathsig",
    "KILL",
    "--", // safety: no-pdeathsig
    "prlimit",
    `--nproc=${SESSION_LIMITS.tasks.value}`, // safety: nproc-unbounded
    `--data=${SESSION_LIMITS.dataBytes.value}`,
    "--", // safety: data-unbounded
    facts.runnerNode, // safety: runner-node-readable
  ];
}

/**
 * The whole bwrap command line for one session, seed 002's shape. The environment is not in argv
 * (it would show in /proc/<pid>/cmdline); the host passes sessionEnv() to the spawn instead.
 */
export function bwrapArgv(spec: SandboxSpec, facts: HostFacts, table: Bind[]): string[] {
  return [
    "bwrap",
    ...NAMESPACES,
    ...HARDENING.flatMap((h) => h.args),
    ...table.flatMap(bindArgs),
    "--remount-ro",
    "/", // safety: no-remount-ro
    "--setenv",
    "HOME",
    `${spec.runDir}/home`, // safety: host-home
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--chdir",
    spec.runDir,
    "--",
    ...runnerCommand(spec, facts),
  ];
}
