// The session runner (src/host/runner/main.ts) as a real process, outside any sandbox: a run
// directory of its own, a stand-in broker on a Unix socket, the tool socket handed over as a
// listening descriptor (fd 3, as the launcher does), and a shell or node command as the harness.
// What it asks the broker, what it replies, and the code it exits with. The live tier runs the same
// file as pid 1 of a real sandbox; contract/support/sweep-child.ts lets the sweep see this child.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GATE_REPORT_TOOL } from "../src/core/runner/tripwire.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { sweepChild } from "./support/sweep-child.ts";
import {
  boundSocket,
  broker,
  CAP,
  err,
  ok,
  runDir as makeRunDir,
  sends,
  toolCall,
  verbs,
  withMessages,
  type BrokerReply as Reply,
  type Ended,
  type Msg,
  type Req,
  type Run,
} from "./support/runner-main-child.ts";

const MAIN = join(REPO_ROOT, "src/host/runner/main.ts");
// StrykerJS picks a mutated file's tests by the import graph, and this file only spawns main.ts:
// an import that never runs (main.ts would start a runner in the test's worker) puts it in the graph.
if (process.env.MOSAIC_NEVER_SET_IN_TESTS === "load the runner") await import("../src/host/runner/main.ts");
let socketN = 0;
const scratch = makeScratch("runner-main");
afterAll(() => scratch.remove());

/** A run directory under this file's scratch with a session.json; `over` replaces any of its fields. */
const runDir = (over: Record<string, unknown> = {}): Run => makeRunDir(scratch.root, over);

/**
 * The runner on `dir` (or the given argv), `stdin` written to it; `during` runs once it has
 * claimed (its "claimed" line), and may stop it. Resolves with its exit.
 */
function runner(
  argv: string[],
  opts: {
    stdin?: string;
    env?: Record<string, string>;
    fd?: number;
    onStderr?: (all: string, child: ReturnType<typeof spawn>) => void;
    onSpawn?: (child: ReturnType<typeof spawn>) => void;
  } = {},
): Promise<Ended> {
  const sweep = sweepChild();
  const child = spawn(process.execPath, [...sweep.execArgv, MAIN, ...argv], {
    env: { ...CHILD_ENV, ...opts.env, ...sweep.env },
    stdio: ["pipe", "ignore", "pipe", ...(opts.fd === undefined ? [] : [opts.fd])],
  });
  opts.onSpawn?.(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    opts.onStderr?.(stderr, child);
  });
  child.stdin!.on("error", () => {});
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  const timer = setTimeout(() => child.kill("SIGTERM"), 15_000);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      sweep.collect();
      resolve({ code, signal, stderr });
    });
  });
}

/** The children's environment: a compile cache shared by this file's runners, so only the first compiles. */
const CHILD_ENV = { PATH: "/usr/bin:/bin", NODE_COMPILE_CACHE: join(scratch.root, "compile-cache") };

/**
 * A whole session: the broker answers as `answer` says; once `stopWhen` holds for the requests
 * seen so far (checked at each request, before it is answered), the runner gets SIGTERM.
 */
async function session(
  r: Run,
  answer: (q: Req, nth: number) => Reply,
  stopWhen: ((seen: Req[]) => boolean) | null,
  extra: { env?: Record<string, string>; stdin?: string; afterClaim?: () => Promise<void> } = {},
): Promise<Ended & { seen: Req[] }> {
  let stop: (() => void) | null = null;
  let stopped = false;
  const b = await broker(r.brokerSocket, (q, nth) => {
    if (!stopped && stopWhen !== null && stop !== null && stopWhen(b.seen)) {
      stopped = true;
      stop();
    }
    return answer(q, nth);
  });
  const sock = boundSocket(r.toolSocket);
  try {
    const ended = await runner([r.dir], {
      stdin: extra.stdin ?? CAP,
      env: extra.env,
      fd: sock.fd,
      onSpawn: (child) => (stop = () => child.kill("SIGTERM")),
      onStderr: (all, child) => {
        if (stopped) return;
        if (extra.afterClaim !== undefined && all.includes(" for run ")) {
          stopped = true;
          void extra.afterClaim().finally(() => child.kill("SIGTERM"));
        }
      },
    });
    return { ...ended, seen: b.seen };
  } finally {
    sock.close();
    b.server.close();
  }
}

