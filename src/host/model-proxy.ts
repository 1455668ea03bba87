// The host end of a session's one way out: the session's model socket (the runner forwards
// 127.0.0.1:<port> inside the sandbox to it), served by an HTTP proxy that passes decideEgress()'s
// requests to the upstream with the real credential in place of the placeholder, and logs every
// request. What it forwards is the model, not a fetcher: the headers and the body are checked
// against the tables in core/network, and the body that goes up is the one the check read,
// serialised again (model-proxy-serve.ts).
//
// Each session's proxy is a process of its own, with a bounded heap: whatever a session sends
// costs at most its own proxy, never the host's process (which launches and serves every session)
// nor another session's proxy. The host binds the socket, so it exists when serveModelProxy()
// returns, and hands the listening descriptor to the proxy's process.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { appendFileSync, chmodSync, linkSync, mkdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { basename, dirname, join } from "node:path";
import type { NetworkMode, UpstreamCredential } from "../core/network/egress.ts";
import { proxyEndedLine } from "../core/network/egress-log.ts";
import type { ModelGrant } from "../core/network/grants.ts";
import { proxyLimits, type ProxyLimits } from "../core/network/proxy-limits.ts";
import { PROXY_LISTEN_FD, type ProxyConfig } from "./model-proxy-serve.ts";

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
  /**
   * More node arguments and environment for the proxy's process: the mutation sweep's hooks
   * (contract/support/sweep-child.ts). The launcher gives none; the process's environment is only these.
   */
  child?: { execArgv: readonly string[]; env: Readonly<Record<string, string>> };
}

export interface ModelProxy {
  /**
   * Resolves once the proxy's process serves the socket; rejects if the socket cannot be made or
   * the process ends first. The socket file exists as soon as serveModelProxy() returns.
   */
  listening: Promise<void>;
  /** Ends the proxy's process; resolves once it is gone and the egress log's closing lines are written. */
  close(): Promise<void>;
}

/** Where a run's egress log lives: the host's state directory, which no sandbox binds. */
export function egressLogPath(stateDir: string, run: string): string {
  return `${stateDir}/egress/${run}.jsonl`;
}

const MAIN = join(import.meta.dirname, "model-proxy-main.ts");
/** How long a proxy's process may take to serve its socket before it is ended (it takes tens of ms). */
const LISTEN_TIMEOUT_MS = 30_000;
/** How long a closing proxy has to write its last lines before it is killed. */
const CLOSE_GRACE_MS = 5_000;
/** How much of the proxy process's stderr the host keeps, for the line that says why it ended. */
const STDERR_TAIL = 2_000;

type Bound = { kind: "bound"; server: Server; fd: number } | { kind: "failed"; error: Promise<never> };

/**
 * Binds and listens on the socket in the host, synchronously, under a name beside it, then links
 * it into place (refused if something is there) and makes it 0600: the socket exists, and only
 * the host can connect, before anything else happens. Closing the host's copy later unlinks only
 * the name it was bound under.
 */
function bindSocket(path: string): Bound {
  const bindAt = join(dirname(path), `.${basename(path)}`);
  rmSync(bindAt, { force: true });
  const server = createServer();
  const error = new Promise<never>((_, reject) => server.once("error", reject));
  error.catch(() => {});
  server.listen(bindAt);
  if (!server.listening) return { kind: "failed", error };
  try {
    chmodSync(bindAt, 0o600);
    linkSync(bindAt, path);
  } catch (e) {
    server.close();
    return { kind: "failed", error: rejected(e) };
  }
  return { kind: "bound", server, fd: (server as unknown as { _handle: { fd: number } })._handle.fd };
}

/** stdin for the options, stderr for why it ended, the IPC channel, and the socket at PROXY_LISTEN_FD. */
function stdioWith(fd: number): StdioOptions {
  const stdio: Array<"pipe" | "ignore" | "ipc" | number> = ["pipe", "ignore", "pipe", "ipc"];
  stdio[PROXY_LISTEN_FD] = fd;
  return stdio;
}

/** A rejected promise already handled: a caller that never waits for it does not crash the host. */
function rejected(e: unknown): Promise<never> {
  const p = Promise.reject(e instanceof Error ? e : new Error(String(e)));
  p.catch(() => {});
  return p;
}

