// The runner's tool socket against any input: fast-check drives the REAL serveToolSocket (in a
// process of its own, contract/support/tool-socket-child.ts, so a throw that escapes a connection
// ends it as it would end pid 1) with arbitrary bytes, deep nesting, huge lines, split writes and
// many connections. After every case a well-formed request must still get its exact answer.
// Fixed seeds keep the tier repeatable; the whole file takes a few seconds.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planRunnerBounds } from "../src/core/runner/bounds.ts";
import { boundRefusal } from "../src/core/runner/tool-call.ts";
import { callBroker } from "../src/host/runner/broker-client.ts";

const CHILD = join(import.meta.dirname, "support/tool-socket-child.ts");
const BOUNDS = planRunnerBounds({ kind: "exit" }).toolSocket;
const SEED = 18_04;
const MiB = 1024 * 1024;

interface Server {
  child: ChildProcess;
  dir: string;
  sock: string;
  stderr(): string;
  /** Sockets it holds with no client connected: its listening socket. */
  idleSockets: number;
}

/** The real tool server in its own process; `limit` runs it under a low descriptor limit. */
async function startServer(label: string, limit?: number): Promise<Server> {
  const dir = mkdtempSync(`/var/tmp/mosaic-tool-socket-${label}-`);
  const argv = [process.execPath, CHILD, dir];
  const cmd = limit === undefined ? argv : ["prlimit", `--nofile=${limit}:${limit}`, "--", ...argv];
  const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  await new Promise<void>((ok, fail) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => d.includes("ready") && ok());
    child.on("exit", (code) => fail(new Error(`the tool server exited ${code} before it listened: ${err}`)));
  });
  return { child, dir, sock: join(dir, "tools.sock"), stderr: () => err, idleSockets: socketsOf(child.pid!) };
}

/** How many sockets a process holds open (its listening socket and every connection it has not closed). */
function socketsOf(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
}

/**
 * Waits until the server holds no connection: a client's close reaches it a few turns of its event
 * loop later, and one it still counts would take a place under the connections bound.
 */
async function connectionsClosed(s: Server): Promise<void> {
  for (let t0 = Date.now(); socketsOf(s.child.pid!) > s.idleSockets && Date.now() - t0 < 5_000; )
    await new Promise((ok) => setTimeout(ok, 10));
  expect(socketsOf(s.child.pid!), "the server closed every earlier connection").toBe(s.idleSockets);
}

async function stopServer(s: Server | undefined): Promise<void> {
  if (s === undefined) return;
  s.child.kill("SIGKILL");
  rmSync(s.dir, { recursive: true, force: true });
}

type Exchange = { lines: string[]; closed: boolean };

/**
 * One connection: the chunks written one at a time (each its own write, a turn of the event loop
 * apart), then the answer lines read until `want` of them, the server closes, or `waitMs` passes.
 */
function exchange(
  sock: string,
  chunks: Array<Uint8Array | string>,
  opts: { want?: number; waitMs?: number; end?: boolean } = {},
): Promise<Exchange> {
  const want = opts.want ?? 1;
  return new Promise((resolve) => {
    let buf = "";
    const lines: string[] = [];
    let closed = false;
    let settled = false;
    const c = connect(sock);
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      c.destroy();
      resolve({ lines, closed });
    };
    // An answer settles the exchange at once; the bound only ends a wait for one that never comes,
    // so it is generous: instrumented (the generated sweep) and loaded, a MiB line takes seconds.
    const timer = setTimeout(settle, opts.waitMs ?? 20_000);
    c.setEncoding("utf8");
    c.on("error", () => {});
    c.on("data", (d: string) => {
      buf += d;
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (lines.length >= want) settle();
    });
    c.on("close", () => {
      closed = true;
      settle();
    });
    c.on("connect", async () => {
      for (const chunk of chunks) {
        if (c.destroyed) return;
        await new Promise<void>((ok) => c.write(chunk, () => ok()));
        await new Promise((ok) => setImmediate(ok));
      }
      if (opts.end === true && !c.destroyed) c.end();
    });
  });
}

const request = (id: string, tool: string, args: unknown) => JSON.stringify({ id, tool, args }) + "\n";
const echoed = (id: string, verb: string, args: unknown) => ({ id, ok: true, result: { verb, args } });
const parsed = (line: string | undefined) => (line === undefined ? "no answer" : (JSON.parse(line) as unknown));

