// The model proxy in-process, each edge by its effect: what the upstream receives, what the session
// gets back, and the egress log's lines. The upstream is a plain HTTP server on 127.0.0.1; the
// proxy listens on a real Unix socket under the system's temp dir.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import { egressLogPath, serveModelProxy, type ModelProxy, type ModelProxyOptions } from "../src/host/model-proxy.ts";
import { isRunning } from "./support/proxy-procs.ts";
import { sweepChild } from "./support/sweep-child.ts";
import { serveSweptProxy } from "./support/swept-proxy.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-proxy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
type Answer = (req: IncomingMessage, res: import("node:http").ServerResponse) => void;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function upstream(answer?: Answer): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (answer !== undefined) return answer(req, res);
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

let n = 0;
async function proxy(
  o: Partial<ModelProxyOptions> & { upstream: string },
): Promise<{ p: ModelProxy; socket: string; log: string; dir: string }> {
  const dir = join(root, `p${n++}`);
  const socket = join(root, `p${n}.sock`);
  const log = join(dir, "egress", "run.jsonl");
  const p = serveSweptProxy({
    socket,
    credential: { header: "x-api-key", value: "real-key" },
    mode: "model-only",
    egressLog: log,
    ...o,
  });
  cleanups.push(() => p.close());
  await p.listening;
  return { p, socket, log, dir };
}

type Reply = { status: number; headers: IncomingHttpHeaders; body: string };
function send(
  socket: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  body: string | Buffer = "",
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers }, (res) => {
      let b = "";
      res.on("data", (c: Buffer) => (b += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: b }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const readLog = (f: string): Array<Record<string, unknown>> =>
  existsSync(f)
    ? readFileSync(f, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

const CALL = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };
const SPACED = JSON.stringify(CALL, null, 1);
const KEY = { "x-api-key": CREDENTIAL_PLACEHOLDER };
const errorOf = (r: Reply) => JSON.parse(r.body) as { type: string; error: { type: string; message: string } };

describe("egressLogPath", () => {
  it("is the run's file under the state dir's egress directory", () => {
    expect(egressLogPath("/state", "run-1")).toBe("/state/egress/run-1.jsonl");
  });
});

describe("the model proxy forwards a model call", () => {
  it("to the upstream's base path, serialised again, with its own length and type, and logs it after the answer", async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-up": "yes" });
      res.end('{"made":1}');
    });
    const { socket, log, dir } = await proxy({ upstream: `${up.url}/base/` });
    const r = await send(
      socket,
      "POST",
      "/v1/messages?beta=true",
      { ...KEY, "content-type": "text/plain", "content-encoding": "identity" },
      SPACED,
    );
    expect(r.status).toBe(201);
    expect(r.body).toBe('{"made":1}');
    expect(r.headers["x-up"]).toBe("yes");
    expect(up.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /base/v1/messages?beta=true"]);
    const seen = up.seen[0]!;
    expect(seen.body, "what the check read, serialised again").toBe(JSON.stringify(CALL));
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["content-length"]).toBe(String(JSON.stringify(CALL).length));
    expect(seen.headers["content-encoding"]).toBeUndefined();
    expect(seen.headers["x-api-key"]).toBe("real-key");
    const lines = readLog(log);
    expect(lines).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        method: "POST",
        path: "/v1/messages",
        outcome: "allowed",
        status: 201,
        bytesIn: SPACED.length,
        bytesOut: '{"made":1}'.length,
      },
    ]);
    expect(statSync(join(dir, "egress")).mode & 0o777, "the log's directory").toBe(0o700);
    expect(statSync(log).mode & 0o777, "the log").toBe(0o600);
    expect(statSync(socket).mode & 0o777, "the socket").toBe(0o600);
  });

  it("a HEAD / without a body goes up as it is, and one with a body is refused", async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const { socket, log } = await proxy({ upstream: up.url });
    const ok = await send(socket, "HEAD", "/", KEY);
    expect(ok.status).toBe(204);
    expect(up.seen.map((s) => [s.method, s.url, s.body, s.headers["content-length"]])).toEqual([
      ["HEAD", "/", "", undefined],
    ]);
    const bad = await send(socket, "HEAD", "/", { ...KEY, "content-length": "2" }, "{}");
    expect(bad.status).toBe(400);
    expect(up.seen.length, "nothing more went up").toBe(1);
    expect(readLog(log).map((l) => [l.outcome, l.method, l.status, l.bytesIn, l.why])).toEqual([
      ["allowed", "HEAD", 204, 0, undefined],
      ["refused", "HEAD", 400, 2, "HEAD / carries no body"],
    ]);
  });

  it("a response's connection and transfer-encoding headers are the proxy's own, not the upstream's", async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", connection: "close", "transfer-encoding": "chunked" });
      res.write('{"a":');
      res.end("1}");
    });
    const { socket } = await proxy({ upstream: up.url });
    const r = await send(socket, "POST", "/v1/messages", { ...KEY, connection: "keep-alive" }, JSON.stringify(CALL));
    expect(r.status).toBe(200);
    expect(r.body).toBe('{"a":1}');
    expect(r.headers.connection, "the session's connection stays open").toBe("keep-alive");
  });
});

