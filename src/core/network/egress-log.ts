// The host's egress log for one run: every allowed model call, and refusals up to a budget. A
// refused request costs the session nothing, and its path and reason are the session's own words,
// so unbounded it would let the session fill the host's disk: each line is bounded, the first
// refusals are kept, and after them only counts, in summary lines at 1, 2, 4, 8 ... suppressed.
import type { EgressRecord } from "./egress.ts";

export const EGRESS_LOG_BUDGET = {
  methodChars: { value: 16, why: "every real method is shorter; the session chooses the string" },
  pathChars: { value: 256, why: "enough to see what was tried; the session chooses the path" },
  whyChars: { value: 512, why: "a refusal's reason quotes the session's path, beta or field" },
  lineBytes: { value: 1024, why: "one line, however the session's strings escape" },
  refusedKept: { value: 64, why: "enough refusals to read an attempt; past them only counts" },
} as const;

/** A line that stands for suppressed refusals: how many, by status, so far. */
export type EgressSummary = {
  time: string;
  outcome: "refused-summary";
  refused: number;
  suppressed: number;
  byStatus: Record<string, number>;
};

export type LogState = {
  refused: number;
  kept: number;
  suppressed: number;
  summarised: number;
  byStatus: Record<string, number>;
};

export const LOG_START: LogState = { refused: 0, kept: 0, suppressed: 0, summarised: 0, byStatus: {} };

const bytes = (s: string) => new TextEncoder().encode(s).length;

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}…(+${s.length - n})`;
}

/** One record as one JSON line of at most lineBytes: the session's strings cut, shorter until it fits. */
export function renderRecord(r: EgressRecord): string {
  const B = EGRESS_LOG_BUDGET;
  for (let shift = 0; ; shift++) {
    // safety: log-line-bounded
    const line = JSON.stringify({
      ...r,
      method: cut(r.method, B.methodChars.value >> shift),
      path: cut(r.path, B.pathChars.value >> shift),
      ...(r.why !== undefined ? { why: cut(r.why, B.whyChars.value >> shift) } : {}),
    });
    if (bytes(line) <= B.lineBytes.value || shift > 16) return line;
  }
}

function summary(s: LogState, time: string): string {
  const line: EgressSummary = {
    time,
    outcome: "refused-summary",
    refused: s.refused,
    suppressed: s.suppressed,
    byStatus: s.byStatus,
  };
  return JSON.stringify(line);
}

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

/**
 * What one request adds to the log: an allowed call always its line; a refusal its line while
 * fewer than refusedKept were kept, then nothing but a summary line each time the suppressed count
 * reaches a power of two.
 */
export function planLogLine(s: LogState, r: EgressRecord): { state: LogState; lines: string[] } {
  if (r.outcome === "allowed") return { state: s, lines: [renderRecord(r)] };
  const byStatus = { ...s.byStatus, [String(r.status)]: (s.byStatus[String(r.status)] ?? 0) + 1 };
  if (s.kept < EGRESS_LOG_BUDGET.refusedKept.value)
    // safety: refused-lines-kept-bounded
    return { state: { ...s, refused: s.refused + 1, kept: s.kept + 1, byStatus }, lines: [renderRecord(r)] };
  const next: LogState = { ...s, refused: s.refused + 1, suppressed: s.suppressed + 1, byStatus };
  if (!isPowerOfTwo(next.suppressed)) return { state: next, lines: [] };
  return { state: { ...next, summarised: next.suppressed }, lines: [summary(next, r.time)] };
}

/** The last summary when the proxy closes, for refusals suppressed since the last one. */
export function closingLines(s: LogState, time: string): string[] {
  return s.suppressed > s.summarised ? [summary(s, time)] : [];
}

/** A line that says the session's proxy process ended before its close: the session has no model from then on. */
export type EgressProxyEnded = { time: string; outcome: "proxy-ended"; why: string };

/**
 * The line the host writes when a session's proxy process ends on its own (a crash, its heap's
 * bound): at most one per run, in place of the closing summary the process could not write.
 */
export function proxyEndedLine(time: string, why: string): string {
  const B = EGRESS_LOG_BUDGET;
  for (let shift = 0; ; shift++) {
    const line: EgressProxyEnded = { time, outcome: "proxy-ended", why: cut(why, B.whyChars.value >> shift) };
    const text = JSON.stringify(line);
    if (bytes(text) <= B.lineBytes.value || shift > 16) return text;
  }
}

/**
 * The most bytes a run's log can hold, given its allowed calls: each line at most lineBytes;
 * refusals at most refusedKept lines, plus one summary per power of two suppressed (53 below 2^53)
 * and the closing one (or the proxy-ended line in its place).
 */
export function egressLogBound(allowed: number): number {
  const B = EGRESS_LOG_BUDGET;
  return (allowed + B.refusedKept.value + 53 + 1) * (B.lineBytes.value + 1);
}
