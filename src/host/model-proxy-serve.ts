// The model proxy's HTTP server, in the session's proxy process (model-proxy-main.ts): each request
// in three steps, its head decided (core/network/model-call.ts), its body read within the bounds,
// its body decided and forwarded, each refusal logged before it is answered. Every stream, socket
// and server has an error handler, and each request's steps run in one promise whose failure
// answers that request: nothing a session sends throws out of an event handler.
import { appendFileSync, mkdirSync } from "node:fs";
import {
  request as httpRequest,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { dirname } from "node:path";
import { pipeline } from "node:stream/promises";
import {
  downstreamHeaders,
  egressErrorBody,
  upstreamHeaders,
  type EgressRecord,
  type NetworkMode,
  type UpstreamCredential,
} from "../core/network/egress.ts";
import { closingLines, LOG_START, planLogLine, type LogState } from "../core/network/egress-log.ts";
import type { ModelGrant } from "../core/network/grants.ts";
import {
  decideModelCall,
  decideRequestHead,
  type ProxyPolicy,
  type Refusal,
  type RequestHead,
} from "../core/network/model-call.ts";
import { decideBodySize, type ProxyLimits } from "../core/network/proxy-limits.ts";

/** What the proxy's process is given (on its stdin): everything but the socket, which it inherits listening. */
export type ProxyConfig = {
  upstream: string;
  credential: UpstreamCredential | null;
  mode: NetworkMode;
  egressLog: string;
  grants: readonly ModelGrant[];
  limits: ProxyLimits;
};

export type EgressLogger = { write(r: EgressRecord): void; close(): void };

/** The run's log, through its budget (core/network/egress-log.ts): allowed calls all, refusals bounded. */
export function egressLogger(file: string): EgressLogger {
  let state: LogState = LOG_START;
  const append = (lines: string[]) => {
    if (lines.length === 0) return;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, lines.map((l) => l + "\n").join(""), { mode: 0o600 });
  };
  return {
    write(r) {
      const p = planLogLine(state, r);
      state = p.state;
      append(p.lines);
    },
    close() {
      append(closingLines(state, new Date().toISOString()));
    },
  };
}

/** Body bytes every request of the session holds now: one count the session's requests share, by name. */
export class HeldBytes {
  #held = 0;
  now(): number {
    return this.#held;
  }
  take(n: number): void {
    this.#held += n;
  }
  give(n: number): void {
    this.#held -= n;
  }
}

type Upstream = { url: URL; send: typeof httpRequest; basePath: string };
type Proxy = { config: ProxyConfig; policy: ProxyPolicy; up: Upstream; log: EgressLogger; held: HeldBytes };
/** One request as the log names it. */
type Seen = { time: string; method: string; path: string; head: RequestHead };

function upstreamOf(upstream: string): Upstream {
  const url = new URL(upstream);
  return {
    url,
    send: url.protocol === "https:" ? httpsRequest : httpRequest,
    basePath: url.pathname.replace(/\/$/, ""),
  };
}

function seenOf(req: IncomingMessage): Seen {
  const target = req.url ?? "";
  const declaredRaw = req.headers["content-length"];
  return {
    time: new Date().toISOString(),
    method: req.method ?? "",
    path: target.split("?")[0]!,
    head: {
      method: req.method ?? "",
      target,
      declared: declaredRaw === undefined ? null : Number(declaredRaw),
      betas: req.headersDistinct["anthropic-beta"] ?? [],
      contentEncoding: req.headersDistinct["content-encoding"] ?? [],
    },
  };
}

