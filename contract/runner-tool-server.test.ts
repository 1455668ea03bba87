// The runner's tool socket (src/host/runner/tool-server.ts) in-process, with small bounds and a
// forward the test controls: what each line gets back, in what order, and what each bound does.
// contract/runner-tool-socket.test.ts fuzzes the same server in a process of its own.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolSocketBounds } from "../src/core/runner/bounds.ts";
import type { BrokerAnswer } from "../src/core/runner/decisions.ts";
import { boundRefusal, type ToolRoute } from "../src/core/runner/tool-call.ts";
import { GATE_REPORT_TOOL, type GateReport } from "../src/core/runner/tripwire.ts";
import { serveToolSocket, type ToolForward } from "../src/host/runner/tool-server.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { boundSocket } from "./support/runner-main-child.ts";
import { sweepChild } from "./support/sweep-child.ts";

const TOOL_CHILD = join(import.meta.dirname, "support/tool-socket-child.ts");

const scratch = makeScratch("tool-server");
afterAll(() => scratch.remove());
let n = 0;

const BOUNDS: ToolSocketBounds = { lineBytes: 4096, depth: 8, argsBytes: 1024, connections: 4, pending: 8 };
const ROUTES = new Map<string, ToolRoute>([
  ["send_message", { broker: "message.send" }],
  ["launch_agent", { launchSocket: true }],
]);
const DIGEST = "b".repeat(64);

type Forwarded = { socket: string; verb: string; args: unknown };

/** A forward that echoes, after `delay` ms for a verb that asks for one. */
function echo(seen: Forwarded[]): ToolForward {
  return async (socket, verb, args) => {
    seen.push({ socket, verb, args });
    const wait = (args as { delay?: number }).delay;
    if (wait !== undefined) await new Promise((r) => setTimeout(r, wait));
    return { kind: "ok", result: { verb, args } };
  };
}

async function serve(
  opts: {
    bounds?: Partial<ToolSocketBounds>;
    forward?: ToolForward;
    launch?: string | null;
    onReport?: (r: GateReport) => void;
  } = {},
) {
  const path = join(scratch.root, `t${n++}.sock`);
  const seen: Forwarded[] = [];
  const server = await serveToolSocket(
    { path },
    ROUTES,
    opts.launch === undefined ? "/run/launch.sock" : opts.launch,
    opts.forward ?? echo(seen),
    { ...BOUNDS, ...opts.bounds },
    ...(opts.onReport === undefined ? [] : [opts.onReport]),
  );
  return { path, server, seen };
}