describe("the model proxy refuses", () => {
  it("a body that is not JSON, naming the parser's reason, with nothing sent up", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url });
    const r = await send(socket, "POST", "/v1/messages", KEY, "{nope");
    expect(r.status).toBe(400);
    const e = errorOf(r);
    expect(e.error.type).toBe("invalid_request_error");
    let why = "";
    try {
      JSON.parse("{nope");
    } catch (x) {
      why = (x as Error).message;
    }
    expect(e.error.message).toBe(`the request body is not JSON the proxy can check: ${why.slice(0, 200)}`);
    expect(up.seen).toEqual([]);
    expect(readLog(log)).toEqual([
      {
        time: expect.any(String),
        method: "POST",
        path: "/v1/messages",
        outcome: "refused",
        status: 400,
        bytesIn: 5,
        bytesOut: Buffer.byteLength(r.body),
        why: e.error.message,
      },
    ]);
  });

  it("a body the body check refuses, with the check's status and reason", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url });
    const body = JSON.stringify({ ...CALL, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] });
    const r = await send(socket, "POST", "/v1/messages", KEY, body);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(up.seen).toEqual([]);
    const [line] = readLog(log);
    expect(line).toMatchObject({ outcome: "refused", status: r.status, bytesIn: body.length });
    expect(line!.why).toBe(errorOf(r).error.message);
  });

  it("a beta off the list, after reading the body whole and counting it", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url });
    const body = JSON.stringify(CALL);
    const r = await send(socket, "POST", "/v1/messages", { ...KEY, "anthropic-beta": "web-fetch-2025-09-10" }, body);
    expect(r.status).toBe(403);
    expect(errorOf(r).error.message).toContain("web-fetch-2025-09-10");
    expect(up.seen).toEqual([]);
    expect(readLog(log).map((l) => [l.outcome, l.status, l.bytesIn])).toEqual([["refused", 403, body.length]]);
  });

  it("the same beta passes with its grant, and a grant given is the only one: a grant's beta not given stays refused", async () => {
    const up = await upstream();
    const { socket } = await proxy({ upstream: up.url, grants: ["web-fetch"] });
    const body = JSON.stringify(CALL);
    expect(
      (await send(socket, "POST", "/v1/messages", { ...KEY, "anthropic-beta": "web-fetch-2025-09-10" }, body)).status,
    ).toBe(200);
    expect(
      (await send(socket, "POST", "/v1/messages", { ...KEY, "anthropic-beta": "web-search-2025-03-05" }, body)).status,
    ).toBe(403);
    expect(up.seen.length).toBe(1);
  });

  it("a request the egress table refuses: its body read and counted, one refusal logged", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url });
    const r = await send(socket, "POST", "/v1/files", KEY, "x".repeat(300));
    expect(r.status).toBe(403);
    expect(readLog(log).map((l) => [l.outcome, l.path, l.status, l.bytesIn])).toEqual([
      ["refused", "/v1/files", 403, 300],
    ]);
  });

  it("a refused request's body past the size bound is refused as too large, once, at the first chunk past it", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, limits: { bodyBytes: 100 } });
    const r = await send(socket, "POST", "/v1/files", KEY, "x".repeat(150));
    expect(r.status).toBe(413);
    expect(errorOf(r).error.type).toBe("request_too_large");
    expect(readLog(log).map((l) => [l.outcome, l.status, l.bytesIn])).toEqual([["refused", 413, 150]]);
  });

  it("a held request past the session's held bytes is refused 429, and the bytes come back when a request ends", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, limits: { heldBytes: 120, bodyBytes: 1000 } });
    // One request of 110 bytes holds 80 of them and waits for the rest of its body.
    const body = JSON.stringify({ ...CALL, messages: [{ role: "user", content: "y".repeat(40) }] });
    const held = await new Promise<import("node:http").ClientRequest>((ok) => {
      const req = request({
        socketPath: socket,
        method: "POST",
        path: "/v1/messages",
        headers: { ...KEY, "content-length": String(body.length) },
      });
      req.on("error", () => {});
      req.write(body.slice(0, 80), () => ok(req));
    });
    // Until the proxy has read it: the next request's check must see those bytes held.
    for (let i = 0; i < 200 && readLog(log).length === 0; i++) {
      const r = await send(socket, "POST", "/v1/messages", KEY, JSON.stringify(CALL));
      if (r.status === 429) break;
      await new Promise((ok) => setTimeout(ok, 2));
    }
    const refused = readLog(log).filter((l) => l.status === 429);
    expect(refused.length, "a request over the held bound is refused").toBe(1);
    expect(refused[0]!.why).toBe(
      "the session's requests hold over 120 bytes of body at once; retry when one has finished",
    );
    await new Promise<void>((ok) => held.end(body.slice(80), () => ok()));
    const wentUp = () => up.seen.filter((s) => s.body === body).length;
    for (let i = 0; i < 500 && wentUp() === 0; i++) await new Promise((ok) => setTimeout(ok, 2));
    expect(wentUp(), "the held request went up whole").toBe(1);
    const after = await send(socket, "POST", "/v1/messages", KEY, body);
    expect(after.status, "its bytes were given back").toBe(200);
  });

  it("a declared length past the bound is refused before a byte is read", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, limits: { bodyBytes: 100 } });
    const r = await send(socket, "POST", "/v1/messages", { ...KEY, "content-length": "150" }, "x".repeat(150));
    expect(r.status).toBe(413);
    expect(readLog(log).map((l) => [l.status, l.bytesIn])).toEqual([[413, 0]]);
    expect(up.seen).toEqual([]);
  });

  it("a body that grows past the bound without a declared length is refused at the chunk past it", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, limits: { bodyBytes: 100 } });
    const r = await send(socket, "POST", "/v1/messages", { ...KEY, "transfer-encoding": "chunked" }, "x".repeat(150));
    expect(r.status).toBe(413);
    expect(readLog(log).map((l) => [l.status, l.bytesIn])).toEqual([[413, 150]]);
    expect(up.seen).toEqual([]);
  });

  it("no credential: refused 500 after the body, nothing sent up", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, credential: null });
    const r = await send(socket, "POST", "/v1/messages", KEY, JSON.stringify(CALL));
    expect(r.status).toBe(500);
    expect(errorOf(r).error).toEqual({
      type: "api_error",
      message: "the host holds no credential for this session's model",
    });
    expect(readLog(log).map((l) => [l.status, l.bytesIn])).toEqual([[500, JSON.stringify(CALL).length]]);
  });

  it("an upstream that cannot be reached: 502 naming why, logged as allowed with the answer's size", async () => {
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, "127.0.0.1", r));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((r) => gone.close(() => r()));
    const { socket, log } = await proxy({ upstream: `http://127.0.0.1:${port}` });
    const r = await send(socket, "POST", "/v1/messages", KEY, JSON.stringify(CALL));
    expect(r.status).toBe(502);
    const e = errorOf(r).error;
    expect(e.type).toBe("api_error");
    expect(e.message).toMatch(/^the model API could not be reached: connect ECONNREFUSED/);
    const [line] = readLog(log);
    expect(line).toEqual({
      time: expect.any(String),
      method: "POST",
      path: "/v1/messages",
      outcome: "allowed",
      status: 502,
      bytesIn: JSON.stringify(CALL).length,
      bytesOut: Buffer.byteLength(r.body),
      why: e.message.replace("the model API could not be reached: ", ""),
    });
  });

  it("an https upstream is spoken to over TLS: a plain HTTP server there cannot answer it", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url.replace("http:", "https:") });
    const r = await send(socket, "POST", "/v1/messages", KEY, JSON.stringify(CALL));
    expect(r.status).toBe(502);
    expect(readLog(log)[0]).toMatchObject({ outcome: "allowed", status: 502 });
  });
});

