// The broker's wire format (docs/protocols.md, "Broker"): newline-delimited JSON, one request per
// line, one response line per request line. Pure: bytes in, typed lines out; typed responses in,
// text out.

/** A line longer than this (its bytes before the `\n`, a `\r` included) is refused unread. */
export const MAX_LINE_BYTES = 1024 * 1024;

export type RequestId = string | number;

export interface BrokerRequest {
  id: RequestId;
  cap: string;
  verb: string;
  args: Record<string, unknown>;
}

export type ErrorCode =
  | "bad-request"
  | "unauthenticated"
  | "claim-revoked"
  | "refused"
  | "unknown-verb"
  | "not-claimed";

export type BrokerResponse =
  | { id: RequestId; ok: true; result: unknown }
  | { id: RequestId | null; ok: false; error: { code: ErrorCode; message: string } };

/** One line as read: a request, or why it is not one (`field` names what is wrong, `line` for the whole). */
export type ParsedLine =
  | { kind: "request"; request: BrokerRequest }
  | { kind: "bad"; id: RequestId | null; field: string; reason: string };

/** The fields of a request: anything else on the line is a caller's mistake, refused by name. */
const REQUEST_FIELDS = new Set(["id", "cap", "verb", "args"]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function bad(id: RequestId | null, field: string, reason: string): ParsedLine {
  return { kind: "bad", id, field, reason };
}

/** Parses one line's text (no `\n`). Never throws. */
export function parseRequest(text: string): ParsedLine {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return bad(null, "line", `not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isPlainObject(doc)) return bad(null, "line", "not a JSON object");
  const id = doc.id;
  // A non-finite number cannot be echoed: JSON has no Infinity.
  if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id))))
    return bad(null, "id", "must be a string or a finite number");
  const extra = Object.keys(doc).find((k) => !REQUEST_FIELDS.has(k));
  if (extra !== undefined) return bad(id, extra, "not a field of a request (id, cap, verb, args)");
  if (typeof doc.cap !== "string") return bad(id, "cap", "must be a string");
  if (typeof doc.verb !== "string" || doc.verb === "") return bad(id, "verb", "must be a non-empty string");
  if (!isPlainObject(doc.args)) return bad(id, "args", "must be a JSON object");
  return { kind: "request", request: { id, cap: doc.cap, verb: doc.verb, args: doc.args } };
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Decodes and parses one framed line; null for an empty line (a bare `\n` or `\r\n`), which gets no response. */
export function parseLineBytes(bytes: Uint8Array): ParsedLine | null {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return bad(null, "line", "not valid UTF-8");
  }
  if (text.endsWith("\r")) text = text.slice(0, -1);
  return text === "" ? null : parseRequest(text);
}

/** The pieces of an unfinished line, newest first: appending is O(1) without mutating an older state. */
export type Pieces = { readonly piece: Uint8Array; readonly prev: Pieces } | null;

/** Bytes of a line not yet ended, or the rest of an over-long line being skipped. */
export interface Framer {
  readonly max: number;
  readonly pending: Pieces;
  readonly pendingBytes: number;
  /** Inside an over-long line, already reported: its bytes are dropped up to the next `\n`. */
  readonly skipping: boolean;
}

export type Frame = { kind: "line"; bytes: Uint8Array } | { kind: "too-long" };

export function newFramer(max = MAX_LINE_BYTES): Framer {
  return { max, pending: null, pendingBytes: 0, skipping: false };
}

function joinBytes(pending: Pieces, last: Uint8Array, total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = total - last.length;
  out.set(last, at);
  for (let p = pending; p !== null; p = p.prev) {
    at -= p.piece.length;
    out.set(p.piece, at);
  }
  return out;
}

/**
 * Splits a chunk into complete lines, carrying an unfinished line into the next call. Splitting on
 * the byte 0x0A is safe mid-character: UTF-8 never uses it inside a multi-byte sequence. An
 * over-long line yields one `too-long` as soon as it passes `max`, so it is never buffered whole.
 */
export function pushChunk(framer: Framer, chunk: Uint8Array): { framer: Framer; frames: Frame[] } {
  const frames: Frame[] = [];
  let { pending, pendingBytes, skipping } = framer;
  let start = 0;
  while (start <= chunk.length) {
    const nl = chunk.indexOf(0x0a, start);
    const end = nl === -1 ? chunk.length : nl;
    const piece = chunk.subarray(start, end);
    if (!skipping && pendingBytes + piece.length > framer.max) {
      frames.push({ kind: "too-long" });
      skipping = true;
      pending = null;
      pendingBytes = 0;
    }
    if (nl === -1) {
      if (!skipping && piece.length > 0) {
        // A copy: the caller may reuse the chunk's memory.
        pending = { piece: piece.slice(), prev: pending };
        pendingBytes += piece.length;
      }
      break;
    }
    if (!skipping) frames.push({ kind: "line", bytes: joinBytes(pending, piece, pendingBytes + piece.length) });
    pending = null;
    pendingBytes = 0;
    skipping = false;
    start = nl + 1;
  }
  return { framer: { max: framer.max, pending, pendingBytes, skipping }, frames };
}

/** One frame as a parsed line; null for an empty line. */
export function parseFrame(frame: Frame, max: number): ParsedLine | null {
  return frame.kind === "too-long" ? bad(null, "line", `longer than ${max} bytes`) : parseLineBytes(frame.bytes);
}

/** Frames and parses a chunk: one ParsedLine per complete non-empty line, in order. */
export function readLines(framer: Framer, chunk: Uint8Array): { framer: Framer; lines: ParsedLine[] } {
  const r = pushChunk(framer, chunk);
  const lines = r.frames.map((f) => parseFrame(f, framer.max)).filter((l): l is ParsedLine => l !== null);
  return { framer: r.framer, lines };
}

/** The error response for a line that is not a request; the message names the field. */
export function badRequestResponse(line: Extract<ParsedLine, { kind: "bad" }>): BrokerResponse {
  return { id: line.id, ok: false, error: { code: "bad-request", message: `${line.field}: ${line.reason}` } };
}

export function renderResponse(r: BrokerResponse): string {
  return JSON.stringify(r) + "\n";
}

export function renderRequest(r: BrokerRequest): string {
  return JSON.stringify({ id: r.id, cap: r.cap, verb: r.verb, args: r.args }) + "\n";
}
