// The host end of a session's one way out: an HTTP server on the session's model socket (the runner
// forwards 127.0.0.1:<port> inside the sandbox to it), which passes decideEgress()'s requests to the
// upstream with the real credential in place of the placeholder, and logs every request. What it
// forwards is the model, not a fetcher: the headers and the body are checked against the tables in
// core/network (betas, body fields, tool types, content blocks, source types, sizes), and the body
// that goes up is the one the check read, serialised again.
import { appendFileSync, chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import {
  request as httpRequest,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import {
  decideEgress,
  egressErrorBody,
  upstreamHeaders,
  type EgressRecord,
  type NetworkMode,
  type UpstreamCredential,
} from "../core/network/egress.ts";
import { closingLines, LOG_START, planLogLine, type LogState } from "../core/network/egress-log.ts";
import type { ModelGrant } from "../core/network/grants.ts";
import { decideModelBody } from "../core/network/model-body.ts";
import { decideModelHeaders } from "../core/network/model-headers.ts";
import { decideBodySize, proxyLimits, type ProxyLimits } from "../core/network/proxy-limits.ts";

export interface ModelProxyOptions {
  socket: string;
  upstream: string;
  credential: UpstreamCredential | null;
  mode: NetworkMode;
  egressLog: string;
  /** Server-side features the policy grants (core/network/grants.ts). None unless given. */
  grants?: readonly ModelGrant[];
  /** PROXY_LIMITS unless given: a live test's positive control raises one on purpose. */
  limits?: Partial<ProxyLimits>;
}

export interface ModelProxy {
  /**
   * Resolves once the socket listens. The launcher does not wait: a session's first model call
   * comes after its claim, and a proxy that cannot listen leaves the session no way out at all.
   */
  listening: Promise<void>;
  close(): Promise<void>;
}

type Refusal = { status: number; errorType: string; message: string };

/** The run's log, through its budget (core/network/egress-log.ts): allowed calls all, refusals bounded. */
function egressLogger(file: string): { write(r: EgressRecord): void; close(): void } {
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

/** Where a run's egress log lives: the host's state directory, which no sandbox binds. */
export function egressLogPath(stateDir: string, run: string): string {
  return `${stateDir}/egress/${run}.jsonl`;
}

function sendError(res: ServerResponse, r: Refusal, body: string): void {
  res.writeHead(r.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Serves o.socket. The egress log is the host's own file, outside the run directory: a log the
 * session could write is no record of what it sent.
 */
export function serveModelProxy(o: ModelProxyOptions): ModelProxy {
  const up = new URL(o.upstream);
  const send = up.protocol === "https:" ? httpsRequest : httpRequest;
  const basePath = up.pathname.replace(/\/$/, "");
  const grants = o.grants ?? []; // safety: no-grant-by-default
  const limits = proxyLimits(o.limits);
  const log = egressLogger(o.egressLog);
  /** Body bytes every request of the session holds now. */
  let held = 0;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? "";
    const target = req.url ?? "";
    const time = new Date().toISOString();
    const path = target.split("?")[0]!;
    const declaredRaw = req.headers["content-length"];
    const declared = declaredRaw === undefined ? null : Number(declaredRaw);
    let read = 0;
    /**
     * Logs the refusal, then answers it: the log line is on disk before the session can see the answer.
     * Answered before the body's end (early), the rest is read and dropped, never held, so the answer
     * reaches a client still sending (the runner's forwarder cuts both ways on a write error); past
     * one more body bound's worth the connection is cut.
     */
    const refuse = (r: Refusal, early = false) => {
      const body = egressErrorBody({ kind: "refuse", ...r });
      log.write({
        time,
        method,
        path,
        outcome: "refused",
        status: r.status,
        bytesIn: read,
        bytesOut: Buffer.byteLength(body),
        why: r.message,
      });
      sendError(res, r, body);
      if (!early) return;
      let dropped = 0;
      req.on("data", (c: Buffer) => {
        dropped += c.length;
        if (dropped > limits.bodyBytes) req.socket.destroy();
      });
    };

    // A refusal before the body: the body is read and dropped (never held), up to the size bound.
    const refuseAfterBody = (r: Refusal) => {
      let over = false;
      req.on("data", (c: Buffer) => {
        if (over) return;
        read += c.length;
        const size = decideBodySize(limits, { declared, read, held: 0 });
        if (!over && size.kind === "refuse") {
          over = true;
          refuse(size, true);
        }
      });
      req.on("end", () => {
        if (!over) refuse(r);
      });
    };

    const d = decideEgress(o.mode, method, target);
    if (d.kind === "refuse") return refuseAfterBody(d);
    if (o.credential === null)
      return refuseAfterBody({
        status: 500,
        errorType: "api_error",
        message: "the host holds no credential for this session's model",
      });
    const credential = o.credential;
    const h = decideModelHeaders(
      {
        betas: req.headersDistinct["anthropic-beta"] ?? [],
        contentEncoding: req.headersDistinct["content-encoding"] ?? [],
      },
      grants,
    );
    if (h.kind === "refuse") return refuseAfterBody(h); // safety: header-check-enforced
    const first = decideBodySize(limits, { declared, read: 0, held });
    if (first.kind === "refuse") {
      refuse(first, true);
      return;
    }

    // The body, held while it is read, each chunk checked against the bounds.
    const chunks: Buffer[] = [];
    let done = false;
    let holding = 0;
    const release = () => {
      held -= holding;
      holding = 0;
    };
    req.on("data", (c: Buffer) => {
      if (done) return;
      read += c.length;
      holding += c.length;
      held += c.length;
      const size = decideBodySize(limits, { declared, read, held });
      if (size.kind === "refuse") {
        // safety: size-checked-per-chunk
        done = true;
        chunks.length = 0;
        release();
        refuse(size, true);
        return;
      }
      chunks.push(c);
    });
    req.on("close", release);
    req.on("end", () => {
      if (done) return;
      done = true;
      const body = Buffer.concat(chunks);
      chunks.length = 0;
      release();
      forward(body);
    });

    const forward = (body: Buffer) => {
      const headers = upstreamHeaders(req.headers, credential, up.host);
      delete headers["content-length"];
      delete headers["content-encoding"];
      let out: string | null = null;
      if (method === "HEAD") {
        if (body.length > 0)
          return refuse({ status: 400, errorType: "invalid_request_error", message: "HEAD / carries no body" });
      } else {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString("utf8"));
          // What goes up is what the check read: one parse, serialised again, so a duplicate key
          // or any other way two JSON parsers disagree cannot slip a field past the check.
          out = JSON.stringify(parsed); // safety: body-reserialised
        } catch (e) {
          const r = {
            status: 400,
            errorType: "invalid_request_error",
            message: `the request body is not JSON the proxy can check: ${e instanceof Error ? e.message.slice(0, 200) : String(e)}`,
          };
          return refuse(r);
        }
        const b = decideModelBody(parsed, grants);
        if (b.kind === "refuse") return refuse(b); // safety: body-check-enforced
        headers["content-type"] = "application/json";
        headers["content-length"] = String(Buffer.byteLength(out));
      }
      const upReq = send(
        { protocol: up.protocol, hostname: up.hostname, port: up.port, method, path: `${basePath}${target}`, headers },
        (upRes) => {
          let bytesOut = 0;
          const resHeaders = { ...upRes.headers };
          delete resHeaders.connection;
          delete resHeaders["transfer-encoding"];
          res.writeHead(upRes.statusCode ?? 502, resHeaders);
          upRes.on("data", (c: Buffer) => (bytesOut += c.length));
          // Before the pipe's own end listener: the line is on disk before the session has the answer's end.
          upRes.on("end", () =>
            log.write({
              time,
              method,
              path,
              outcome: "allowed",
              status: upRes.statusCode ?? 0,
              bytesIn: read,
              bytesOut,
            }),
          );
          upRes.pipe(res);
        },
      );
      upReq.on("error", (e) => {
        const r = { status: 502, errorType: "api_error", message: `the model API could not be reached: ${e.message}` };
        const body = egressErrorBody({ kind: "refuse", ...r });
        log.write({
          time,
          method,
          path,
          outcome: "allowed",
          status: 502,
          bytesIn: read,
          bytesOut: res.headersSent ? 0 : Buffer.byteLength(body),
          why: e.message,
        });
        if (res.headersSent) res.destroy();
        else sendError(res, r, body);
      });
      upReq.end(out ?? undefined);
    };
  };

  const server: Server = createServer(
    // safety: proxy-default-timeouts
    {
      headersTimeout: limits.headersTimeoutMs, // safety: proxy-idle-timeouts
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkEveryMs,
    },
    handle,
  );
  server.maxConnections = limits.connections; // safety: proxy-connection-cap
  server.on("drop", () =>
    log.write({
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
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.socket, () => {
      chmodSync(o.socket, 0o600);
      resolve();
    });
  });
  listening.catch(() => {});
  let closed: Promise<void> | null = null;
  const close = () =>
    (closed ??= new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => {
        log.close();
        r();
      });
    }));
  return { listening, close };
}
