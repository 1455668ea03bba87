/** How a session's process ended, as the launcher records it. */
export type SessionEnd = { kind: "code"; code: number } | { kind: "signal"; signal: string; ending: "killed" };

/** Linux signal numbers; bwrap reports a child killed by signal n as exit 128+n. */
// safety: signal-table-gap
const SIGNALS: Readonly<Record<number, string>> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
  16: "SIGSTKFLT",
  17: "SIGCHLD",
  18: "SIGCONT",
  19: "SIGSTOP",
  20: "SIGTSTP",
  21: "SIGTTIN",
  22: "SIGTTOU",
  23: "SIGURG",
  24: "SIGXCPU",
  25: "SIGXFSZ",
  26: "SIGVTALRM",
  27: "SIGPROF",
  28: "SIGWINCH",
  29: "SIGIO",
  30: "SIGPWR",
  31: "SIGSYS",
};

/**
 * Maps what the host saw of bwrap's exit to how the session ended. bwrap passes a runner killed by
 * signal n on as exit 128+n; that is a kill, not a runner exit code.
 */
export function sessionExit(code: number | null, signal: string | null): SessionEnd {
  if (signal !== null) return { kind: "signal", signal, ending: "killed" };
  if (code === null) return { kind: "code", code: -1 };
  const name = code > 128 ? SIGNALS[code - 128] : undefined; // safety: exit-code-not-mapped
  return name !== undefined ? { kind: "signal", signal: name, ending: "killed" } : { kind: "code", code };
}

type RunnerExit = { code: number; meaning: string; endReason: string };

/** The runner's exit codes (seed 000) and the launch end reason each one records. */
export const RUNNER_EXITS: readonly RunnerExit[] = [
  { code: 0, meaning: "stopped", endReason: "stopped" },
  { code: 2, meaning: "bad run directory or stdin", endReason: "failed" },
  { code: 20, meaning: "founder credentials", endReason: "founder-credentials" },
  { code: 21, meaning: "role.claim refused", endReason: "claim-refused" },
  {
    code: 22,
    meaning: "the capability or claim stopped working (run ended, claim revoked)",
    endReason: "session-invalid",
  },
  {
    code: 23,
    meaning: "role.claim got no answer, or the broker stayed unreachable for brokerRetries polls",
    endReason: "broker-unreachable",
  },
];

/** The launch end reason for a runner exit code; any code not in the table is a failure. */
export function launchEndReason(code: number): string {
  return RUNNER_EXITS.find((e) => e.code === code)?.endReason ?? "failed";
}