/** A client connection that collects answer lines; `end` says whether the server ended it. */
function client(path: string) {
  const c = connect(path);
  const lines: string[] = [];
  let buf = "";
  let ended = false;
  let closed = false;
  c.setEncoding("utf8");
  c.on("error", () => {});
  c.on("data", (d: string) => {
    buf += d;
    for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  c.on("end", () => (ended = true));
  c.on("close", () => (closed = true));
  const connected = new Promise<void>((ok) => c.on("connect", () => ok()));
  return {
    c,
    connected,
    lines: () => lines.map((l) => JSON.parse(l) as unknown),
    ended: () => ended,
    closed: () => closed,
    /** Waits until `count` answers arrived (or `ms` passed). */
    async answers(count: number, ms = 2000): Promise<unknown[]> {
      const until = Date.now() + ms;
      while (lines.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
      return lines.map((l) => JSON.parse(l) as unknown);
    },
  };
}

const req = (id: unknown, tool: string, args?: unknown) => JSON.stringify({ id, tool, args }) + "\n";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the runner's tool socket, in-process", () => {
  it("replaces a stale file at its path, listens 0600, and forwards a typed tool to the broker", async () => {
    const path = join(scratch.root, `stale${n++}.sock`);
    writeFileSync(path, "left from an earlier run");
    const seen: Forwarded[] = [];
    const server = await serveToolSocket({ path }, ROUTES, null, echo(seen), BOUNDS);
    try {
      expect(statSync(path).isSocket()).toBe(true);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const k = client(path);
      k.c.write(req(1, "send_message", { to: "pm", body: "hi" }));
      expect(await k.answers(1)).toEqual([
        { id: 1, ok: true, result: { verb: "message.send", args: { to: "pm", body: "hi" } } },
      ]);
      expect(seen).toEqual([{ socket: "broker", verb: "message.send", args: { to: "pm", body: "hi" } }]);
      k.c.destroy();
    } finally {
      server.close();
    }
  });

  // In a process of its own: a server given a descriptor owns it and closes it, and a second owner
  // in this worker thread would close the same number again at the worker's exit, by then perhaps
  // another test thread's descriptor. The child inherits a copy, as the runner does.
  it("a socket handed over as a listening descriptor is served as it is: nothing at the path is removed or changed", async () => {
    const dir = mkdtempSync(join(scratch.root, "fd"));
    const real = join(dir, "real.sock");
    const sock = boundSocket(real);
    const decoy = join(dir, "decoy");
    writeFileSync(decoy, "not the socket");
    const sweep = sweepChild();
    const child = spawn(process.execPath, [...sweep.execArgv, TOOL_CHILD, dir, "--fd", decoy], {
      env: { ...process.env, ...sweep.env },
      stdio: ["ignore", "pipe", "pipe", sock.fd],
    });
    const exited = new Promise((ok) => child.on("exit", ok));
    try {
      let err = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
      await new Promise<void>((ok, fail) => {
        child.stdout!.setEncoding("utf8").on("data", (d: string) => d.includes("ready") && ok());
        child.on("exit", (code) => fail(new Error(`the tool server exited ${code} before it listened: ${err}`)));
      });
      expect(readFileSync(decoy, "utf8"), "the path is left alone").toBe("not the socket");
      const k = client(real);
      k.c.write(req("fd", "send_message", { x: 1 }));
      expect(await k.answers(1)).toEqual([{ id: "fd", ok: true, result: { verb: "message.send", args: { x: 1 } } }]);
      k.c.destroy();
      expect(readFileSync(decoy, "utf8"), "the path is still left alone").toBe("not the socket");
    } finally {
      child.kill("SIGKILL");
      await exited;
      sweep.collect();
      // This worker's one handle on the socket (closing it also unlinks the path it bound).
      sock.close();
    }
  });

  it("a path that cannot be listened on rejects", async () => {
    await expect(
      serveToolSocket({ path: join(scratch.root, "no-such-dir", "t.sock") }, ROUTES, null, echo([]), BOUNDS),
    ).rejects.toMatchObject({ syscall: "listen" });
  });

  it("a launch tool goes to the launch socket; without one the role may not launch", async () => {
    const s = await serve();
    const k = client(s.path);
    k.c.write(req(2, "launch_agent", { role: "coder" }));
    expect(await k.answers(1)).toEqual([{ id: 2, ok: true, result: { verb: "launch", args: { role: "coder" } } }]);
    expect(s.seen).toEqual([{ socket: "launch", verb: "launch", args: { role: "coder" } }]);
    k.c.destroy();
    s.server.close();
    const none = await serve({ launch: null });
    const k2 = client(none.path);
    k2.c.write(req(3, "launch_agent", {}));
    expect(await k2.answers(1)).toEqual([{ id: 3, ok: false, error: "refused: this role may not launch" }]);
    expect(none.seen).toEqual([]);
    k2.c.destroy();
    none.server.close();
  });

  it("each line gets its own answer, in order, even when an earlier call is slower; blank lines get none", async () => {
    const s = await serve();
    const k = client(s.path);
    k.c.write("\n  \n" + req("slow", "send_message", { delay: 40 }) + "\r\n" + req("fast", "send_message", {}));
    const got = await k.answers(2);
    await sleep(20);
    expect(k.lines()).toEqual([
      { id: "slow", ok: true, result: { verb: "message.send", args: { delay: 40 } } },
      { id: "fast", ok: true, result: { verb: "message.send", args: {} } },
    ]);
    expect(got).toHaveLength(2);
    k.c.destroy();
    s.server.close();
  });

  it("a line ending in CRLF is read without its CR, and a lone CR is a blank line", async () => {
    const s = await serve();
    const k = client(s.path);
    k.c.write("\r\n" + JSON.stringify({ id: "crlf", tool: "send_message", args: {} }) + "\r\n");
    await k.answers(1);
    await sleep(20);
    expect(k.lines()).toEqual([{ id: "crlf", ok: true, result: { verb: "message.send", args: {} } }]);
    k.c.destroy();
    s.server.close();
  });

  it("a request split over writes is joined before it is read", async () => {
    const s = await serve();
    const k = client(s.path);
    await k.connected;
    const line = req("split", "send_message", { part: "one" });
    k.c.write(line.slice(0, 10));
    await sleep(5);
    k.c.write(line.slice(10, 20));
    await sleep(5);
    k.c.write(line.slice(20));
    expect(await k.answers(1)).toEqual([
      { id: "split", ok: true, result: { verb: "message.send", args: { part: "one" } } },
    ]);
    k.c.destroy();
    s.server.close();
  });

  it("bad lines, unknown tools and refused forwards each get their error answer", async () => {
    const forward: ToolForward = async (_s, _v, args) => {
      const a = args as { how?: string };
      if (a.how === "unreachable") return { kind: "unreachable", why: "ECONNREFUSED" };
      if (a.how === "error") return { kind: "error", code: "no-such-peer", message: "no such peer" };
      return { kind: "ok", result: 1 } satisfies BrokerAnswer;
    };
    const s = await serve({ forward });
    const k = client(s.path);
    k.c.write(
      "{not json\n" +
        req(4, "rm_rf", {}) +
        req(5, "send_message", { how: "unreachable" }) +
        req(6, "send_message", { how: "error" }) +
        req(7, "send_message", { big: "x".repeat(BOUNDS.argsBytes) }) +
        req(8, GATE_REPORT_TOOL, { call: "c", tool: "Read", allow: true, digest: "short" }),
    );
    const got = (await k.answers(6)) as Array<{ id: unknown; ok: boolean; error: string }>;
    expect(got.map((a) => [a.id, a.ok])).toEqual([
      [null, false],
      [4, false],
      [5, false],
      [6, false],
      [7, false],
      [8, false],
    ]);
    expect(got[1]!.error).toBe("refused: rm_rf is not one of this session's typed tools");
    expect(got[2]!.error).toBe("refused: the broker did not answer (ECONNREFUSED); the call was not made");
    expect(got[3]!.error).toBe("refused: no such peer");
    expect(got[4]!.error).toBe(boundRefusal("argsBytes", BOUNDS));
    expect(got[5]!.error).toBe("bad request: mosaic.gate-report: digest is not 64 hex digits");
    k.c.destroy();
    s.server.close();
  });

  it("a forward that throws or rejects is that request's error answer; the connection goes on", async () => {
    const forward: ToolForward = (_s, _v, args) => {
      const a = args as { how?: string };
      if (a.how === "throw") throw new Error("boom");
      if (a.how === "reject") return Promise.reject(new Error("boom"));
      return Promise.resolve({ kind: "ok", result: "fine" });
    };
    const s = await serve({ forward });
    const k = client(s.path);
    k.c.write(
      req(1, "send_message", { how: "throw" }) +
        req(2, "send_message", { how: "reject" }) +
        req(3, "send_message", { how: "ok" }),
    );
    expect(await k.answers(3)).toEqual([
      { id: null, ok: false, error: "refused: the runner could not make the call" },
      { id: null, ok: false, error: "refused: the runner could not make the call" },
      { id: 3, ok: true, result: "fine" },
    ]);
    k.c.destroy();
    s.server.close();
  });

  it("a gate report is handed to the turn and answered ok without a forward", async () => {
    const reports: GateReport[] = [];
    const s = await serve({ onReport: (r) => reports.push(r) });
    const k = client(s.path);
    const args = { call: "toolu_1", tool: "Read", allow: false, digest: DIGEST };
    k.c.write(req(9, GATE_REPORT_TOOL, args));
    expect(await k.answers(1)).toEqual([{ id: 9, ok: true, result: null }]);
    expect(reports).toEqual([args]);
    expect(s.seen).toEqual([]);
    k.c.destroy();
    s.server.close();
  });

  it("without a report handler a gate report is still answered ok", async () => {
    const s = await serve();
    const k = client(s.path);
    k.c.write(req(10, GATE_REPORT_TOOL, { call: "c", tool: "Bash", allow: true, digest: DIGEST }));
    expect(await k.answers(1)).toEqual([{ id: 10, ok: true, result: null }]);
    k.c.destroy();
    s.server.close();
  });

  it("a line at the bound is served; one byte over it, split or not, is refused and the connection closed", async () => {
    const lineBytes = 200;
    const s = await serve({ bounds: { lineBytes } });
    const exact = (id: string) => {
      const base = JSON.stringify({ id, tool: "send_message", args: { p: "" } });
      return JSON.stringify({ id, tool: "send_message", args: { p: "x".repeat(lineBytes - base.length) } });
    };
    expect(Buffer.byteLength(exact("a"))).toBe(lineBytes);
    const k = client(s.path);
    k.c.write(exact("a") + "\n");
    expect(((await k.answers(1))[0] as { id: string }).id).toBe("a");
    k.c.destroy();

    // Over the bound in one write: the refusal, nothing for what follows, then the end.
    const over = client(s.path);
    over.c.write(exact("b") + " \n" + req("after", "send_message", {}));
    expect(await over.answers(1)).toEqual([
      { id: null, ok: false, error: boundRefusal("lineBytes", { ...BOUNDS, lineBytes }) },
    ]);
    await sleep(30);
    expect(over.lines()).toHaveLength(1);
    expect(over.ended(), "the server ends the connection").toBe(true);
    over.c.destroy();

    // Over the bound only once the pieces are added up.
    const split = client(s.path);
    await split.connected;
    const line = exact("c") + " ";
    split.c.write(line.slice(0, 100));
    await sleep(10);
    split.c.write(line.slice(100));
    await sleep(10);
    split.c.write("\n");
    expect(await split.answers(1)).toEqual([
      { id: null, ok: false, error: boundRefusal("lineBytes", { ...BOUNDS, lineBytes }) },
    ]);
    split.c.destroy();

    // Pieces that add up to the bound exactly are served.
    const fits = client(s.path);
    await fits.connected;
    const fitLine = exact("d");
    fits.c.write(fitLine.slice(0, 100));
    await sleep(10);
    fits.c.write(fitLine.slice(100));
    await sleep(10);
    fits.c.write("\n");
    expect(((await fits.answers(1))[0] as { id: string }).id).toBe("d");
    fits.c.destroy();
    s.server.close();
  });

  it("a line is counted afresh after each newline: many short lines in one write pass", async () => {
    const s = await serve({ bounds: { lineBytes: 120 } });
    const k = client(s.path);
    const lines = [1, 2, 3, 4].map((i) => req(i, "send_message", { i }));
    expect(lines.join("").length).toBeGreaterThan(120);
    await k.connected;
    k.c.write(lines[0]!.slice(0, 20));
    await sleep(5);
    k.c.write(lines[0]!.slice(20) + lines.slice(1).join(""));
    const got = (await k.answers(4)) as Array<{ id: number }>;
    expect(got.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    k.c.destroy();
    s.server.close();
  });

  it("connections past the bound are refused and closed; one freed makes room", async () => {
    const s = await serve({ bounds: { connections: 2 } });
    const a = client(s.path);
    const b = client(s.path);
    await Promise.all([a.connected, b.connected]);
    a.c.write(req("a", "send_message", {}));
    b.c.write(req("b", "send_message", {}));
    await Promise.all([a.answers(1), b.answers(1)]);
    const third = client(s.path);
    expect(await third.answers(1)).toEqual([
      { id: null, ok: false, error: boundRefusal("connections", { ...BOUNDS, connections: 2 }) },
    ]);
    third.c.write(req("ignored", "send_message", {}));
    await sleep(30);
    expect(third.lines()).toHaveLength(1);
    expect(third.ended()).toBe(true);
    third.c.destroy();
    a.c.destroy();
    while (s.server.listening && (await new Promise<number>((r) => s.server.getConnections((_e, k) => r(k)))) > 1)
      await sleep(2);
    const fourth = client(s.path);
    fourth.c.write(req("d", "send_message", {}));
    expect(await fourth.answers(1)).toEqual([{ id: "d", ok: true, result: { verb: "message.send", args: {} } }]);
    fourth.c.destroy();
    b.c.destroy();
    s.server.close();
  });

  it("a connection with its pending bound of requests waiting is not read further until one is answered", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((ok) => (release = ok));
    const forward: ToolForward = async () => {
      await gate;
      return { kind: "ok", result: "released" };
    };
    const s = await serve({ forward, bounds: { pending: 1, lineBytes: 8 * 1024 * 1024 } });
    const k = client(s.path);
    await k.connected;
    k.c.write(req(1, "send_message", {}));
    await sleep(20);
    // 4 MiB with no newline: a connection still read would take it all into its partial line.
    let taken = false;
    k.c.write(Buffer.alloc(4 * 1024 * 1024, 0x20), () => (taken = true));
    await sleep(100);
    expect(taken, "the server stopped reading: the client's write cannot finish").toBe(false);
    release();
    k.c.write("\n");
    expect(await k.answers(1)).toEqual([{ id: 1, ok: true, result: "released" }]);
    const until = Date.now() + 2000;
    while (!taken && Date.now() < until) await sleep(5);
    expect(taken, "reading resumes once the request is answered").toBe(true);
    k.c.destroy();
    s.server.close();
  });
});
