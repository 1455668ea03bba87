/**
 * Mode of the runner's node: execute only, for everyone, the owner included. The kernel marks a
 * process that execs a binary it may not read as not dumpable (fs/exec.c, would_dump), and a task
 * that is not dumpable cannot be traced, nor its memory or environment read through /proc, by
 * anything without CAP_SYS_PTRACE over the host: the runner holds the capability in memory.
 */
export const RUNNER_NODE_MODE = 0o111; // safety: runner-node-mode
