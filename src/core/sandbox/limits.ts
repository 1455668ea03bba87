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
  /** /dev/shm: bwrap's --dev leaves it on /dev's tmpfs, which holds half the host's RAM. */
  shmBytes: { value: 64 * MiB, why: "POSIX shared memory for the harness's tools; ENOSPC past it, not the host's RAM" },
  /**
   * RLIMIT_DATA of every process (prlimit --data, both callers): the private writable memory it
   * may map. Unlike RLIMIT_AS it leaves out V8's and JavaScriptCore's PROT_NONE reservations
   * (about 9.4 GiB of address space each for node and Claude Code), so it bounds what a process
   * can touch. node needs 576 MiB of it to start; a Claude Code turn peaks near 200 MiB resident.
   */
  dataBytes: { value: 2048 * MiB, why: "one process cannot allocate the host's memory; allocation fails past it" },
  /**
   * The whole session's memory (a root caller's memory cgroup: memory.max, or v1's
   * memory.limit_in_bytes): the runner, every turn and whatever they start, together. A user caller
   * has no memory controller it may write; only dataBytes bounds it, per process (docs/hardening.md).
   */
  memoryBytes: {
    value: 3072 * MiB,
    why: "many processes together cannot take the host's memory; the kernel's OOM killer ends the largest",
  },
} as const;