/** Logs the refusal, then answers it: the log line is on disk before the session can see the answer. */
function answerRefusal(p: Proxy, res: ServerResponse, s: Seen, r: Refusal, bytesIn: number): void {
  const body = egressErrorBody({ kind: "refuse", ...r });
  p.log.write({
    time: s.time,
    method: s.method,
    path: s.path,
    outcome: "refused",
    status: r.status,
    bytesIn,
    bytesOut: Buffer.byteLength(body),
    why: r.message,
  });
  if (res.headersSent || res.destroyed) return;
  res.writeHead(r.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** The body read whole, or refused at the first chunk past a bound; the bytes read either way. */
type BodyRead = { kind: "body"; bytes: Buffer; read: number } | ({ kind: "refused"; read: number } & Refusal);

/** Reads the body, each chunk checked against the size bounds and held in the session's count while read. */
export async function readBody(
  req: IncomingMessage,
  limits: Pick<ProxyLimits, "bodyBytes" | "heldBytes">,
  declared: number | null,
  held: HeldBytes,
): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for await (const c of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      read += c.length;
      held.take(c.length);
      const size = decideBodySize(limits, { declared, read, held: held.now() });
      if (size.kind === "refuse") return { ...size, kind: "refused", read }; // safety: size-checked-per-chunk
      chunks.push(c);
    }
  } finally {
    held.give(read);
  }
  return { kind: "body", bytes: Buffer.concat(chunks), read };
}

/** Reads a body to be refused and drops it, never held: its size, and the size refusal if it goes past the bound. */
export async function dropBody(
  req: IncomingMessage,
  limits: Pick<ProxyLimits, "bodyBytes" | "heldBytes">,
  declared: number | null,
): Promise<{ read: number; over: Refusal | null }> {
  let read = 0;
  for await (const c of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    read += c.length;
    const size = decideBodySize(limits, { declared, read, held: 0 });
    if (size.kind === "refuse") return { read, over: size };
  }
  return { read, over: null };
}

/**
 * Answered before the body's end: the rest is read and dropped, never held, so the answer reaches a
 * client still sending (the runner's forwarder cuts both ways on a write error); past one more body
 * bound's worth the connection is cut.
 */
async function refuseEarly(p: Proxy, req: IncomingMessage, res: ServerResponse, s: Seen, r: Refusal, read: number) {
  answerRefusal(p, res, s, r, read);
  let dropped = 0;
  for await (const c of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    dropped += c.length;
    if (dropped > p.config.limits.bodyBytes) return void req.socket.destroy();
  }
}

/** The upstream could not be reached or cut its answer: 502 naming why, logged as an allowed call. */
function upstreamFailed(p: Proxy, res: ServerResponse, s: Seen, e: Error, bytesIn: number): void {
  const r = { status: 502, errorType: "api_error", message: `the model API could not be reached: ${e.message}` };
  const body = egressErrorBody({ kind: "refuse", ...r });
  const answered = res.headersSent || res.destroyed;
  p.log.write({
    time: s.time,
    method: s.method,
    path: s.path,
    outcome: "allowed",
    status: 502,
    bytesIn,
    bytesOut: answered ? 0 : Buffer.byteLength(body),
    why: e.message,
  });
  if (answered) return void res.destroy();
  res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** The upstream's answer to the session, its line logged at its end, before the session has that end. */
function relay(p: Proxy, res: ServerResponse, s: Seen, upRes: IncomingMessage, bytesIn: number): Promise<void> {
  let bytesOut = 0;
  upRes.on("data", (c: Buffer) => (bytesOut += c.length));
  upRes.on("end", () =>
    p.log.write({
      time: s.time,
      method: s.method,
      path: s.path,
      outcome: "allowed",
      status: upRes.statusCode ?? 0,
      bytesIn,
      bytesOut,
    }),
  );
  res.writeHead(upRes.statusCode ?? 502, downstreamHeaders(upRes.headers));
  return pipeline(upRes, res).catch(() => {});
}

/** Sends the checked call upstream with the real credential in place of the session's, and its answer back. */
function forward(
  p: Proxy,
  req: IncomingMessage,
  res: ServerResponse,
  s: Seen,
  body: string | null,
  bytesIn: number,
): Promise<void> {
  const headers = upstreamHeaders(req.headers, p.config.credential!, p.up.url.host);
  delete headers["content-length"];
  delete headers["content-encoding"];
  if (body !== null) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(Buffer.byteLength(body));
  }
  const { url, send, basePath } = p.up;
  return new Promise<void>((done, fail) => {
    const upReq = send(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        method: s.method,
        path: `${basePath}${s.head.target}`,
        headers,
      },
      (upRes) => {
        upRes.on("error", () => {});
        try {
          relay(p, res, s, upRes, bytesIn).then(done, fail);
        } catch (e) {
          upRes.destroy();
          fail(e);
        }
      },
    );
    upReq.on("error", (e) => {
      upstreamFailed(p, res, s, e, bytesIn);
      done();
    });
    upReq.end(body ?? undefined);
  });
}