describe("the model proxy's socket and log", () => {
  it("a connection past the bound is closed at once and logged", async () => {
    const up = await upstream();
    const { socket, log } = await proxy({ upstream: up.url, limits: { connections: 1 } });
    const first: Socket = connect(socket);
    cleanups.push(() => void first.destroy());
    await new Promise<void>((ok) => first.once("connect", () => ok()));
    const second: Socket = connect(socket);
    await new Promise<void>((ok) => second.once("close", () => ok()));
    for (let i = 0; i < 200 && readLog(log).length === 0; i++) await new Promise((ok) => setTimeout(ok, 2));
    expect(readLog(log)).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-/),
        method: "",
        path: "",
        outcome: "refused",
        status: 0,
        bytesIn: 0,
        bytesOut: 0,
        why: "over the session's 1 connections: closed at once",
      },
    ]);
  });

  it("a socket that cannot be made rejects listening", async () => {
    const p = serveSweptProxy({
      socket: join(root, "no-such-dir", "model.sock"),
      upstream: "http://127.0.0.1:1",
      credential: null,
      mode: "model-only",
      egressLog: join(root, "never.jsonl"),
    });
    await expect(p.listening).rejects.toThrow(/^listen E/);
  });

  it("close() is one close, however often it is called, and writes the last summary of suppressed refusals", async () => {
    const up = await upstream();
    const { p, socket, log } = await proxy({ upstream: up.url });
    // 64 refusals are kept; the 65th and 66th are summarised at 1 and 2; the 67th waits for close.
    for (let i = 0; i < 67; i++) await send(socket, "GET", "/v1/models", KEY);
    expect(readLog(log).length).toBe(66);
    const a = p.close();
    expect(p.close(), "the same close").toBe(a);
    await a;
    const last = readLog(log).at(-1)!;
    expect(last).toMatchObject({ outcome: "refused-summary", refused: 67, suppressed: 3, byStatus: { "403": 67 } });
    expect(readLog(log).length).toBe(67);
    expect(existsSync(socket), "the socket is gone").toBe(false);
  });
});

