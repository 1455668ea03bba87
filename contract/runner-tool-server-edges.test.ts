// The runner's tool socket (src/host/runner/tool-server.ts) in-process, the flow-control edges: a
// client that does not read its answers, a connection paused at its pending bound, what happens to
// bytes sent after a refusal that closes the connection, and a client that vanishes mid-call.
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolSocketBounds } from "../src/core/runner/bounds.ts";
import { boundRefusal, type ToolRoute } from "../src/core/runner/tool-call.ts";
import { serveToolSocket, type ToolForward } from "../src/host/runner/tool-server.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("tool-server-edges");
afterAll(() => scratch.remove());
let n = 0;

const BOUNDS: ToolSocketBounds = { lineBytes: 4096, depth: 8, argsBytes: 1024, connections: 4, pending: 8 };
const ROUTES = new Map<string, ToolRoute>([["send_message", { broker: "message.send" }]]);
const req = (id: unknown, args: unknown = {}) => JSON.stringify({ id, tool: "send_message", args }) + "\n";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(forward: ToolForward, bounds: Partial<ToolSocketBounds> = {}) {
  const path = join(scratch.root, `e${n++}.sock`);
  const server = await serveToolSocket({ path }, ROUTES, null, forward, { ...BOUNDS, ...bounds });
  return { path, server };
}

function lines(c: Socket): string[] {
  const out: string[] = [];
  let buf = "";
  c.setEncoding("utf8");
  c.on("data", (d: string) => {
    buf += d;
    for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
      out.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  return out;
}

async function until(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(2);
  return cond();
}

describe("the tool socket's flow control", () => {
  it("a client that stops reading pauses its connection; once it reads again, the connection is read again", async () => {
    const big = "x".repeat(256 * 1024);
    const s = await serve(async () => ({ kind: "ok", result: big }));
    const c = connect(s.path);
    c.on("error", () => {});
    await new Promise<void>((ok) => c.on("connect", () => ok()));
    c.pause();
    // Answers of 256 KiB each, unread: the server's writes back up and it stops reading.
    c.write(req(1) + req(2) + req(3) + req(4));
    await sleep(150);
    const got = lines(c);
    c.resume();
    expect(await until(() => got.length === 4), "the four answers arrive once read").toBe(true);
    c.write(req(5));
    expect(await until(() => got.length === 5), "a request after the backlog drained is answered").toBe(true);
    expect((JSON.parse(got[4]!) as { id: number }).id).toBe(5);
    c.destroy();
    s.server.close();
  });

  it("at its pending bound a connection is not read: bytes sent meanwhile are read only after the answer", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((ok) => (release = ok));
    const s = await serve(
      async () => {
        await gate;
        return { kind: "ok", result: "released" };
      },
      { pending: 1, lineBytes: 64 },
    );
    const c = connect(s.path);
    c.on("error", () => {});
    const got = lines(c);
    await new Promise<void>((ok) => c.on("connect", () => ok()));
    c.write(req(1));
    await sleep(30);
    // Past lineBytes without a newline: a connection still read would refuse it at once.
    c.write("y".repeat(100));
    await sleep(150);
    expect(got, "nothing read while the request waits").toEqual([]);
    release();
    expect(await until(() => got.length === 2)).toBe(true);
    expect(got.map((l) => JSON.parse(l) as unknown)).toEqual([
      { id: 1, ok: true, result: "released" },
      { id: null, ok: false, error: boundRefusal("lineBytes", { ...BOUNDS, pending: 1, lineBytes: 64 }) },
    ]);
    c.destroy();
    s.server.close();
  });

  it("after a refusal that closes the connection, what the client still sends is never served", async () => {
    const seen: unknown[] = [];
    const s = await serve(
      async (_s, _v, args) => {
        seen.push(args);
        return { kind: "ok", result: null };
      },
      { lineBytes: 64 },
    );
    const c = connect({ path: s.path, allowHalfOpen: true });
    c.on("error", () => {});
    const got = lines(c);
    await new Promise<void>((ok) => c.on("connect", () => ok()));
    c.write("z".repeat(100));
    expect(await until(() => got.length === 1)).toBe(true);
    c.write(req(7, { after: true }));
    await sleep(100);
    expect(seen, "the request after the refusal reached no forward").toEqual([]);
    c.destroy();
    s.server.close();
  });

  it("a client that keeps its side open after a refusal is disconnected after the linger", async () => {
    const s = await serve(async () => ({ kind: "ok", result: null }), { lineBytes: 64 });
    const c = connect({ path: s.path, allowHalfOpen: true });
    let failed = false;
    c.on("error", () => (failed = true));
    c.on("close", () => (failed = true));
    let ended = false;
    c.on("end", () => (ended = true)); // half open: the client does not end its side
    c.resume();
    await new Promise<void>((ok) => c.on("connect", () => ok()));
    c.write("z".repeat(100));
    expect(await until(() => ended)).toBe(true);
    await sleep(1200);
    // Past the linger the server's side is gone: a write now fails.
    c.write("still here\n");
    expect(await until(() => failed, 1000), "the server destroyed the connection").toBe(true);
    c.destroy();
    s.server.close();
  });

  it("a client that resets its connection while a call is on its way ends only that connection", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((ok) => (release = ok));
    const s = await serve(async (_s, _v, args) => {
      if ((args as { slow?: boolean }).slow === true) await gate;
      return { kind: "ok", result: "x".repeat(64 * 1024) };
    });
    const c = connect(s.path);
    c.on("error", () => {});
    await new Promise<void>((ok) => c.on("connect", () => ok()));
    c.pause();
    c.write(req(1) + req(2, { slow: true }));
    await sleep(50);
    // Unread answer bytes in its buffer: closing now resets the connection under the server.
    c.destroy();
    await sleep(20);
    release();
    await sleep(50);
    const k = connect(s.path);
    k.on("error", () => {});
    const got = lines(k);
    k.write(req(3));
    expect(await until(() => got.length === 1), "the server still answers").toBe(true);
    k.destroy();
    s.server.close();
  });
});
