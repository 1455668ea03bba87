// The host end of a session's one way out: an HTTP server on <run>/model.sock (the runner forwards
// 127.0.0.1:<port> inside the sandbox to it), which passes decideEgress()'s requests to the
// upstream with the real credential in place of the placeholder, and logs every request.
import { appendFileSync, chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { decideEgress, egressErrorBody, upstreamHeaders, type EgressRecord, type NetworkMode, type UpstreamCredential } from "../core/network/egress.ts";

export interface ModelProxyOptions {
  socket: string;
  upstream: string;
  credential: UpstreamCredential | null;
  mode: NetworkMode;
  egressLog: string;
}

export interface ModelProxy {
  /**
   * Resolves once the socket listens. The launcher does not wait: a session's first model call
   * comes after its claim, and a proxy that cannot listen leaves the session no way out at all.
   */
  listening: Promise<void>;
  close(): Promise<void>;
}

function logEgress(file: string, r: EgressRecord): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  appendFileSync(file, JSON.stringify(r) + "\n", { mode: 0o600 });
}

/** Where a run's egress log lives: the host's state directory, which no sandbox binds. */
export function egressLogPath(stateDir: string, run: string): string {
  return `${stateDir}/egress/${run}.jsonl`;
}

function refuse(res: ServerResponse, status: number, errorType: string, message: string): number {
  const body = egressErrorBody({ kind: "refuse", status, errorType, message });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
  return Buffer.byteLength(body);
}

/**
 * Serves o.socket. The egress log is the host's own file, outside the run directory: a log the
 * session could write is no record of what it sent.
 */
export function serveModelProxy(o: ModelProxyOptions): ModelProxy {
  const up = new URL(o.upstream);
  const send = up.protocol === "https:" ? httpsRequest : httpRequest;
  const basePath = up.pathname.replace(/\/$/, "");
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? "";
    const target = req.url ?? "";
    const time = new Date().toISOString();
    const path = target.split("?")[0]!;
    let bytesIn = 0;
    req.on("data", (c: Buffer) => (bytesIn += c.length));
    const d = decideEgress(o.mode, method, target);
    if (d.kind === "refuse" || o.credential === null) {
      const [status, type, message] = d.kind === "refuse" ? [d.status, d.errorType, d.message] : [500, "api_error", "the host holds no credential for this session's model"];
      req.resume();
      req.on("end", () => {
        const bytesOut = refuse(res, status, type, message);
        logEgress(o.egressLog, { time, method, path, outcome: "refused", status, bytesIn, bytesOut, why: message });
      });
      return;
    }
    const out = send({
      protocol: up.protocol, hostname: up.hostname, port: up.port, method,
      path: `${basePath}${target}`,
      headers: upstreamHeaders(req.headers, o.credential, up.host),
    }, (upRes) => {
      let bytesOut = 0;
      const headers = { ...upRes.headers };
      delete headers.connection;
      delete headers["transfer-encoding"];
      res.writeHead(upRes.statusCode ?? 502, headers);
      upRes.on("data", (c: Buffer) => (bytesOut += c.length));
      upRes.pipe(res);
      upRes.on("end", () => logEgress(o.egressLog, { time, method, path, outcome: "allowed", status: upRes.statusCode ?? 0, bytesIn, bytesOut }));
    });
    out.on("error", (e) => {
      const bytesOut = res.headersSent ? 0 : refuse(res, 502, "api_error", `the model API could not be reached: ${e.message}`);
      if (res.headersSent) res.destroy();
      logEgress(o.egressLog, { time, method, path, outcome: "allowed", status: 502, bytesIn, bytesOut, why: e.message });
    });
    req.pipe(out);
  };
  const server: Server = createServer(handle);
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.socket, () => {
      chmodSync(o.socket, 0o600);
      resolve();
    });
  });
  listening.catch(() => {});
  const close = () => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });
  return { listening, close };
}