/** serveModelProxy() with the sweep's hooks and more of a test's own: a preload, and its environment. */
function serveWithPreload(o: ModelProxyOptions, preload: string | null, env: Record<string, string> = {}): ModelProxy {
  const sweep = sweepChild();
  const more = preload === null ? [] : ["--import", join(import.meta.dirname, "support", preload)];
  const p = serveModelProxy({ ...o, child: { execArgv: [...sweep.execArgv, ...more], env: { ...sweep.env, ...env } } });
  let closed: Promise<void> | null = null;
  return { listening: p.listening, close: () => (closed ??= p.close().then(() => sweep.collect())) };
}

const realTimeout = globalThis.setTimeout;
/** Whether a promise settles within `ms` of real time: "resolved", "rejected: <message>", or "pending". */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([
    p.then(
      () => "resolved",
      (e: Error) => `rejected: ${e.message}`,
    ),
    new Promise<string>((r) => realTimeout(() => r("pending"), ms)),
  ]);
}
async function fileAppears(f: string): Promise<boolean> {
  for (let i = 0; i < 1000 && !existsSync(f); i++) await new Promise((r) => realTimeout(r, 10));
  return existsSync(f);
}
const options = (name: string, upstream = "http://127.0.0.1:1"): ModelProxyOptions => ({
  socket: join(root, `${name}.sock`),
  upstream,
  credential: null,
  mode: "model-only",
  egressLog: join(root, name, "egress", "run.jsonl"),
});