let probes = 0;
/** A well-formed request on a fresh connection gets its exact answer: the server survived the case. */
async function expectAlive(s: Server, after: string): Promise<void> {
  const id = `probe-${++probes}`;
  const args = { to: "pm", body: `still there after ${after}` };
  const got = await exchange(s.sock, [request(id, "send_message", args)]);
  expect(s.child.exitCode, `the tool server did not exit after ${after}: ${s.stderr().slice(0, 500)}`).toBeNull();
  expect(
    parsed(got.lines[0]),
    `the tool server still answers a well-formed request after ${after} (a crash would leave no answer)`,
  ).toEqual(echoed(id, "message.send", args));
}

/** fast-check's verdict as an assertion: a counterexample fails the test by expect, with the seed and the case. */
async function holds<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  body: (v: T) => Promise<void>,
  numRuns: number,
): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arb, body), { seed: SEED, numRuns, endOnFailure: true });
  const inner =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance ?? "");
  expect(details.failed, `${name}: ${fc.defaultReportMessage(details) ?? ""}\n${inner}`).toBe(false);
}

/** Bytes a client could send: arbitrary ones, and JSON-ish fragments that reach the parser's corners. */
const FRAGMENT = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .constantFrom(
      "[",
      "]",
      "{",
      "}",
      '"',
      "\\",
      "\n",
      "\r\n",
      ",",
      ":",
      '{"tool":',
      '"args":',
      "\u00e9",
      "\ud800",
      "\0",
    )
    .map((t) => new TextEncoder().encode(t)),
  fc.json({ maxDepth: 4 }).map((j) => new TextEncoder().encode(j + "\n")),
);

let s: Server;
beforeAll(async () => {
  s = await startServer("fuzz");
});
afterAll(async () => stopServer(s));

