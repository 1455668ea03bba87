const MiB = 1024 * 1024;

/**
 * What one session may consume beyond its workspace. Each bound is enforced by the kernel, not by
 * the runner, and holds for a root caller and a user caller alike (docs/hardening.md measures
 * each).
 */
export const SESSION_LIMITS = {
  /** /tmp: a private tmpfs, so its bytes never reach the host disk and stop at this size. */
  tmpBytes: { value: 256 * MiB, why: "scratch space for the harness and its tools; ENOSPC past it" },
  /** HOME (<run>/home): a private tmpfs; the CLIs keep their config and transcripts there. */
  homeBytes: { value: 64 * MiB, why: "the CLIs' own state for one session; ENOSPC past it" },
  /**
   * Tasks (processes and threads) of the session's uid inside its user namespace: RLIMIT_NPROC for
   * a user caller, the pids cgroup's pids.max for a root one. node and Claude Code start about 12
   * threads each; a turn rarely needs more than a few dozen processes.
   */
  tasks: { value: 512, why: "a fork bomb stops at EAGAIN instead of filling the host's pid table" },
} as const;
