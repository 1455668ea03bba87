// The session runner (src/host/runner/main.ts) as a real process, around its turns and polls: a
// Pi-style turn that ends on its marker, a stop while a poll or a turn is under way, replies the
// broker refuses twice, an undelivered reply's reason, the pause between polls, and the gate's
// reports counted per turn up to their bound. The set-up is contract/support/runner-main-child.ts.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GATE_REPORT_TOOL, GATE_REPORTS_PER_TURN } from "../src/core/runner/tripwire.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import {
  type Child,
  REFUSED,
  count,
  err,
  never,
  ok,
  refusedToolCall,
  rewrite,
  runDir,
  sends,
  session,
  stopOnce,
  verbs,
  withMessages,
} from "./support/runner-main-child.ts";

// StrykerJS picks a mutated file's tests by the import graph, and this file only spawns main.ts:
// an import that never runs (main.ts would start a runner in the test's worker) puts it in the graph.
if (process.env.MOSAIC_NEVER_SET_IN_TESTS === "load the runner") await import("../src/host/runner/main.ts");
const scratch = makeScratch("runner-main-sweep-turns");
afterAll(() => scratch.remove());
/** The children's environment: a compile cache shared by this file's runners, so only the first compiles. */
const ENV = { PATH: "/usr/bin:/bin", NODE_COMPILE_CACHE: join(scratch.root, "compile-cache") };
const afterSends = (n: number) => (seen: { verb: string }[]) =>
  count(seen as never, "message.send") >= n && seen.at(-1)?.verb === "message.read";

