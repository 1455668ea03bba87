// The tool socket's wire format (docs/protocols.md, "Tool socket") as the typed-tool clients speak it:
// one request line out, one answer line back, and the text the model sees. Every answer that is not
// plainly this request's success reads as a refusal: a typed tool never pretends a call happened.

/** What a typed tool hands back to its harness: the model's text, and whether the call succeeded. */
export type ToolOutcome = { ok: true; text: string } | { ok: false; text: string };

/** The longest answer line a client reads; the protocol's limit for one line. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** One request line: the catalog name (never the harness's mcp__mosaic__ spelling) and its args. */
export function renderToolRequest(id: number, tool: string, args: unknown): string {
  return JSON.stringify({ id, tool, args: isObject(args) ? args : {} }) + "\n";
}

/** Why a call could not be made or its answer not be trusted, as the model's text. */
export type SocketProblem =
  | { kind: "no-socket-env"; variable: string }
  | { kind: "connect"; path: string; code: string }
  | { kind: "timeout"; ms: number }
  | { kind: "hang-up" }
  | { kind: "too-long" }
  | { kind: "garbled"; why: string };

/** How each connect error reads: whether the call could have reached the runner at all. */
const CONNECT_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "does not exist (the runner is not serving it)",
  ECONNREFUSED: "refused the connection (no runner is listening)",
  EACCES: "is not ours to open (permission denied)",
  ENOTSOCK: "is not a socket",
};

/** The fail-closed answer: a refusal that says the call did not happen, or may not have. */
export function failClosed(p: SocketProblem): ToolOutcome {
  const text = ((): string => {
    switch (p.kind) {
      case "no-socket-env":
        return `refused: ${p.variable} is not set, so there is no runner's tool socket to call; the call was not made`;
      case "connect":
        return `refused: the runner's tool socket ${p.path} ${CONNECT_ERRORS[p.code] ?? `could not be reached (${p.code})`}; the call was not made`;
      case "timeout":
        return `refused: the runner's tool socket did not answer within ${p.ms} ms; the call did not complete`;
      case "hang-up":
        return "refused: the runner's tool socket closed the connection without an answer; the call did not complete";
      case "too-long":
        return `refused: the runner's tool socket sent an answer longer than ${MAX_ANSWER_BYTES} bytes; the call did not complete`;
      case "garbled":
        return `refused: the runner's tool socket sent an answer that is not a tool answer (${p.why}); the call did not complete`;
    }
  })();
  return { ok: false, text }; // safety: tool-fail-open
}

/**
 * One answer line (without its newline) to request `id`, read as the model's text: `result` as
 * JSON on a literal `ok: true` with this request's id, `error` verbatim on `ok: false`.
 */
export function readToolAnswer(line: string, id: number): ToolOutcome {
  let answer: unknown;
  try {
    answer = JSON.parse(line);
  } catch {
    return failClosed({ kind: "garbled", why: "not JSON" });
  }
  if (!isObject(answer)) return failClosed({ kind: "garbled", why: "not a JSON object" });
  if (answer.ok === false) {
    // A refusal needs no matching id: the runner answers null when it could not read ours.
    if (typeof answer.error !== "string" || answer.error === "")
      return failClosed({ kind: "garbled", why: "ok is false without an error text" });
    return { ok: false, text: answer.error };
  }
  // safety: tool-ok-not-literal
  if (answer.ok !== true) return failClosed({ kind: "garbled", why: "ok is neither true nor false" });
  // safety: tool-answer-id-unchecked
  if (answer.id !== id)
    return failClosed({ kind: "garbled", why: `it answers request ${JSON.stringify(answer.id ?? null)}, not ${id}` });
  if (!("result" in answer)) return failClosed({ kind: "garbled", why: "ok is true without a result" });
  return { ok: true, text: JSON.stringify(answer.result) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
