// Drives contract/support/model-proxy-host.ts from a test: a host process serving several
// sessions' proxies, whose liveness and memory the test reads while it attacks one of them; and a
// recording upstream on 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import type { ModelProxyOptions } from "../../src/host/model-proxy.ts";
import { sweepChild } from "./sweep-child.ts";

const HOST = join(REPO_ROOT, "contract/support/model-proxy-host.ts");

export type Host = {
  pid: number;
  /** Each proxy's process, in the order given. */
  proxyPids: number[];
  /** The host's resident memory in bytes, or null if it did not answer within 5 s (it ended, or hangs). */
  ping(): Promise<number | null>;
  /** Sends one command line; the next stdout line that starts with `answer`, or null after `ms`. */
  ask(line: string, answer: string, ms?: number): Promise<string | null>;
  exit: Promise<{ code: number | null; signal: string | null }>;
  stderr(): string;
  stop(): Promise<void>;
};

export async function startHost(options: ModelProxyOptions[]): Promise<Host> {
  const sweep = sweepChild();
  const child: ChildProcess = spawn(process.execPath, [...sweep.execArgv, HOST, JSON.stringify(options)], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...sweep.env },
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
  const exit = new Promise<{ code: number | null; signal: string | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on("line", (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) w();
  });
  const next = async (prefix: string, ms: number): Promise<string | null> => {
    for (const until = Date.now() + ms; Date.now() < until; ) {
      const i = lines.findIndex((l) => l.startsWith(prefix));
      if (i !== -1) return lines.splice(i, 1)[0]!;
      if (child.exitCode !== null || child.signalCode !== null) return null;
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
    return null;
  };
  const first = await next("listening", 20_000);
  if (first === null) throw new Error(`the host did not listen: ${stderr}`);
  const ask = (line: string, answer: string, ms = 5_000) => {
    if (child.stdin!.writable) child.stdin!.write(line + "\n");
    return next(answer, ms);
  };
  return {
    pid: child.pid!,
    proxyPids: first.split(" ").slice(1).map(Number),
    ping: async () => {
      const a = await ask("ping", "pong");
      return a === null ? null : Number(a.split(" ")[1]);
    },
    ask,
    exit,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exit;
      sweep.collect();
    },
  };
}

export type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

/** A real upstream on 127.0.0.1 that records each request and answers 200 (204 to HEAD). */
export async function recordingUpstream(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(req.method === "HEAD" ? 204 : 200, { "content-type": "application/json" });
      res.end(req.method === "HEAD" ? undefined : '{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
