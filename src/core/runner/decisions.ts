import type { SessionFile } from "./session-file.ts";

/** The runner's exit codes (seed 000); RUNNER_EXITS in session/exit.ts maps them to launch end reasons. */
export const EXIT = {
  stopped: 0,
  badRunDir: 2,
  founderCredentials: 20,
  claimRefused: 21,
  sessionInvalid: 22,
  brokerUnreachable: 23,
} as const;

/** What one broker call came back as, seen by the runner. */
export type BrokerAnswer =
  | { kind: "ok"; result: unknown }
  | { kind: "error"; code: string; message: string }
  | { kind: "unreachable"; why: string };

/**
 * What an answer to role.claim means. A refusal is final (21); a dead capability or claim is 22;
 * no answer is 23: the host's recover() ends such a launch.
 */
export function claimOutcome(a: BrokerAnswer): { kind: "claimed" } | { kind: "exit"; code: number; why: string } {
  if (a.kind === "ok") return { kind: "claimed" };
  if (a.kind === "unreachable")
    return { kind: "exit", code: EXIT.brokerUnreachable, why: `role.claim got no answer: ${a.why}` };
  if (a.code === "refused") return { kind: "exit", code: EXIT.claimRefused, why: `role.claim refused: ${a.message}` };
  return { kind: "exit", code: EXIT.sessionInvalid, why: `role.claim: ${a.code}: ${a.message}` };
}

/** Codes that mean this session's capability or claim no longer works: the runner stops (22). */
const SESSION_GONE = new Set(["unauthenticated", "claim-revoked", "not-claimed"]);

/**
 * One poll's effect on the failed-poll count, and whether the runner must stop. A broker that
 * answers resets the count; `brokerRetries` failures in a row end the session (23).
 */
export function pollStep(
  failedSoFar: number,
  a: BrokerAnswer,
  retries: number,
): { failed: number; stop: { code: number; why: string } | null } {
  if (a.kind === "ok") return { failed: 0, stop: null };
  if (a.kind === "error" && SESSION_GONE.has(a.code))
    return { failed: 0, stop: { code: EXIT.sessionInvalid, why: `message.read: ${a.code}: ${a.message}` } }; // safety: runner-ignores-dead-cap
  const failed = failedSoFar + 1;
  if (failed >= retries)
    return {
      failed,
      stop: {
        code: EXIT.brokerUnreachable,
        why: `the broker failed ${failed} polls in a row (last: ${a.kind === "error" ? `${a.code}: ${a.message}` : a.why})`,
      },
    }; // safety: runner-polls-forever
  return { failed, stop: null };
}

export type Message = { id: string; from: string; kind: "message" | "result"; body: string; replyTo?: string };

/** A received message: a turn and a RESULT back to its sender, or nothing for an incoming RESULT. */
export function messageAction(m: Message): { kind: "turn" } | { kind: "ignore"; why: string } {
  if (m.kind === "result") return { kind: "ignore", why: "an incoming RESULT never gets an automatic reply" }; // safety: runner-replies-to-results
  return { kind: "turn" };
}

/** What a finished turn process looked like. */
export interface TurnRun {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  /** Pi: whether the extension's agent_end marker exists after the turn. */
  marker: boolean;
  /** A stream that passed its cap (session.json bounds.turn): the runner stopped reading it and killed the turn. */
  overCap: { stream: "stdout" | "stderr"; cap: number } | null;
}

export type TurnOutcome = { kind: "ok"; reply: string } | { kind: "failed"; why: string };

/** The final result of a Claude Code stream-json turn: the last `result` line that is not an error. */
function claudeResult(stdout: string): string | null {
  let result: string | null = null;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const m = JSON.parse(line) as { type?: string; is_error?: boolean; result?: unknown };
      if (m.type === "result") result = m.is_error === true || typeof m.result !== "string" ? null : m.result;
    } catch {
      // not a JSON line
    }
  }
  return result;
}

/**
 * Pi's JSON mode: the reply is the text of the last assistant message in the last agent_end event,
 * as print mode would write it; a last message that stopped on an error or abort is no reply.
 */
export function piReply(stdout: string): { reply: string } | { why: string } {
  let end: unknown = null;
  for (const line of stdout.split("\n")) {
    if (!line.includes('"agent_end"')) continue;
    try {
      const e = JSON.parse(line) as { type?: unknown };
      if (e.type === "agent_end") end = e;
    } catch {
      // not a JSON line
    }
  }
  if (end === null) return { why: "Pi's JSON stream has no agent_end event" };
  const messages = (end as { messages?: unknown }).messages;
  const last = Array.isArray(messages) ? messages.at(-1) : undefined;
  if (typeof last !== "object" || last === null || (last as { role?: unknown }).role !== "assistant")
    return { why: "Pi's agent_end event ends with no assistant message" };
  const m = last as { stopReason?: unknown; errorMessage?: unknown; content?: unknown };
  if (m.stopReason === "error" || m.stopReason === "aborted")
    return {
      why: `Pi's last message stopped on ${m.stopReason}: ${typeof m.errorMessage === "string" ? m.errorMessage : "no message"}`,
    };
  const text = (Array.isArray(m.content) ? m.content : [])
    .filter((c): c is { type: "text"; text: string } => c?.type === "text" && typeof c.text === "string")
    .map((c) => `${c.text}\n`)
    .join("");
  return { reply: text };
}

/**
 * Whether a turn counts (seed 000): it exits 0, within its wall clock, and its harness's turn-end
 * check holds: Pi's agent_end marker; a non-empty result line for Claude Code (without a writable
 * TMPDIR it exits 0 with empty output). Its output goes back as the RESULT.
 */
export function judgeTurn(turnEnd: SessionFile["turnEnd"], r: TurnRun, timeoutSeconds: number): TurnOutcome {
  if (r.overCap !== null)
    return {
      kind: "failed",
      why: `its ${r.overCap.stream} passed the ${r.overCap.cap}-byte cap (session.json bounds.turn.${r.overCap.stream}Bytes); the runner stopped reading it and killed the turn's processes`,
    };
  if (r.timedOut)
    return {
      kind: "failed",
      why: `the turn ran past its ${timeoutSeconds} s wall clock and was killed with its process group`,
    };
  if (r.signal !== null) return { kind: "failed", why: `the turn was killed by ${r.signal}` };
  if (r.code !== 0) return { kind: "failed", why: `the harness exited ${r.code}` };
  if (turnEnd.kind === "marker") {
    if (!r.marker)
      return {
        kind: "failed",
        why: "the harness exited 0 but never wrote its agent_end marker, so the gated turn did not end",
      }; // safety: runner-no-marker-check
    const pi = piReply(r.stdout);
    if ("why" in pi) return { kind: "failed", why: pi.why };
    return { kind: "ok", reply: pi.reply.trim() };
  }
  if (turnEnd.kind === "result-line") {
    const res = claudeResult(r.stdout);
    if (res === null || res.trim() === "")
      return { kind: "failed", why: "the harness exited 0 with no result (is TMPDIR writable?)" }; // safety: runner-empty-result-ok
    return { kind: "ok", reply: res };
  }
  return { kind: "ok", reply: r.stdout.trimEnd() };
}

/** The text a turn sends back to the message's sender. */
export function replyText(o: TurnOutcome): string {
  return o.kind === "ok" ? o.reply : `The turn failed: ${o.why}`;
}

/** turns/NNNN.stderr for the n-th turn (1-based). */
export function turnStderrName(n: number): string {
  return `${String(n).padStart(4, "0")}.stderr`;
}
