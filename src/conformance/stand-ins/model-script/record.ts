import { createHmac, randomBytes } from "node:crypto";

/** How the scripted API answered one request. Failures are `unmatched` and `handler-threw`. */
export type Served =
  | { kind: "turn"; turn: number }
  | { kind: "head" }
  | { kind: "handled" }
  | { kind: "unmatched"; message: string }
  | { kind: "handler-threw"; message: string; turn?: number };

export interface RecordedRequest {
  /** 1, 2, ... in arrival order. */
  seq: number;
  method: string;
  /** Path and query, as the client sent them. */
  url: string;
  /** Lower-case names; a credential's value is replaced by `<redacted:…>`. */
  headers: Record<string, string>;
  body: string;
  served: Served;
  status: number;
}

export type ScriptFailure = {
  kind: "unmatched" | "handler-threw";
  seq: number;
  method: string;
  url: string;
  message: string;
};

/** Headers that carry a credential, and why; any name matching CREDENTIAL_NAME is redacted too. */
export const CREDENTIAL_HEADERS = {
  "x-api-key": "ANTHROPIC_API_KEY, or the proxy's real key",
  authorization: "ANTHROPIC_AUTH_TOKEN as a bearer token",
  "anthropic-api-key": "a key under its own name",
  "proxy-authorization": "a proxy's credential",
  cookie: "a session cookie",
  "set-cookie": "a session cookie",
} as const;

export const CREDENTIAL_NAME = /token|key|secret|auth|cookie|passw|credential/i;

/**
 * Keeps what reached the scripted API: every request, its headers with credential values
 * replaced by a keyed hash (so two values can be told apart and a known value recognised, but
 * none is stored), its body, and how it was answered.
 */
export class ScriptRecorder {
  private readonly log: RecordedRequest[] = [];
  private readonly byRequest = new WeakMap<Request, RecordedRequest>();
  private readonly key: Buffer;
  private readonly extra: ReadonlySet<string>;
  private readonly onFailure: (f: ScriptFailure) => void;

  constructor(opts: { redact?: readonly string[]; onFailure?: (f: ScriptFailure) => void } = {}) {
    // A key per recorder: a marker in a saved record cannot be checked against a guessed value.
    this.key = randomBytes(32);
    this.extra = new Set((opts.redact ?? []).map((h) => h.toLowerCase()));
    this.onFailure = opts.onFailure ?? (() => {});
  }

  isCredential(header: string): boolean {
    const h = header.toLowerCase();
    return Object.hasOwn(CREDENTIAL_HEADERS, h) || CREDENTIAL_NAME.test(h) || this.extra.has(h);
  }

  /** The marker a credential value is recorded as. */
  markerFor(value: string): string {
    return `<redacted:${createHmac("sha256", this.key).update(value).digest("hex").slice(0, 16)}>`;
  }

  redact(headers: Headers): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of headers) out[name] = this.isCredential(name) ? this.markerFor(value) : value;
    return out;
  }

  /** Records a request before any handler runs, so a handler can mark it. */
  record(request: Request, body: string): RecordedRequest {
    const u = new URL(request.url);
    const r: RecordedRequest = {
      seq: this.log.length + 1,
      method: request.method,
      url: u.pathname + u.search,
      headers: this.redact(request.headers),
      body,
      served: { kind: "handled" },
      status: 0,
    };
    this.log.push(r);
    this.byRequest.set(request, r);
    return r;
  }

  /** The request's sequence number, or 0 for a request this recorder never saw. */
  seqOf(request: Request): number {
    return this.byRequest.get(request)?.seq ?? 0;
  }

  mark(request: Request, served: Served): void {
    const r = this.byRequest.get(request);
    if (r) r.served = served;
  }

  /** Sets the status sent, and reports a failure once the answer is known. */
  finish(r: RecordedRequest, status: number): void {
    r.status = status;
    const f = failureOf(r);
    if (f) this.onFailure(f);
  }

  requests(): readonly RecordedRequest[] {
    return this.log;
  }

  failures(): ScriptFailure[] {
    return this.log.flatMap((r) => failureOf(r) ?? []);
  }

  /** Whether any request carried `value` in `header`, compared by marker: the value itself is never stored. */
  credentialSeen(header: string, value: string): boolean {
    const h = header.toLowerCase();
    // A header kept in clear never equals a marker: asking about one would always say no.
    if (!this.isCredential(h)) throw new Error(`credentialSeen: ${h} is not redacted; read it from requests() instead`);
    const m = this.markerFor(value);
    return this.log.some((r) => r.headers[h] === m);
  }
}

function failureOf(r: RecordedRequest): ScriptFailure | undefined {
  const s = r.served;
  return s.kind === "unmatched" || s.kind === "handler-threw"
    ? { kind: s.kind, seq: r.seq, method: r.method, url: r.url, message: s.message }
    : undefined;
}
