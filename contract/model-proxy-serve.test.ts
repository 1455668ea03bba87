// The model proxy's HTTP server (model-proxy-serve.ts) at the edges the other proxy tests leave:
// an upstream answer it cannot pass on, an upstream cut after its answer's head, a session that
// cuts its own request, the 502's own headers, an accept that fails, and readBody() on its own.
// The proxy runs as the launcher runs it (serveSweptProxy), or its server alone in a child
// (support/proxy-server-child.ts) where a test watches its stderr.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import { proxyLimits } from "../src/core/network/proxy-limits.ts";
import type { ModelProxyOptions } from "../src/host/model-proxy.ts";
import { HeldBytes, readBody, type ProxyConfig } from "../src/host/model-proxy-serve.ts";
import { serveSweptProxy } from "./support/swept-proxy.ts";
import { sweepChild } from "./support/sweep-child.ts";

const root = mkdtempSync(join(tmpdir(), "model-proxy-serve-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CALL = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
const KEY = { "x-api-key": CREDENTIAL_PLACEHOLDER, "content-type": "application/json" };
/** Long enough for any answer on a loaded machine; a request past it is one the proxy never answers. */
const NO_ANSWER_MS = 15_000;

let n = 0;
async function proxy(upstream: string, o: Partial<ModelProxyOptions> = {}) {
  const socket = join(root, `s${n++}.sock`);
  const log = join(root, `l${n}`, "egress.jsonl");
  const p = serveSweptProxy({
    socket,
    upstream,
    credential: { header: "x-api-key", value: "real-key" },
    mode: "model-only",
    egressLog: log,
    ...o,
  });
  cleanups.push(() => p.close());
  await p.listening;
  return { p, socket, log };
}

async function listening<S extends { listen(port: number, host: string, cb: () => void): unknown }>(s: S) {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const server = s as unknown as import("node:net").Server;
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An upstream that answers 200 with a small JSON body. */
const okUpstream = () =>
  listening(
    createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      });
    }),
  );

/** The session's answer; status -1 when its connection was cut, 0 when none came in NO_ANSWER_MS. */
type Reply = { status: number; headers: IncomingHttpHeaders; body: string };
function send(socket: string, method: string, path: string, body = ""): Promise<Reply> {
  return new Promise((ok) => {
    const r = request({ socketPath: socket, method, path, headers: KEY }, (res) => {
      let b = "";
      res.on("data", (c: Buffer) => (b += c));
      res.on("end", () => ok({ status: res.statusCode!, headers: res.headers, body: b }));
      res.on("error", () => ok({ status: -1, headers: {}, body: "" }));
    });
    r.on("error", () => ok({ status: -1, headers: {}, body: "" }));
    r.setTimeout(NO_ANSWER_MS, () => {
      r.destroy();
      ok({ status: 0, headers: {}, body: "" });
    });
    r.end(body);
  });
}

