// The stand-in broker on real Unix sockets under a scratch root: local IPC, fast enough for the
// contract tier. Each test starts its own broker and stops it.
import fc from "fast-check";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { connectLines, type LineClient } from "../src/conformance/stand-ins/broker/client.ts";
import {
  MAX_LINE_BYTES,
  newFramer,
  readLines,
  type BrokerResponse,
} from "../src/conformance/stand-ins/broker/protocol.ts";
import { startBroker, type StandInBroker } from "../src/conformance/stand-ins/broker/server.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { isMosaicError } from "../src/core/errors.ts";

const scratch = makeScratch("broker");
afterAll(() => scratch.remove());

let started: StandInBroker[] = [];
let clients: LineClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  await Promise.all(started.map((b) => b.stop()));
  started = [];
  clients = [];
});

let dirs = 0;
/** A fresh short directory per broker: its socket paths stay well under 107 bytes. */
function dir(): string {
  const d = join(scratch.root, String(++dirs));
  mkdirSync(d);
  return d;
}

async function broker(at = dir()): Promise<StandInBroker> {
  const b = await startBroker({ dir: at });
  started.push(b);
  return b;
}

async function client(path: string): Promise<LineClient> {
  const c = await connectLines(path);
  clients.push(c);
  return c;
}

/** Starts a broker with pm-1 of run-1 issued and claimed over the socket. */
async function claimed() {
  const b = await broker();
  const cap = b.issueCapability({ run: "run-1", instance: "pm-1", business: "acme" });
  const c = await client(b.brokerSocket);
  expect(await c.call({ id: "claim", cap, verb: "role.claim", args: {} })).toEqual({
    id: "claim",
    ok: true,
    result: { instance: "pm-1", run: "run-1" },
  });
  return { b, cap, c };
}

const line = (r: object) => JSON.stringify(r) + "\n";

async function lines(c: LineClient, n: number): Promise<BrokerResponse[]> {
  const out: BrokerResponse[] = [];
  for (let i = 0; i < n; i++) {
    const e = await c.next(2000);
    if (e.kind !== "line") throw new Error(`response ${i + 1} of ${n}: ${e.kind}`);
    out.push(JSON.parse(e.text) as BrokerResponse);
  }
  return out;
}

/** Unix-socket handles of this thread: servers and connections. */
function pipeHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "PipeWrap" || r === "PipeServerWrap").length;
}

/** The count once closing handles have left the list (a later turn of the event loop), or after 2 s. */
/** Waits (up to 2 s) for the open socket handles to fall to `base`; returns how many are open. */
async function pipeHandlesSettled(base = 0): Promise<number> {
  for (let i = 0; i < 200 && pipeHandles() > base; i++) await new Promise((r) => setTimeout(r, 10));
  return pipeHandles();
}