/** A read after `n` sends: every reply of the turns before it was answered. */
const readAfterSends = (n: number) => (seen: Req[]) => sends(seen).length >= n && seen.at(-1)?.verb === "message.read";

describe("the session runner as a process", () => {
  it("claims, runs one turn per message (not for a RESULT), replies to the sender, and at SIGTERM releases and exits 0", async () => {
    const r = runDir();
    const msgs: Msg[] = [
      { id: "m1", from: "pm", kind: "message", body: "hello" },
      { id: "r1", from: "qa", kind: "result", body: "a result, never answered" },
      { id: "m2", from: "qa", kind: "message", body: "again" },
    ];
    const out = await session(r, withMessages(msgs), readAfterSends(2));
    expect(out.code, out.stderr).toBe(0);
    expect(out.seen.every((q) => q.cap === "cap-xyz")).toBe(true);
    expect(verbs(out.seen).slice(0, 4)).toEqual(["role.claim", "message.read", "message.send", "message.send"]);
    expect(verbs(out.seen).at(-1)).toBe("role.release");
    expect(sends(out.seen)).toEqual([
      { to: "pm", kind: "result", replyTo: "m1", body: "reply to hello" },
      { to: "qa", kind: "result", replyTo: "m2", body: "reply to again" },
    ]);
    expect(out.stderr).toContain("mosaic runner: claimed coder-1 for run run-1\n");
    expect(out.stderr).toContain("mosaic runner: no tools.json; no typed tool is served\n");
    expect(out.stderr).toContain("mosaic runner: turn 1: ok\n");
    expect(out.stderr).toContain("mosaic runner: exit 0: SIGTERM\n");
    expect(statSync(join(r.dir, "turns", "0001.stderr")).isFile()).toBe(true);
    expect(statSync(join(r.dir, "turns", "0002.stderr")).isFile()).toBe(true);
    expect(existsSync(join(r.dir, "turns", "0003.stderr"))).toBe(false);
  });

  it("a failed turn is replied to as failed; a reply the broker refuses is followed by one saying so", async () => {
    const r = runDir({
      adapter: { argv: ["/bin/sh", "-c", "echo out; echo oops >&2; exit 3", "sh"], env: {}, cwd: "/" },
    });
    const out = await session(
      r,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q, nth) =>
        q.verb === "message.send" && nth === 1 ? err("too-long", "the line is too long") : undefined,
      ),
      readAfterSends(2),
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("mosaic runner: turn 1: failed: the harness exited 3\n");
    const failed = "The turn failed: the harness exited 3";
    expect(sends(out.seen)).toEqual([
      { to: "pm", kind: "result", replyTo: "m1", body: failed },
      {
        to: "pm",
        kind: "result",
        replyTo: "m1",
        body: "The turn failed: its reply was not delivered (too-long: the line is too long)",
      },
    ]);
  });

  it("a reply with no answer at all is followed by one naming why", async () => {
    const r = runDir({ brokerTimeoutSeconds: 1 });
    const out = await session(
      r,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q, nth) =>
        q.verb === "message.send" ? (nth === 1 ? "silent" : err("claim-revoked")) : undefined,
      ),
      null,
    );
    expect(out.code, out.stderr).toBe(22);
    expect(sends(out.seen)[1]).toEqual({
      to: "pm",
      kind: "result",
      replyTo: "m1",
      body: "The turn failed: its reply was not delivered (no answer within 1000 ms)",
    });
  });

  it("a reply refused because the session is gone ends the runner (22) without a second reply", async () => {
    const r = runDir();
    const out = await session(
      r,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q) =>
        q.verb === "message.send" ? err("claim-revoked") : undefined,
      ),
      null,
    );
    expect(out.code, out.stderr).toBe(22);
    expect(out.stderr).toContain("mosaic runner: exit 22: message.send: claim-revoked\n");
    expect(sends(out.seen)).toHaveLength(1);
    expect(verbs(out.seen).at(-1)).toBe("role.release");
  });

  it("a second reply refused because the session is gone ends the runner too", async () => {
    const r = runDir();
    const out = await session(
      r,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q, nth) =>
        q.verb === "message.send" ? (nth === 1 ? err("too-long") : err("not-claimed")) : undefined,
      ),
      null,
    );
    expect(out.code, out.stderr).toBe(22);
    expect(out.stderr).toContain("exit 22: message.send: not-claimed\n");
    expect(sends(out.seen)).toHaveLength(2);
  });

  it("a refused claim exits 21 and releases nothing; a dead capability 22; no broker 23", async () => {
    const refused = await session(runDir(), (q) => (q.verb === "role.claim" ? err("refused", "taken") : ok()), null);
    expect(refused.code, refused.stderr).toBe(21);
    expect(refused.stderr).toContain("exit 21: role.claim refused: taken\n");
    expect(verbs(refused.seen)).toEqual(["role.claim"]);
    const dead = await session(runDir(), (q) => (q.verb === "role.claim" ? err("unauthenticated") : ok()), null);
    expect(dead.code, dead.stderr).toBe(22);
    const r = runDir();
    const sock = boundSocket(r.toolSocket);
    try {
      const none = await runner([r.dir], { stdin: CAP, fd: sock.fd });
      expect(none.code, none.stderr).toBe(23);
      expect(none.stderr).toContain("exit 23: role.claim got no answer: ENOENT\n");
    } finally {
      sock.close();
    }
  });

  it("a dead capability at a poll exits 22 and releases the role; polls that keep failing exit 23", async () => {
    const gone = await session(
      runDir(),
      (q) => (q.verb === "message.read" ? err("claim-revoked", "by the pm") : ok()),
      null,
    );
    expect(gone.code, gone.stderr).toBe(22);
    expect(gone.stderr).toContain("exit 22: message.read: claim-revoked: by the pm\n");
    expect(verbs(gone.seen)).toEqual(["role.claim", "message.read", "role.release"]);
    const failing = await session(runDir(), (q) => (q.verb === "message.read" ? err("busy", "later") : ok()), null);
    expect(failing.code, failing.stderr).toBe(23);
    expect(failing.stderr).toContain("the broker failed 3 polls in a row (last: busy: later)");
    expect(failing.seen.filter((q) => q.verb === "message.read")).toHaveLength(3);
  });

  it("a poll that fails and then answers starts the count again", async () => {
    // Polls 1-2 fail, 3 answers, 4-6 fail: with 3 retries the runner ends at poll 6, not 4.
    const out = await session(
      runDir(),
      (q, nth) => (q.verb === "message.read" && nth !== 3 ? err("busy") : ok({ messages: [] })),
      null,
    );
    expect(out.code, out.stderr).toBe(23);
    expect(out.seen.filter((q) => q.verb === "message.read")).toHaveLength(6);
  });

  it("an answer without a message list is no message", async () => {
    const out = await session(
      runDir(),
      (q, nth) => (q.verb === "message.read" ? (nth <= 2 ? ok(nth === 1 ? null : {}) : err("claim-revoked")) : ok()),
      null,
    );
    expect(out.code, out.stderr).toBe(22);
    expect(sends(out.seen)).toEqual([]);
  });

  it("founder credentials in its environment stop it (20) before any claim", async () => {
    const r = runDir();
    const b = await broker(r.brokerSocket, () => ok());
    try {
      const out = await runner([r.dir], { stdin: CAP, env: { GH_TOKEN: "t", SSH_AUTH_SOCK: "/s" } });
      expect(out.code, out.stderr).toBe(20);
      expect(out.stderr).toContain("exit 20: founder credentials in the environment: GH_TOKEN, SSH_AUTH_SOCK\n");
      expect(b.seen).toEqual([]);
    } finally {
      b.server.close();
    }
  });

  it("a run directory, session.json or capability line it cannot use exits 2 naming why", async () => {
    expect((await runner([], { stdin: CAP })).stderr).toBe("mosaic runner: exit 2: usage: runner <run directory>\n");
    const rel = await runner(["relative/run"], { stdin: CAP });
    expect([rel.code, rel.stderr]).toEqual([2, "mosaic runner: exit 2: usage: runner <run directory>\n"]);
    const empty = mkdtempSync(join(scratch.root, "e"));
    expect(await runner([empty], { stdin: CAP })).toEqual({
      code: 2,
      signal: null,
      stderr: `mosaic runner: exit 2: ${empty}/session.json: ENOENT\n`,
    });
    const bad = runDir({ version: 2 });
    expect((await runner([bad.dir], { stdin: CAP })).stderr).toBe(
      "mosaic runner: exit 2: session.json: version: expected 1\n",
    );
    const r = runDir();
    expect((await runner([r.dir], { stdin: "" })).stderr).toBe("mosaic runner: exit 2: stdin: no capability line\n");
    expect((await runner([r.dir], { stdin: "not json\n" })).stderr).toBe(
      "mosaic runner: exit 2: stdin: the first line is not JSON\n",
    );
    // No newline at the end of stdin: what came is the line.
    expect((await runner([r.dir], { stdin: '{"cap":""}' })).stderr).toBe(
      "mosaic runner: exit 2: stdin.cap: a non-empty string\n",
    );
    // A first line that never ends within 64 KiB is no capability line.
    const long = await runner([r.dir], { stdin: `{"cap":"${"x".repeat(70 * 1024)}` });
    expect([long.code, long.stderr]).toEqual([2, "mosaic runner: exit 2: stdin: no capability line\n"]);
  });

  it("a stop while the claim is on its way exits 0 without releasing, once however many signals come", async () => {
    const r = runDir();
    const b = await broker(r.brokerSocket, () => "silent");
    const sock = boundSocket(r.toolSocket);
    try {
      const sweep = sweepChild();
      const child = spawn(process.execPath, [...sweep.execArgv, MAIN, r.dir], {
        env: { ...CHILD_ENV, ...sweep.env },
        stdio: ["pipe", "ignore", "pipe", sock.fd],
      });
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.stdin!.end(CAP);
      const until = Date.now() + 10_000;
      while (b.seen.length === 0 && Date.now() < until) await new Promise((done) => setTimeout(done, 5));
      child.kill("SIGTERM");
      child.kill("SIGINT");
      const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)));
      sweep.collect();
      expect(code, stderr).toBe(0);
      // Whichever signal lands first names the stop; the second changes nothing.
      expect(stderr).toMatch(/^mosaic runner: exit 0: SIG(TERM|INT)\n$/);
      expect(b.seen.map((q) => q.verb)).toEqual(["role.claim"]);
    } finally {
      sock.close();
      b.server.close();
    }
  });

  it("serves the typed tools of tools.json on the inherited socket, forwarding with its capability", async () => {
    const launch = join(scratch.root, `l${++socketN}.sock`);
    const r = runDir({ launchSocket: launch });
    mkdirSync(join(r.dir, "bundle"));
    writeFileSync(
      join(r.dir, "bundle/tools.json"),
      JSON.stringify({
        tools: [
          { name: "send_message", via: { broker: "message.send" } },
          { name: "launch_agent", via: { launchSocket: true } },
        ],
      }),
    );
    const l = await broker(launch, (q) => ok({ launched: q.args }));
    const answers: unknown[] = [];
    try {
      const out = await session(
        r,
        (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok({ echoed: q.args })),
        null,
        {
          afterClaim: async () => {
            answers.push(await toolCall(r.toolSocket, { id: 1, tool: "send_message", args: { to: "pm", body: "b" } }));
            answers.push(await toolCall(r.toolSocket, { id: 2, tool: "launch_agent", args: { role: "qa" } }));
          },
        },
      );
      expect(out.code, out.stderr).toBe(0);
      expect(out.stderr).not.toContain("tools.json");
      expect(answers).toEqual([
        { id: 1, ok: true, result: { echoed: { to: "pm", body: "b" } } },
        { id: 2, ok: true, result: { launched: { role: "qa" } } },
      ]);
      const send = out.seen.find((q) => q.verb === "message.send")!;
      expect(send).toMatchObject({ cap: "cap-xyz", args: { to: "pm", body: "b" } });
      expect(l.seen).toMatchObject([{ cap: "cap-xyz", verb: "launch", args: { role: "qa" } }]);
    } finally {
      l.server.close();
    }
  });

  it("a tools.json it cannot read serves no typed tool and says why", async () => {
    const r = runDir();
    mkdirSync(join(r.dir, "bundle"));
    writeFileSync(join(r.dir, "bundle/tools.json"), "{}");
    const answers: unknown[] = [];
    const out = await session(r, (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()), null, {
      afterClaim: async () => {
        answers.push(await toolCall(r.toolSocket, { id: 1, tool: "send_message", args: {} }));
      },
    });
    expect(out.stderr).toContain("mosaic runner: tools.json: tools.json has no tools list; no typed tool is served\n");
    expect(answers).toEqual([
      { id: 1, ok: false, error: "refused: send_message is not one of this session's typed tools" },
    ]);
  });

  it("forwards its model port to the host's model socket", async () => {
    const modelSocket = join(scratch.root, `m${++socketN}.sock`);
    const proxy = createServer((c) => c.on("data", (d) => c.end(`proxy got ${d.toString()}`)));
    await new Promise<void>((done) => proxy.listen(modelSocket, done));
    const free = createServer();
    await new Promise<void>((done) => free.listen(0, "127.0.0.1", done));
    const port = (free.address() as AddressInfo).port;
    await new Promise((done) => free.close(done));
    let got = "";
    try {
      const r = runDir({ model: { port, socket: modelSocket } });
      const out = await session(r, (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()), null, {
        afterClaim: async () => {
          got = await new Promise<string>((done, fail) => {
            const c = connect(port, "127.0.0.1", () => c.write("ping"));
            let buf = "";
            c.on("data", (d) => (buf += d.toString()));
            c.on("end", () => done(buf));
            c.on("error", fail);
          });
        },
      });
      expect(out.code, out.stderr).toBe(0);
      expect(got).toBe("proxy got ping");
    } finally {
      proxy.close();
    }
  });

  it("the tripwire fails a turn whose completed call the gate did not report, and counts only this turn's reports", async () => {
    const r = runDir({ tripwire: { stream: "pi-json", typedTools: [] } });
    // The harness: reports an allow for call c1 when its message says so, then says c1 completed.
    const harness = join(r.dir, "harness.mjs");
    writeFileSync(
      harness,
      `import { connect } from "node:net";
const msg = process.argv[2];
if (msg === "report") {
  await new Promise((done) => {
    const c = connect(process.env.SOCK, () => c.write(JSON.stringify({ id: 1, tool: ${JSON.stringify(GATE_REPORT_TOOL)}, args: { call: "c1", tool: "read", allow: true, digest: "${"a".repeat(64)}" } }) + "\\n"));
    c.on("data", () => { c.destroy(); done(); });
  });
}
console.log(JSON.stringify({ type: "tool_execution_end", toolCallId: "c1", toolName: "read", isError: false }));
console.log("done " + msg);
`,
    );
    writeFileSync(
      join(r.dir, "session.json"),
      JSON.stringify({
        ...r.session,
        adapter: { argv: [process.execPath, harness], env: { SOCK: r.toolSocket }, cwd: r.dir },
      }),
    );
    const msgs: Msg[] = [
      { id: "m1", from: "pm", kind: "message", body: "report" },
      { id: "m2", from: "pm", kind: "message", body: "silent" },
    ];
    const out = await session(r, withMessages(msgs), readAfterSends(2));
    expect(out.code, out.stderr).toBe(0);
    const bodies = sends(out.seen).map((a) => a.body);
    expect(bodies[0]).toContain("done report");
    expect(bodies[1]).toBe("The turn failed: read ran without the gate");
    expect(out.stderr).toContain("mosaic runner: turn 1: tripwire: the gate allowed each of 1 completed tool calls\n");
    expect(out.stderr).toContain("mosaic runner: turn 2: failed: read ran without the gate\n");
  });

  it("a turn that failed already keeps its own reason when the tripwire also trips", async () => {
    const r = runDir({
      tripwire: { stream: "pi-json", typedTools: [] },
      adapter: {
        argv: [
          "/bin/sh",
          "-c",
          `echo '{"type":"tool_execution_end","toolCallId":"c9","toolName":"bash","isError":false}'; exit 4`,
          "sh",
        ],
        env: {},
        cwd: "/",
      },
    });
    const out = await session(
      r,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }]),
      readAfterSends(1),
    );
    expect(sends(out.seen).map((a) => a.body)).toEqual(["The turn failed: the harness exited 4"]);
  });
});