describe("the tool socket survives any input (fast-check, the real serveToolSocket)", () => {
  it("arbitrary bytes in arbitrary writes: every answer is one well-formed JSON line, and the server still answers", async () => {
    await holds(
      "arbitrary bytes",
      fc.array(FRAGMENT, { maxLength: 12 }),
      async (chunks) => {
        const got = await exchange(s.sock, chunks, { want: Number.MAX_SAFE_INTEGER, waitMs: 150, end: true });
        for (const line of got.lines) {
          const a = JSON.parse(line) as { ok?: unknown; error?: unknown };
          expect(
            typeof a === "object" && a !== null && typeof a.ok === "boolean",
            `an answer is {id, ok, ...}: ${line.slice(0, 200)}`,
          ).toBe(true);
        }
        await expectAlive(s, "arbitrary bytes");
      },
      40,
    );
  }, 60_000);

  it("nesting past the depth bound is answered with the depth bound, before any parse; within it the call goes through", async () => {
    const open = fc.constantFrom("[", '{"a":');
    await holds(
      "deep nesting",
      fc.tuple(fc.integer({ min: BOUNDS.depth + 1, max: 30_000 }), open, fc.boolean()),
      async ([depth, o, closeIt]) => {
        const inner = o.repeat(depth - 1) + (closeIt ? "0" + (o === "[" ? "]" : "}").repeat(depth - 1) : "");
        const line = `{"id":"deep","tool":"send_message","args":{"x":${inner}}}\n`;
        const got = await exchange(s.sock, [line]);
        expect(parsed(got.lines[0]), `${depth} deep: refused by the depth bound`).toEqual({
          id: null,
          ok: false,
          error: boundRefusal("depth", BOUNDS),
        });
        await expectAlive(s, `${depth}-deep arguments`);
      },
      12,
    );
    // The finding's request: 20,000-deep arguments, which overflowed JSON.stringify in the broker call.
    const finding = `{"id":1,"tool":"send_message","args":{"x":${"[".repeat(20_000)}${"]".repeat(20_000)}}}\n`;
    expect(
      parsed((await exchange(s.sock, [finding])).lines[0]),
      "the finding's 20,000-deep request is refused by the depth bound",
    ).toEqual({ id: null, ok: false, error: boundRefusal("depth", BOUNDS) });
    await expectAlive(s, "the finding's 20,000-deep request");
    // Within the bound, nesting is the client's business: the call goes through whole.
    const within = JSON.parse(
      `{"to":"pm","x":${"[".repeat(BOUNDS.depth - 2)}1${"]".repeat(BOUNDS.depth - 2)}}`,
    ) as unknown;
    expect(
      parsed((await exchange(s.sock, [request("within", "send_message", within)])).lines[0]),
      "nesting within the bound is forwarded",
    ).toEqual(echoed("within", "message.send", within));
  }, 60_000);

  it("a line past the line bound, ended or not, gets the line bound's answer and the connection closes", async () => {
    await holds(
      "huge lines",
      fc.tuple(fc.integer({ min: 1, max: 300_000 }), fc.boolean(), fc.integer({ min: 1, max: 8 })),
      async ([over, ended, pieces]) => {
        const total = BOUNDS.lineBytes + over;
        const step = Math.ceil(total / pieces);
        const chunks: Uint8Array[] = [];
        for (let at = 0; at < total; at += step) chunks.push(Buffer.alloc(Math.min(step, total - at), 0x61));
        if (ended) chunks.push(Buffer.from("\n"));
        const got = await exchange(s.sock, chunks, { want: 2 });
        expect(
          got.lines.map(parsed),
          `${total} bytes${ended ? " and a newline" : ""}: one answer naming the line bound`,
        ).toEqual([{ id: null, ok: false, error: boundRefusal("lineBytes", BOUNDS) }]);
        expect(got.closed, "the connection is closed after it").toBe(true);
        await expectAlive(s, `a ${total}-byte line`);
      },
      6,
    );
  }, 60_000);

  it("args past the args bound, in a line within its bound, are refused naming the args bound", async () => {
    const body = "b".repeat(BOUNDS.argsBytes);
    const line = request("big", "send_message", { to: "pm", body });
    expect(Buffer.byteLength(line), "the line itself is within the line bound").toBeLessThanOrEqual(BOUNDS.lineBytes);
    expect(parsed((await exchange(s.sock, [line])).lines[0]), "args past the bound are refused").toEqual({
      id: "big",
      ok: false,
      error: boundRefusal("argsBytes", BOUNDS),
    });
    const fits = { to: "pm", body: "b".repeat(BOUNDS.argsBytes - 30) };
    expect(
      parsed((await exchange(s.sock, [request("fits", "send_message", fits)])).lines[0]),
      "args within the bound go through",
    ).toEqual(echoed("fits", "message.send", fits));
  });

  it("a well-formed request split at any points, with other requests pipelined, gets its exact answers in order", async () => {
    const args = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
    await holds(
      "split writes",
      fc.tuple(
        fc.array(args, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 6 }),
      ),
      async ([calls, cuts]) => {
        const text = Buffer.from(calls.map((a, i) => request(`split-${i}`, "send_message", a)).join(""));
        const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at]
          .map((from, i) => text.subarray(from, [...at, text.length][i]))
          .filter((c) => c.length > 0);
        const got = await exchange(s.sock, chunks, { want: calls.length });
        // What the echo broker got back is what JSON made of the args (a "__proto__" key stays a key).
        expect(got.lines.map(parsed), "each request answered whole, in order").toEqual(
          calls.map((a, i) => echoed(`split-${i}`, "message.send", JSON.parse(JSON.stringify(a)))),
        );
      },
      60,
    );
  }, 60_000);

  it("a forward that throws, rejects, or returns what cannot be encoded becomes an error answer; the server lives", async () => {
    for (const tool of ["stub_throws", "stub_rejects", "stub_deep_result"]) {
      const got = await exchange(s.sock, [request(tool, tool, {})]);
      expect(parsed(got.lines[0]), `${tool}: one error answer`).toEqual({
        id: null,
        ok: false,
        error: "refused: the runner could not make the call",
      });
      await expectAlive(s, `a forward that ${tool.slice(5)}`);
    }
  });

  it("connections past the connections bound are answered naming it and closed; the rest are served", async () => {
    await holds(
      "many connections",
      fc.integer({ min: BOUNDS.connections + 1, max: BOUNDS.connections + 60 }),
      async (n) => {
        await connectionsClosed(s);
        const held: Socket[] = [];
        const refusals: string[] = [];
        try {
          for (let k = 0; k < n; k++) {
            const c = connect(s.sock);
            held.push(c);
            c.setEncoding("utf8");
            c.on("error", () => {});
            c.on("data", (d: string) => refusals.push(d.trim()));
            c.on("connect", () => c.write('{"tool":'));
          }
          // Until the refusals the bound implies have come (or 2 s), then a moment for any extra one.
          for (let t0 = Date.now(); refusals.length < n - BOUNDS.connections && Date.now() - t0 < 2_000; )
            await new Promise((ok) => setTimeout(ok, 10));
          await new Promise((ok) => setTimeout(ok, 50));
          expect(
            refusals.map(parsed),
            `${n} held at once: ${n - BOUNDS.connections} refused by the connections bound`,
          ).toEqual(
            Array.from({ length: n - BOUNDS.connections }, () => ({
              id: null,
              ok: false,
              error: boundRefusal("connections", BOUNDS),
            })),
          );
        } finally {
          // A failed run closes what it holds too, so no later test meets a full server.
          await Promise.all(
            held.map((c) => new Promise((ok) => (c.destroyed ? ok(null) : (c.once("close", ok), c.destroy())))),
          );
        }
        await connectionsClosed(s);
        await expectAlive(s, `${n} connections at once`);
      },
      4,
    );
  }, 60_000);

  it("a client that never reads its answers is no longer read: its requests wait in its own buffer, not the runner's", async () => {
    const c = connect(s.sock);
    c.on("error", () => {});
    await new Promise((ok) => c.once("connect", ok));
    // 64-byte requests, each answered with an error line: 4 MiB of them, written and never read.
    const line = '{"tool":1}'.padEnd(63, " ") + "\n";
    const total = 4 * MiB;
    c.write(Buffer.from(line.repeat(total / 64)));
    // Until the client's buffer has not shrunk for 1.5 s: a server that reads on regardless drains it
    // to nothing, however loaded the machine (it would have to stall 1.5 s to look paused).
    for (let last = -1, still = 0, t0 = Date.now(); still < 3 && c.writableLength > 0 && Date.now() - t0 < 15_000; ) {
      still = c.writableLength === last ? still + 1 : 0;
      last = c.writableLength;
      await new Promise((ok) => setTimeout(ok, 500));
    }
    expect(
      c.writableLength,
      "the server stopped reading a client that does not read: most of its requests are still in the client's buffer",
    ).toBeGreaterThan(total / 2);
    // Read now: everything is answered, in order, and the backlog drains.
    let answers = 0;
    c.setEncoding("utf8");
    c.on("data", (d: string) => (answers += d.split("\n").length - 1));
    for (let t0 = Date.now(); answers < total / 64 && Date.now() - t0 < 20_000; )
      await new Promise((ok) => setTimeout(ok, 50));
    expect(answers, "every request is answered once the client reads").toBe(total / 64);
    c.destroy();
    await expectAlive(s, "a client that did not read");
  }, 40_000);
});