/** The proxy's process: a bounded heap, the listening socket as its descriptor 4, its options on stdin. */
function startProcess(fd: number, config: ProxyConfig, hooks: ModelProxyOptions["child"]): ChildProcess {
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${config.limits.heapMiB}`, ...(hooks?.execArgv ?? []), MAIN], // safety: proxy-heap-limit
    { stdio: stdioWith(fd), env: { ...hooks?.env } },
  );
  child.on("error", () => {});
  child.stdin!.on("error", () => {});
  child.stderr!.on("error", () => {});
  // The credential goes over a pipe only the two processes hold: never argv, never the environment.
  child.stdin!.end(JSON.stringify(config));
  return child;
}

/** The last bytes of a stream, kept as they come. */
function tailOf(stream: NodeJS.ReadableStream, n: number): () => string {
  let tail = "";
  stream.setEncoding("utf8");
  stream.on("data", (d: string) => (tail = (tail + d).slice(-n)));
  return () => tail.trim();
}

const endedHow = (code: number | null, signal: NodeJS.Signals | null) =>
  signal !== null ? `signal ${signal}` : `exit ${code}`;

/**
 * Writes the line that says the proxy's process ended on its own. The host's exit handler must not
 * throw: a log that cannot be written is said on stderr instead.
 */
function recordEnded(file: string, why: string): void {
  const line = proxyEndedLine(new Date().toISOString(), why);
  // safety: proxy-ended-record-contained
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, line + "\n", { mode: 0o600 });
  } catch (e) {
    process.stderr.write(`mosaic: ${line} (the egress log ${file}: ${(e as Error).message})\n`);
  }
}

/** A running proxy process: listening, its end on its own recorded, its close once. */
class ProxyProcess implements ModelProxy {
  readonly listening: Promise<void>;
  readonly #child: ChildProcess;
  readonly #socket: string;
  readonly #exited: Promise<void>;
  #closing: Promise<void> | null = null;

  constructor(child: ChildProcess, o: ModelProxyOptions) {
    this.#child = child;
    this.#socket = o.socket;
    const stderr = tailOf(child.stderr!, STDERR_TAIL);
    // A session's proxy that ends unasked costs that session its model; the host goes on. Recorded
    // at "exit", before `listening` rejects on it.
    child.once("exit", (code, signal) => {
      if (this.#closing === null)
        recordEnded(o.egressLog, `the session's model proxy ended (${endedHow(code, signal)}): ${stderr()}`);
    });
    // "close", not "exit": a process that could not be spawned (node gone from under the host)
    // emits "error" and "close" but never "exit", and close() waits for this.
    this.#exited = new Promise((resolve) => child.once("close", () => resolve()));
    this.listening = new Promise<void>((resolve, reject) => {
      // A process that neither listens nor ends is ended: `listening` rejects, never hangs.
      const stuck = setTimeout(() => child.kill("SIGKILL"), LISTEN_TIMEOUT_MS).unref();
      child.on("message", (m: { kind?: string }) => {
        if (m.kind !== "listening") return;
        clearTimeout(stuck);
        resolve();
      });
      child.once("error", reject);
      child.once("exit", (code, signal) =>
        reject(
          new Error(`the model proxy's process ended before it listened (${endedHow(code, signal)}): ${stderr()}`),
        ),
      );
    });
    // The launcher's failure path closes a proxy it never waited for: its rejection is no host crash.
    this.listening.catch(() => {}); // safety: proxy-listening-rejection-handled
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#stop());
  }

  async #stop(): Promise<void> {
    // At once, as closing a listening socket in the host did: no session connects from here on.
    rmSync(this.#socket, { force: true });
    const child = this.#child;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const kill = setTimeout(() => child.kill("SIGKILL"), CLOSE_GRACE_MS);
    await this.#exited;
    clearTimeout(kill);
  }
}

/**
 * Serves o.socket from a process of its own. The egress log is the host's own file, outside the
 * run directory: a log the session could write is no record of what it sent.
 */
export function serveModelProxy(o: ModelProxyOptions): ModelProxy {
  const config: ProxyConfig = {
    upstream: o.upstream,
    credential: o.credential,
    mode: o.mode,
    egressLog: o.egressLog,
    grants: o.grants ?? [], // safety: no-grant-by-default
    limits: proxyLimits(o.limits),
  };
  const bound = bindSocket(o.socket);
  if (bound.kind === "failed") return { listening: bound.error, close: () => Promise.resolve() };
  try {
    return new ProxyProcess(startProcess(bound.fd, config, o.child), o);
  } catch (e) {
    rmSync(o.socket, { force: true });
    return { listening: rejected(e), close: () => Promise.resolve() };
  } finally {
    // The process holds the socket now; the host's copy goes (and with it only the name it was bound under).
    bound.server.close();
  }
}