/** One request's steps: its head decided, its body read within the bounds, decided, and forwarded. */
async function serveRequest(p: Proxy, req: IncomingMessage, res: ServerResponse, s: Seen): Promise<void> {
  const head = decideRequestHead(p.policy, s.head, p.held.now());
  if (head.kind === "refuse-now") return refuseEarly(p, req, res, s, head, 0);
  if (head.kind === "refuse-after-body") {
    const dropped = await dropBody(req, p.config.limits, s.head.declared);
    if (dropped.over !== null) return refuseEarly(p, req, res, s, dropped.over, dropped.read);
    return answerRefusal(p, res, s, head, dropped.read);
  }
  const body = await readBody(req, p.config.limits, s.head.declared, p.held);
  if (body.kind === "refused") return refuseEarly(p, req, res, s, body, body.read);
  const call = decideModelCall(s.method, body.bytes, p.config.grants, p.config.limits);
  if (call.kind === "refuse") return answerRefusal(p, res, s, call, body.read);
  return forward(p, req, res, s, call.body, body.read);
}

/**
 * What a request's steps threw (the upstream request could not be built from what the session
 * sent, or a read failed): that request is answered 502, or cut if its answer had begun; the proxy
 * and its other connections go on.
 */
function requestFailed(p: Proxy, res: ServerResponse, s: Seen, e: unknown): void {
  const message = `the session's proxy could not carry the request: ${e instanceof Error ? e.message : String(e)}`;
  if (res.headersSent || res.destroyed) return void res.destroy();
  answerRefusal(p, res, s, { status: 502, errorType: "api_error", message }, 0);
}

function handleRequest(p: Proxy, req: IncomingMessage, res: ServerResponse): void {
  req.on("error", () => {});
  res.on("error", () => {});
  const s = seenOf(req);
  serveRequest(p, req, res, s).catch((e: unknown) => requestFailed(p, res, s, e)); // safety: proxy-request-failure-answered
}

/** The HTTP server of one session's proxy, not yet listening, and its egress log (closed at the end). */
export function proxyServer(config: ProxyConfig): { server: Server; log: EgressLogger } {
  const limits = config.limits;
  const p: Proxy = {
    config,
    policy: { mode: config.mode, hasCredential: config.credential !== null, grants: config.grants, limits },
    up: upstreamOf(config.upstream),
    log: egressLogger(config.egressLog),
    held: new HeldBytes(),
  };
  const server: Server = createServer(
    // safety: proxy-default-timeouts
    {
      headersTimeout: limits.headersTimeoutMs, // safety: proxy-idle-timeouts
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkEveryMs,
    },
    (req, res) => handleRequest(p, req, res),
  );
  server.maxConnections = limits.connections; // safety: proxy-connection-cap
  server.on("drop", () =>
    p.log.write({
      time: new Date().toISOString(),
      method: "",
      path: "",
      outcome: "refused",
      status: 0,
      bytesIn: 0,
      bytesOut: 0,
      why: `over the session's ${limits.connections} connections: closed at once`,
    }),
  );
  // An accept that fails (out of descriptors) is that connection's loss, not the proxy's end.
  server.on("error", (e) => process.stderr.write(`model proxy: ${e.message}\n`));
  return { server, log: p.log };
}

/** The descriptor the proxy's process inherits its listening socket on (stdio: stdin, stdout, stderr, ipc, socket). */
export const PROXY_LISTEN_FD = 4;