describe("the session runner around its turns and polls", () => {
  it("a turn that ends on its marker (Pi) replies with the agent_end text", async () => {
    const r = runDir(scratch.root);
    const marker = join(r.dir, "agent_end");
    const end = {
      type: "agent_end",
      messages: [{ role: "assistant", content: [{ type: "text", text: "pi says hi" }] }],
    };
    rewrite(r, {
      turnEnd: { kind: "marker", file: marker },
      adapter: { argv: ["/bin/sh", "-c", `: > ${marker}; echo '${JSON.stringify(end)}'`, "sh"], env: {}, cwd: "/" },
    });
    const out = await session(
      r,
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }]),
      stopOnce(afterSends(1)),
    );
    expect(out.code, out.stderr).toBe(0);
    expect(sends(out.seen).map((a) => a.body)).toEqual(["pi says hi"]);
  });

  it("messages that come back to a poll after a stop start no turn", async () => {
    const r = runDir(scratch.root);
    let released: () => void = () => {};
    const release = new Promise<void>((done) => (released = done));
    let readAnswered: () => void = () => {};
    const answered = new Promise<void>((done) => (readAnswered = done));
    const answers: unknown[] = [];
    const out = await session(
      r,
      ENV,
      async (q, nth) => {
        if (q.verb === "message.read") {
          if (nth === 1) return ok({ messages: [] });
          // The stop came with this poll: its messages come back once the release is asked for.
          await release;
          return ok({ messages: [{ id: "m1", from: "pm", kind: "message", body: "late" }] });
        }
        if (q.verb !== "role.release") return ok();
        released();
        // Held until the runner has taken the poll's answer (a tool call's round trip after it).
        await answered;
        answers.push(await refusedToolCall(r, 3));
        return ok();
      },
      stopOnce((seen) => count(seen, "message.read") === 2),
      { after: (q, nth) => q.verb === "message.read" && nth === 2 && readAnswered() },
    );
    expect(answers).toEqual([REFUSED(3)]);
    expect(out.code, out.stderr).toBe(0);
    expect(existsSync(join(r.dir, "turns", "0001.stderr"))).toBe(false);
    expect(out.stderr).not.toContain("turn 1");
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "role.release"]);
  });

  it("a stop during a turn kills it and sends no reply for it", async () => {
    const r = runDir(scratch.root);
    const harness = join(r.dir, "harness.mjs");
    // The harness tells the stand-in broker it runs, then waits to be killed.
    writeFileSync(
      harness,
      `import { connect } from "node:net";
const c = connect(process.env.BROKER, () => c.write(JSON.stringify({ id: 0, cap: "harness", verb: "harness.started", args: {} }) + "\\n"));
c.on("data", () => setInterval(() => {}, 1000));
`,
    );
    rewrite(r, { adapter: { argv: [process.execPath, harness], env: { BROKER: r.brokerSocket }, cwd: r.dir } });
    let sent: () => void = () => {};
    const send = new Promise<void>((done) => (sent = done));
    const out = await session(
      r,
      ENV,
      async (q, nth) => {
        if (q.verb === "message.read")
          return ok({ messages: nth === 1 ? [{ id: "m1", from: "pm", kind: "message", body: "x" }] : [] });
        if (q.verb === "message.send") sent();
        // The release is held a while, or until a reply comes: a runner that went on with the
        // killed turn would send it meanwhile.
        if (q.verb === "role.release") await Promise.race([send, new Promise((done) => setTimeout(done, 500))]);
        return ok();
      },
      (seen, child: Child) => {
        if (seen.at(-1)?.verb === "harness.started") child.kill("SIGTERM");
      },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(sends(out.seen)).toEqual([]);
    expect(out.stderr).not.toContain("turn 1");
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "harness.started", "role.release"]);
  });

  it("a reply refused because the capability is unknown (unauthenticated) ends the runner (22) without a second reply", async () => {
    const out = await session(
      runDir(scratch.root),
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q) =>
        q.verb === "message.send" ? err("unauthenticated") : undefined,
      ),
      // A runner that took it for a refused reply would poll again: stopped there, it exits 0.
      stopOnce(afterSends(1)),
    );
    expect(out.code, out.stderr).toBe(22);
    expect(out.stderr).toContain("mosaic runner: exit 22: message.send: unauthenticated\n");
    expect(sends(out.seen)).toHaveLength(1);
  });

  it("a stop that lands while the runner releases on its own end changes nothing: its own code (22), one release, one exit line", async () => {
    const r = runDir(scratch.root);
    let child: Child | null = null;
    const answers: unknown[] = [];
    const out = await session(
      r,
      ENV,
      async (q, nth) => {
        if (q.verb === "role.release" && child !== null) {
          // The release of a runner ending itself (22) is held: SIGTERM lands, then a tool call's
          // round trip shows the runner has taken it (its handler runs before a later socket event).
          child.kill("SIGTERM");
          answers.push(await refusedToolCall(r, 8));
          return ok();
        }
        return withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (m) =>
          m.verb === "message.send" ? err("unauthenticated") : undefined,
        )(q, nth);
      },
      never,
      { onSpawn: (c) => (child = c) },
    );
    expect(answers).toEqual([REFUSED(8)]);
    expect(out.code, out.stderr).toBe(22);
    expect(out.stderr.match(/ exit /g), out.stderr).toHaveLength(1);
    expect(out.stderr).toContain("mosaic runner: exit 22: message.send: unauthenticated\n");
    expect(count(out.seen, "role.release")).toBe(1);
  });

  it("a poll that fails brings no message: no turn, no reply", async () => {
    const r = runDir(scratch.root);
    const out = await session(
      r,
      ENV,
      (q, nth) => (q.verb === "message.read" ? (nth === 1 ? err("busy", "later") : err("claim-revoked")) : ok()),
      never,
    );
    expect(out.code, out.stderr).toBe(22);
    expect(sends(out.seen)).toEqual([]);
    expect(existsSync(join(r.dir, "turns", "0001.stderr"))).toBe(false);
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "role.release"]);
  });

  it("a reply refused twice for a reason that is not the session's end: the runner goes on polling", async () => {
    const out = await session(
      runDir(scratch.root),
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q) =>
        q.verb === "message.send" ? err("too-long", "the line is too long") : undefined,
      ),
      stopOnce(afterSends(2)),
    );
    expect(out.code, out.stderr).toBe(0);
    expect(verbs(out.seen)).toEqual([
      "role.claim",
      "message.read",
      "message.send",
      "message.send",
      "message.read",
      "role.release",
    ]);
  });

  it("an undelivered reply's reason is cut to its first 200 characters", async () => {
    const long = `${"a".repeat(150)}${"b".repeat(150)}`;
    const out = await session(
      runDir(scratch.root),
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }], (q, nth) =>
        q.verb === "message.send" && nth === 1 ? err("too-long", long) : undefined,
      ),
      stopOnce(afterSends(2)),
    );
    expect(out.code, out.stderr).toBe(0);
    const why = `too-long: ${long}`.slice(0, 200);
    expect(sends(out.seen)[1]).toEqual({
      to: "pm",
      kind: "result",
      replyTo: "m1",
      body: `The turn failed: its reply was not delivered (${why})`,
    });
  });

  it("after a poll the runner waits pollMs before the next one", async () => {
    const r = runDir(scratch.root, { pollMs: 60_000 });
    const answers: unknown[] = [];
    const out = await session(r, ENV, (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()), never, {
      // Once the runner has taken the first poll's answer (a tool call's round trip after it), stop it.
      after: (q, _nth, child) => {
        if (q.verb === "message.read")
          void refusedToolCall(r, 1).then((a) => {
            answers.push(a);
            child.kill("SIGTERM");
          });
      },
    });
    expect(answers).toEqual([REFUSED(1)]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.seen.map((q) => q.verb)).toEqual(["role.claim", "message.read", "role.release"]);
  });

  it(`a turn's gate reports start empty: its ${GATE_REPORTS_PER_TURN.value}th report still counts`, async () => {
    const r = runDir(scratch.root, { tripwire: { stream: "pi-json", typedTools: [] } });
    const harness = join(r.dir, "harness.mjs");
    // The harness reports the bound's number of allows, c1's last, then says c1 completed.
    writeFileSync(
      harness,
      `import { connect } from "node:net";
const n = ${GATE_REPORTS_PER_TURN.value};
const line = (i) => JSON.stringify({ id: i, tool: ${JSON.stringify(GATE_REPORT_TOOL)}, args: { call: i === n ? "c1" : "x" + i, tool: "read", allow: true, digest: "${"a".repeat(64)}" } }) + "\\n";
await new Promise((done) => {
  const c = connect(process.env.SOCK, () => { let all = ""; for (let i = 1; i <= n; i++) all += line(i); c.write(all); });
  let got = 0;
  c.setEncoding("utf8");
  c.on("data", (d) => { got += d.split("\\n").length - 1; if (got >= n) { c.destroy(); done(); } });
});
console.log(JSON.stringify({ type: "tool_execution_end", toolCallId: "c1", toolName: "read", isError: false }));
console.log("done");
`,
    );
    rewrite(r, { adapter: { argv: [process.execPath, harness], env: { SOCK: r.toolSocket }, cwd: r.dir } });
    const out = await session(
      r,
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "x" }]),
      stopOnce(afterSends(1)),
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("mosaic runner: turn 1: tripwire: the gate allowed each of 1 completed tool calls\n");
    expect(sends(out.seen).map((a) => a.body)).toEqual([
      `${JSON.stringify({ type: "tool_execution_end", toolCallId: "c1", toolName: "read", isError: false })}\ndone`,
    ]);
  });
});