describe("the model proxy's process, its failures and its end", () => {
  it("a process that cannot be spawned (node gone from under the host): listening rejects naming it, and close() returns", () => {
    const node = join(root, "node-gone", "node");
    mkdirSync(join(root, "node-gone"));
    // Copied by a process of its own: the contract tier's worker threads fork beside this one, and a
    // child forked while this process held the copy open for writing makes its exec fail (ETXTBSY).
    execFileSync("cp", ["--", process.execPath, node]);
    chmodSync(node, 0o755);
    const sweep = sweepChild();
    const out = execFileSync(
      node,
      [
        ...sweep.execArgv,
        join(import.meta.dirname, "support", "proxy-node-gone.ts"),
        join(root, "gone.sock"),
        join(root, "gone", "egress", "run.jsonl"),
      ],
      { env: { ...process.env, ...sweep.env }, encoding: "utf8", timeout: 60_000 },
    );
    sweep.collect();
    const r = JSON.parse(out) as { listening: string; closed: string };
    expect(r.listening, "a launch waiting for it is told why").toMatch(/^rejected: .*ENOENT/);
    expect(r.closed, "the launch's unwind closes it and goes on").toBe("resolved");
    expect(existsSync(join(root, "gone.sock")), "no socket is left").toBe(false);
  });

  it("a socket path already taken: listening rejects, what is there stays, the name it was bound under is gone, and no one waiting is no unhandled rejection", async () => {
    const o = options("taken");
    writeFileSync(o.socket, "someone's file");
    const seen: unknown[] = [];
    const track = (e: unknown) => void seen.push(e);
    process.on("unhandledRejection", track);
    try {
      const p = serveSweptProxy(o);
      await new Promise((r) => setTimeout(r, 20));
      expect(seen, "no unhandled rejection").toEqual([]);
      await expect(p.listening).rejects.toThrow(/^EEXIST: file already exists, link /);
      expect(readFileSync(o.socket, "utf8"), "what was there").toBe("someone's file");
      expect(existsSync(join(root, ".taken.sock")), "the host's bound name").toBe(false);
      await expect(p.close()).resolves.toBeUndefined();
    } finally {
      process.off("unhandledRejection", track);
    }
  });

  it("a proxy whose socket cannot be made: close() resolves", async () => {
    const p = serveSweptProxy({ ...options("no-dir"), socket: join(root, "no-such-dir", "model.sock") });
    await expect(p.listening).rejects.toThrow(/^listen E/);
    await expect(p.close()).resolves.toBeUndefined();
  });

  it("a proxy process that cannot be spawned: listening rejects with spawn's reason, the socket is removed, and close() resolves", async () => {
    const o = options("no-spawn");
    const p = serveModelProxy({ ...o, child: { execArgv: [], env: { BAD: "a\0b" } } });
    await expect(p.listening).rejects.toThrow(/must be a string without null bytes/);
    expect(existsSync(o.socket), "the socket").toBe(false);
    await expect(p.close()).resolves.toBeUndefined();
  });

  it("a proxy process that cannot serve the descriptor it was given says why, exits 1, and listening rejects with that line", async () => {
    const p = serveWithPreload(options("no-socket"), "proxy-child-no-socket.ts");
    // The server's own error line, then the process's last word: the whole stderr, trimmed.
    expect(await settledWithin(p.listening, 15_000)).toMatch(
      /^rejected: the model proxy's process ended before it listened \(exit 1\): model proxy: (listen E[A-Z]+)[^\n]*\nthe model proxy cannot serve its socket: \1[^\n]*[^\s]$/,
    );
    await p.close();
  });

  it("why a process that never started ended: the last 2000 characters of its stderr, trimmed; its log line is a line of its own, 0600", async () => {
    const o = options("long-stderr");
    const flag = `--no-such-${"x".repeat(2500)}-flag`;
    const p = serveModelProxy({ ...o, child: { execArgv: [flag], env: {} } });
    const why = await settledWithin(p.listening, 15_000);
    const said = `node: bad option: ${flag}\n`.slice(-2000).trim();
    expect(why).toBe(`rejected: the model proxy's process ended before it listened (exit 9): ${said}`);
    await p.close();
    expect(existsSync(o.egressLog), `the proxy wrote its egress log at ${o.egressLog}`).toBe(true);
    const text = readFileSync(o.egressLog, "utf8");
    expect(text.endsWith("\n"), "the line ends").toBe(true);
    expect(readLog(o.egressLog).map((l) => l.outcome)).toEqual(["proxy-ended"]);
    expect(statSync(o.egressLog).mode & 0o777).toBe(0o600);
  });

  it("a proxy process that ends before reading its options (too large for the pipe) is no crash of the host: listening rejects", async () => {
    const o = { ...options("no-read"), upstream: `http://127.0.0.1:1/${"p".repeat(1 << 20)}` };
    const seen: unknown[] = [];
    const track = (e: unknown) => void seen.push(e);
    process.on("uncaughtException", track);
    try {
      const p = serveModelProxy({ ...o, child: { execArgv: ["--no-such-node-flag"], env: {} } });
      await expect(p.listening).rejects.toThrow(/\(exit 9\)/);
      await p.close();
      await new Promise((r) => setTimeout(r, 20));
      expect(seen, "no uncaught exception").toEqual([]);
    } finally {
      process.off("uncaughtException", track);
    }
  });

  it("a process that says something other than listening is not listening; one that neither listens nor ends is killed when the listen timeout passes", async () => {
    const said = join(root, "said");
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let p: ModelProxy | undefined;
    try {
      p = serveWithPreload(options("never-listens"), "proxy-child-never-listens.ts", { MOSAIC_TEST_SAID_FILE: said });
      expect(await fileAppears(said), "the process said its message").toBe(true);
      // Two turns of the host's loop: the message, already written, has been read.
      for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
      expect(await settledWithin(p.listening, 0), "another message is not listening").toBe("pending");
      vi.advanceTimersByTime(30_000);
      expect(await settledWithin(p.listening, 10_000)).toMatch(
        /^rejected: the model proxy's process ended before it listened \(signal SIGKILL\)/,
      );
    } finally {
      vi.useRealTimers();
      await p?.close();
    }
  });

  it("close() of a proxy that does not end on SIGTERM kills it when the grace passes, and resolves", async () => {
    const pidFile = join(root, "stopped.pid");
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let pid = 0;
    try {
      const up = await upstream();
      const p = serveWithPreload(options("stopped", up.url), "proxy-child-stopped.ts", {
        MOSAIC_TEST_PID_FILE: pidFile,
      });
      expect(await settledWithin(p.listening, 15_000)).toBe("resolved");
      pid = Number(readFileSync(pidFile, "utf8"));
      process.kill(pid, "SIGSTOP");
      const closing = p.close();
      expect(await settledWithin(closing, 200), "a stopped process does not end on SIGTERM").toBe("pending");
      vi.advanceTimersByTime(5_000);
      expect(await settledWithin(closing, 10_000)).toBe("resolved");
      expect(isRunning(pid), "the process is gone").toBe(false);
    } finally {
      vi.useRealTimers();
      if (pid !== 0 && isRunning(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("close() leaves no timer behind once the process has ended", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const up = await upstream();
      const p = serveSweptProxy(options("no-timer", up.url));
      expect(await settledWithin(p.listening, 15_000)).toBe("resolved");
      expect(await settledWithin(p.close(), 15_000)).toBe("resolved");
      expect(vi.getTimerCount(), "no timer pending").toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("close() after the socket's name is gone still ends the proxy and resolves", async () => {
    const up = await upstream();
    const pidFile = join(root, "unlinked.pid");
    const o = options("unlinked", up.url);
    const p = serveWithPreload(o, "proxy-child-stopped.ts", { MOSAIC_TEST_PID_FILE: pidFile });
    await p.listening;
    const pid = Number(readFileSync(pidFile, "utf8"));
    rmSync(o.socket);
    await expect(p.close()).resolves.toBeUndefined();
    expect(isRunning(pid), "the process is gone").toBe(false);
  });

  it("an error its server hears after listening (an accept that failed) does not end the proxy: it goes on answering", async () => {
    const up = await upstream();
    const pidFile = join(root, "accept.pid");
    const heard = join(root, "accept.heard");
    const o = options("accept-fails", up.url);
    const p = serveWithPreload(o, "proxy-child-accept-fails.ts", {
      MOSAIC_TEST_PID_FILE: pidFile,
      MOSAIC_TEST_HEARD_FILE: heard,
    });
    cleanups.push(() => p.close());
    await p.listening;
    const pid = Number(readFileSync(pidFile, "utf8"));
    process.kill(pid, "SIGUSR2");
    for (let i = 0; i < 1000 && !existsSync(heard) && isRunning(pid); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isRunning(pid), "the proxy's process goes on").toBe(true);
    expect(existsSync(heard), "its server heard the error").toBe(true);
    expect((await send(o.socket, "POST", "/v1/messages", KEY, JSON.stringify(CALL))).status).toBe(500);
  });
});