describe("the stand-in broker on real sockets", () => {
  it("round trips: claim, send, a host-delivered message read back, launch on the launch socket; every call recorded", async () => {
    const { b, cap, c } = await claimed();
    expect(await c.call({ id: 2, cap, verb: "message.send", args: { to: "coder-1", body: "hi" } })).toEqual({
      id: 2,
      ok: true,
      result: { id: "m-1" },
    });
    expect(b.sentTo("coder-1")).toEqual([
      { id: "m-1", from: "pm-1", to: "coder-1", kind: "message", body: "hi", read: false },
    ]);
    const delivered = b.deliver("pm-1", { from: "founder", body: "status?" });
    expect(await c.call({ id: 3, cap, verb: "message.read", args: {} })).toEqual({
      id: 3,
      ok: true,
      result: { messages: [{ id: delivered, from: "founder", kind: "message", body: "status?" }] },
    });
    const l = await client(b.launchSocket);
    expect(await l.call({ id: 4, cap, verb: "launch", args: { instance: "coder-1", message: "go" } })).toEqual({
      id: 4,
      ok: true,
      result: { launched: true, instance: "coder-1" },
    });
    expect(b.state().launches).toEqual([{ by: "pm-1", run: "run-1", instance: "coder-1", message: "go" }]);
    const recs = b.records();
    expect(recs.map((r) => [r.socket, r.verb, r.outcome])).toEqual([
      ["broker", "role.claim", "ok"],
      ["broker", "message.send", "ok"],
      ["broker", "message.read", "ok"],
      ["launch", "launch", "ok"],
    ]);
    for (const r of recs)
      expect(r, "each call carried the session's capability").toMatchObject({
        cap,
        capValid: true,
        run: "run-1",
        instance: "pm-1",
      });
    expect(Number.isNaN(Date.parse(recs[0]!.at))).toBe(false);
  });

  it("pipelined requests on one connection get one response each, in order", async () => {
    const { cap, c } = await claimed();
    c.send(
      line({ id: 1, cap, verb: "task.create", args: { title: "a", body: "b" } }) +
        line({ id: 2, cap, verb: "task.list", args: {} }) +
        line({ id: 3, cap, verb: "no.such", args: {} }),
    );
    const rs = await lines(c, 3);
    expect(rs.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(rs[1]).toEqual({ id: 2, ok: true, result: { tasks: [{ id: "t-1", title: "a", state: "open" }] } });
    expect(rs[2]).toMatchObject({ ok: false, error: { code: "unknown-verb" } });
  });

  it("a request split across writes, CRLF ended, is one request", async () => {
    const { cap, c } = await claimed();
    const text = JSON.stringify({ id: "split", cap, verb: "message.read", args: {} }) + "\r\n";
    c.send(text.slice(0, 10));
    await new Promise((r) => setTimeout(r, 20));
    c.send(text.slice(10));
    expect(await lines(c, 1)).toEqual([{ id: "split", ok: true, result: { messages: [] } }]);
  });

  it("a garbage line, bad UTF-8 and a bad shape each get bad-request; the good line after them is served", async () => {
    const { b, cap, c } = await claimed();
    c.send("garbage\n");
    c.send(new Uint8Array([0x7b, 0xff, 0x7d, 0x0a]));
    c.send(line({ id: 9, cap, verb: "message.read" }));
    c.send("\n");
    c.send(line({ id: 10, cap, verb: "message.read", args: {} }));
    const rs = await lines(c, 4);
    expect(rs[0]).toMatchObject({
      id: null,
      ok: false,
      error: { code: "bad-request", message: expect.stringMatching(/^line: not JSON/) },
    });
    expect(rs[1]).toEqual({ id: null, ok: false, error: { code: "bad-request", message: "line: not valid UTF-8" } });
    expect(rs[2]).toEqual({ id: 9, ok: false, error: { code: "bad-request", message: "args: must be a JSON object" } });
    expect(rs[3], "the empty line got no response; the next request did").toEqual({
      id: 10,
      ok: true,
      result: { messages: [] },
    });
    expect(b.records().filter((r) => r.code === "bad-request")).toHaveLength(3);
  });

  it("an over-long line gets bad-request and the connection is closed; the broker serves the next connection", async () => {
    const { b, cap, c } = await claimed();
    c.send(new Uint8Array(MAX_LINE_BYTES + 1).fill(0x61));
    const e = await c.next(5000);
    expect(e.kind === "line" && JSON.parse(e.text)).toEqual({
      id: null,
      ok: false,
      error: { code: "bad-request", message: `line: longer than ${MAX_LINE_BYTES} bytes` },
    });
    expect((await c.next(5000)).kind).toBe("closed");
    const again = await client(b.brokerSocket);
    expect(await again.call({ id: 1, cap, verb: "message.read", args: {} })).toMatchObject({ ok: true });
  });

  it("any bytes, in any chunks, then a good request: one response per line the parser sees, in order, and the good one answered (fixed seed)", async () => {
    const { b, cap } = await claimed();
    const noNewline = fc.uint8Array({ maxLength: 60 }).map((u) => u.map((x) => (x === 0x0a ? 0x20 : x)));
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(noNewline, fc.constant(new TextEncoder().encode('{"id":1,"cap":"x","verb":"v","args":{}}'))),
          { maxLength: 6 },
        ),
        fc.nat({ max: 30 }),
        async (garbage, size) => {
          const c = await client(b.brokerSocket);
          const last = new TextEncoder().encode(line({ id: "last", cap, verb: "message.read", args: {} }));
          const bytes = new Uint8Array([...garbage.flatMap((g) => [...g, 0x0a]), ...last]);
          const expected = readLines(newFramer(), bytes).lines.length;
          for (let at = 0; at < bytes.length; at += size + 1) c.send(bytes.subarray(at, at + size + 1));
          const rs = await lines(c, expected);
          // An extra response would push "last" past the count, a missing one would time out.
          expect(rs.at(-1)).toEqual({ id: "last", ok: true, result: { messages: [] } });
          c.close();
        },
      ),
      { seed: 20261204, numRuns: 25 },
    );
  });

  it("a client gone mid-line is fine", async () => {
    const { b, cap } = await claimed();
    const half = await client(b.brokerSocket);
    half.send('{"id":1,"cap":');
    half.close();
    const next = await client(b.brokerSocket);
    expect(await next.call({ id: 2, cap, verb: "message.read", args: {} })).toMatchObject({ ok: true });
  });

  it("a forged capability over the wire: unauthenticated, recorded, no effect", async () => {
    const { b, c } = await claimed();
    const before = b.state();
    const forged = "0".repeat(64);
    expect(await c.call({ id: 1, cap: forged, verb: "message.send", args: { to: "x", body: "y" } })).toEqual({
      id: 1,
      ok: false,
      error: { code: "unauthenticated", message: "not a live capability" },
    });
    expect(b.state(), "the state is the same object: nothing done").toBe(before);
    expect(b.records().at(-1)).toMatchObject({
      cap: forged,
      capValid: false,
      run: null,
      outcome: "error",
      code: "unauthenticated",
    });
  });

  it("end of run and a revoked claim, over the wire", async () => {
    const { b, cap, c } = await claimed();
    const other = b.issueCapability({ run: "run-2", instance: "coder-1" });
    expect(await c.call({ id: 1, cap: other, verb: "role.claim", args: {} })).toMatchObject({ ok: true });
    b.revokeClaim("coder-1");
    expect(await c.call({ id: 2, cap: other, verb: "message.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "claim-revoked" },
    });
    b.endRun("run-1");
    expect(await c.call({ id: 3, cap, verb: "message.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "unauthenticated" },
    });
  });

  it("both sockets are mode 0600", async () => {
    const b = await broker();
    for (const p of [b.brokerSocket, b.launchSocket]) {
      expect(statSync(p).isSocket(), p).toBe(true);
      expect((statSync(p).mode & 0o777).toString(8), p).toBe("600");
    }
  });

  it("unresponsive: a request is read and recorded but gets no answer and does nothing; answering resumes when switched back", async () => {
    const b = await broker();
    const cap = b.issueCapability({ run: "run-1", instance: "pm-1" });
    const c = await client(b.brokerSocket);
    b.setUnresponsive(true);
    const before = b.state();
    c.send(line({ id: 1, cap, verb: "role.claim", args: {} }));
    expect((await c.next(300)).kind, "no answer within 300 ms").toBe("timeout");
    expect(b.state(), "the claim was not made").toBe(before);
    expect(b.records()).toMatchObject([{ verb: "role.claim", cap, capValid: true, outcome: "unanswered" }]);
    b.setUnresponsive(false);
    expect(await c.call({ id: 2, cap, verb: "role.claim", args: {} })).toEqual({
      id: 2,
      ok: true,
      result: { instance: "pm-1", run: "run-1" },
    });
  });

  it("stop() closes every connection, removes both socket files and leaves no open handle", async () => {
    // The process may hold sockets of its own (a mutation host's IPC): count from what is open now.
    const base = await pipeHandlesSettled();
    const b = await startBroker({ dir: dir() });
    const cap = b.issueCapability({ run: "run-1", instance: "pm-1" });
    const c = await connectLines(b.brokerSocket);
    const l = await connectLines(b.launchSocket);
    expect(await c.call({ id: 1, cap, verb: "role.claim", args: {} })).toMatchObject({ ok: true });
    expect(pipeHandles()).toBeGreaterThan(base);
    await b.stop();
    expect((await c.next(2000)).kind, "the broker closed the connection").toBe("closed");
    expect((await l.next(2000)).kind, "and the launch socket's").toBe("closed");
    expect(existsSync(b.brokerSocket)).toBe(false);
    expect(existsSync(b.launchSocket)).toBe(false);
    const refused = await new Promise<string>((r) =>
      connect(b.brokerSocket)
        .on("error", (e: NodeJS.ErrnoException) => r(e.code ?? ""))
        .on("connect", () => r("connected")),
    );
    expect(refused).toBe("ENOENT");
    expect(await pipeHandlesSettled(base), "no socket handle left open").toBeLessThanOrEqual(base);
    await b.stop();
  });

  it("refuses a directory whose socket paths would pass 107 bytes, before listening", async () => {
    const dir = join(scratch.root, "d".repeat(100));
    const e = await startBroker({ dir }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(isMosaicError(e), String(e)).toBe(true);
    expect(e).toMatchObject({ code: "socket-path-too-long", field: "dir" });
    expect(existsSync(join(dir, "broker.sock"))).toBe(false);
  });

  it("a socket file already there is an error, not taken over", async () => {
    const d = dir();
    const b = await broker(d);
    await expect(startBroker({ dir: d })).rejects.toMatchObject({ code: "EADDRINUSE" });
    expect(existsSync(b.brokerSocket), "the running broker's socket is untouched").toBe(true);
  });
});