describe("the tool socket at the descriptor limit", () => {
  let low: Server | undefined;
  afterAll(async () => stopServer(low));
  it("a flood past the descriptor limit (EMFILE at accept) does not end the server", async () => {
    low = await startServer("emfile", 40);
    const flood = await Promise.all(
      Array.from({ length: 120 }, () => exchange(low!.sock, ['{"tool":'], { want: 1, waitMs: 300 })),
    );
    // About 16 descriptors are free under this limit: the rest of the flood meets EMFILE, and libuv closes them unanswered.
    expect(
      flood.filter((e) => e.closed && e.lines.length === 0).length,
      "the flood reached the descriptor limit",
    ).toBeGreaterThan(50);
    await new Promise((ok) => setTimeout(ok, 50));
    await expectAlive(low, "a flood at the descriptor limit");
  }, 30_000);
});

describe("callBroker never throws", () => {
  it("args too deep to encode come back as a call not made, not a throw", async () => {
    let v: unknown = 0;
    for (let i = 0; i < 20_000; i++) v = [v];
    let got: unknown;
    try {
      got = await callBroker("/nonexistent/broker.sock", "stand-in-cap", "message.send", { x: v }, 500);
    } catch (e) {
      got = `threw: ${String(e)}`;
    }
    expect(got, "an unencodable request resolves as a call not made").toEqual({
      kind: "unreachable",
      why: expect.stringMatching(/^the request could not be encoded/),
    });
  });
});