const readLog = (log: string) =>
  readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the model proxy's server, at its remaining edges", () => {
  it("an upstream answer it cannot pass on (status 099): 502 api_error naming why, logged as refused, and the upstream's connection closed", async () => {
    let upClosed!: Promise<void>;
    const up = createTcpServer((s: Socket) => {
      upClosed = new Promise((r) => s.on("close", () => r()));
      s.on("error", () => {});
      // An answer whose body never comes: only the proxy closing the connection ends it.
      s.once("data", () => s.write("HTTP/1.1 099 Odd\r\nContent-Length: 100\r\n\r\n"));
    });
    const { socket, log } = await proxy(await listening(up));
    const r = await send(socket, "POST", "/v1/messages", CALL);
    const message = "the session's proxy could not carry the request: Invalid status code: 99";
    expect(r.status, "answered, not cut").toBe(502);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(r.body)).toEqual({ type: "error", error: { type: "api_error", message } });
    const closed = await Promise.race([
      upClosed.then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still open"), NO_ANSWER_MS)),
    ]);
    expect(closed, "the upstream's answer is dropped with its connection").toBe("closed");
    expect(readLog(log)).toEqual([
      {
        time: expect.any(String),
        method: "POST",
        path: "/v1/messages",
        outcome: "refused",
        status: 502,
        bytesIn: 0,
        bytesOut: Buffer.byteLength(r.body),
        why: message,
      },
    ]);
  });

  it("an upstream that resets after its answer's head: that answer is cut, and the proxy answers the next request", async () => {
    let calls = 0;
    const up = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        if (calls++ > 0) return void res.end('{"ok":true}');
        res.write('{"partial":');
        setTimeout(() => res.socket!.resetAndDestroy(), 5);
      });
    });
    const { p, socket, log } = await proxy(await listening(up));
    expect((await send(socket, "POST", "/v1/messages", CALL)).status, "the first answer is cut").toBe(-1);
    const next = await send(socket, "POST", "/v1/messages", CALL);
    expect([next.status, next.body], "the proxy still serves").toEqual([200, '{"ok":true}']);
    await p.close();
    expect(readLog(log).map((l) => l.outcome)).toEqual(["allowed", "allowed"]);
  });

  it("a request its session cuts mid-body is neither answered nor logged: no one is left to answer", async () => {
    const { p, socket, log } = await proxy(await okUpstream());
    await new Promise<void>((ok) => {
      const c = connect(socket);
      c.on("error", () => {});
      c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n${"y".repeat(90)}`, () =>
        setTimeout(() => {
          c.destroy();
          ok();
        }, 20),
      );
    });
    await new Promise((r) => setTimeout(r, 50));
    expect((await send(socket, "POST", "/v1/messages", CALL)).status).toBe(200);
    await p.close();
    expect(readLog(log).map((l) => [l.outcome, l.status])).toEqual([["allowed", 200]]);
  });

  it("an upstream that cannot be reached: the 502 is JSON, with its own length", async () => {
    const gone = createServer();
    const url = await listening(gone);
    await new Promise<void>((r) => gone.close(() => r()));
    const { socket } = await proxy(url);
    const r = await send(socket, "POST", "/v1/messages", CALL);
    expect(r.status).toBe(502);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["content-length"]).toBe(String(Buffer.byteLength(r.body)));
  });

  it("an accept that fails is said on stderr, and the server goes on serving", async () => {
    const upstream = await okUpstream();
    const socket = join(root, `c${n++}.sock`);
    const config: ProxyConfig = {
      upstream,
      credential: { header: "x-api-key", value: "real-key" },
      mode: "model-only",
      egressLog: join(root, `c${n}`, "egress.jsonl"),
      grants: [],
      limits: proxyLimits(),
    };
    const sweep = sweepChild();
    const child = spawn(
      process.execPath,
      [...sweep.execArgv, join(import.meta.dirname, "support/proxy-server-child.ts"), JSON.stringify(config), socket],
      { stdio: ["pipe", "pipe", "pipe"], env: { ...sweep.env } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const ended = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    /** Whether the child printed `what` before it ended. */
    const said = (what: string) =>
      new Promise<boolean>((ok) => {
        const look = () => stdout.includes(what) && ok(true);
        child.stdout!.on("data", look);
        void ended.then(() => ok(stdout.includes(what)));
        look();
      });
    try {
      expect(await said("listening")).toBe(true);
      child.stdin!.write("accept-error accept EMFILE\n");
      expect(await said("emitted"), "alive after the failed accept").toBe(true);
      const r = await send(socket, "POST", "/v1/messages", CALL);
      expect(r.status, "served after the failed accept").toBe(200);
    } finally {
      child.kill("SIGTERM");
      await ended;
      sweep.collect();
    }
    expect(await ended, "ended by its SIGTERM, not by the error").toBe(0);
    expect(stderr).toContain("model proxy: accept EMFILE\n");
  });
});

describe("readBody", () => {
  it("reads a body within its bounds whole, and gives back what it held once it is read", async () => {
    const held = new HeldBytes();
    let got!: Promise<unknown>;
    const url = await listening(
      createServer((req: IncomingMessage, res) => {
        got = readBody(req, { bodyBytes: 100, heldBytes: 100 }, null, held);
        void got.then(() => res.end());
      }),
    );
    await new Promise<void>((ok) => {
      const r = request(url, { method: "POST" }, (res) => res.resume().on("end", ok));
      r.end("hello");
    });
    expect(await got).toEqual({ kind: "body", bytes: Buffer.from("hello"), read: 5 });
    expect(held.now()).toBe(0);
  });
});
