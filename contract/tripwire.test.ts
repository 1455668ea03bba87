import { createConnection } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FILE_TOOLS } from "../src/core/gate/file-tools.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { planRunnerBounds } from "../src/core/runner/bounds.ts";
import { decideToolCall } from "../src/core/runner/tool-call.ts";
import {
  GATE_REPORTS_PER_TURN,
  GATE_REPORT_TOOL,
  HARNESS_TOOLS,
  checkTripwire,
  completedCalls,
  fileToolsUnwatched,
  keepReport,
  readGateReport,
  tripwireLine,
  type GateReport,
} from "../src/core/runner/tripwire.ts";
import { serveToolSocket } from "../src/host/runner/tool-server.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { loadCase } from "./support/launch-cases.ts";

const D = "a".repeat(64);
const allow = (call: string, tool: string): GateReport => ({ call, tool, allow: true, digest: D });

/** Claude Code's stream-json, cut to the shapes the tripwire reads: a tool_use, then its tool_result. */
const claudeStream = (calls: Array<{ id: string; name: string; isError?: boolean }>) =>
  [
    JSON.stringify({ type: "system", subtype: "init", tools: ["Read"] }),
    ...calls.flatMap((c) => [
      JSON.stringify({
        type: "assistant",
        message: { role: "assistant", content: [{ type: "tool_use", id: c.id, name: c.name, input: {} }] },
      }),
      JSON.stringify({
        type: "user",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: c.id, content: "x", ...(c.isError ? { is_error: true } : {}) }],
        },
      }),
    ]),
    JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "done" }),
    "",
  ].join("\n");

/** Pi's --mode json, cut the same way: tool_execution_end carries the call id, the tool and isError. */
const piStream = (calls: Array<{ id: string; name: string; isError?: boolean }>) =>
  [
    ...calls.flatMap((c) => [
      JSON.stringify({ type: "tool_execution_start", toolCallId: c.id, toolName: c.name, args: {} }),
      JSON.stringify({
        type: "tool_execution_end",
        toolCallId: c.id,
        toolName: c.name,
        result: {},
        isError: c.isError === true,
      }),
    ]),
    JSON.stringify({ type: "agent_end", messages: [] }),
    "",
  ].join("\n");

/** A shipped example instance's launch plan, as the launch goldens plan it. */
function planOf(name: string) {
  const c = loadCase(name);
  const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
  if (d.kind !== "launch") throw new Error(`${name} did not plan: ${d.code}`);
  return d.plan;
}

const CLAUDE = { stream: "claude-stream-json" as const, typedTools: ["mcp__mosaic__send_message"] };
const PI = { stream: "pi-json" as const, typedTools: ["send_message"] };

describe("the tripwire's tool table (HARNESS_TOOLS)", () => {
  it("watches every tool the gate checks paths for, in its harness's stream", () => {
    expect(fileToolsUnwatched(), "gate file tools the tripwire does not know").toEqual([]);
    const { read: _read, ...withoutRead } = HARNESS_TOOLS["pi-json"];
    expect(fileToolsUnwatched({ ...HARNESS_TOOLS, "pi-json": withoutRead }), "control: read dropped").toEqual(["read"]);
    expect(
      fileToolsUnwatched({ ...HARNESS_TOOLS, "pi-json": { ...withoutRead, read: { kind: "shell", why: "" } } }),
      "control: read kept, but not as a file tool",
    ).toEqual(["read"]);
    for (const [stream, tools] of Object.entries(HARNESS_TOOLS))
      for (const [name, t] of Object.entries(tools))
        if (t.kind === "file")
          expect(Object.hasOwn(FILE_TOOLS, name), `${stream} ${name} is a gate file tool`).toBe(true);
  });
  it("knows every built-in each shipped route can grant, so the shipped harnesses never trip on a name", () => {
    for (const c of ["pi-coder", "claude-coder", "claude-pm"]) {
      const plan = planOf(c);
      const known = HARNESS_TOOLS[plan.tripwire.stream];
      const policy = JSON.parse(plan.bundle["policy.json"]!) as { builtInTools: string[]; typedTools: string[] };
      expect(policy.builtInTools.length, `${c} grants built-ins`).toBeGreaterThan(0);
      for (const t of policy.builtInTools) expect(Object.hasOwn(known, t), `${c}: ${t}`).toBe(true);
      expect(plan.tripwire.typedTools, `${c}: the typed tools the policy grants`).toEqual(policy.typedTools);
    }
  });
  it("every real harness's session plans its stream: Pi runs in JSON mode, Claude Code in stream-json", () => {
    const pi = planOf("pi-coder");
    expect(pi.tripwire.stream).toBe("pi-json");
    expect(planOf("claude-coder").tripwire.stream).toBe("claude-stream-json");
    const argv = pi.adapter.argv;
    expect(argv.slice(argv.indexOf("--mode"), argv.indexOf("--mode") + 2), "Pi's event stream").toEqual([
      "--mode",
      "json",
    ]);
    expect(planRunnerBounds(pi.turnEnd).turn.stdoutBytes, "the stream fits the runner's stream cap").toBe(
      64 * 1024 * 1024,
    );
  });
});

describe("reading completed calls off the harness's stream", () => {
  it("Claude Code: a tool_result that is not an error completes its tool_use; an error (a hook block) does not", () => {
    const s = claudeStream([
      { id: "t1", name: "Read" },
      { id: "t2", name: "Write", isError: true },
      { id: "t3", name: "mcp__mosaic__send_message" },
    ]);
    expect(completedCalls("claude-stream-json", s)).toEqual([
      { call: "t1", tool: "Read" },
      { call: "t3", tool: "mcp__mosaic__send_message" },
    ]);
  });
  it("Claude Code: a result for a call the stream never named counts under no known name", () => {
    const s = `${JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t9" }] } })}\n`;
    expect(completedCalls("claude-stream-json", s)).toEqual([{ call: "t9", tool: "(a call the stream never named)" }]);
  });
  it("Pi: tool_execution_end with isError false completes the call", () => {
    const s = piStream([
      { id: "p1", name: "read", isError: true },
      { id: "p2", name: "write" },
    ]);
    expect(completedCalls("pi-json", s)).toEqual([{ call: "p2", tool: "write" }]);
  });
  it("an event whose type is written with a JSON escape is still read: no text prefilter fails open on it", () => {
    const esc = (line: string, word: string) => line.replace(word, word.replace("_", "\\u005f"));
    const claude = claudeStream([{ id: "t1", name: "Read" }])
      .split("\n")
      .map((l) => esc(esc(l, "tool_use"), "tool_result"))
      .join("\n");
    expect(claude, "the fixture really is escaped").toContain("tool\\u005fresult");
    expect(completedCalls("claude-stream-json", claude)).toEqual([{ call: "t1", tool: "Read" }]);
    const pi = esc(piStream([{ id: "p1", name: "read" }]), "tool_execution_end");
    expect(pi).toContain("tool\\u005fexecution_end");
    expect(completedCalls("pi-json", pi)).toEqual([{ call: "p1", tool: "read" }]);
  });
  it("lines that are not JSON, or not events, are passed over", () => {
    expect(completedCalls("pi-json", 'tool_execution_end\n{"type":"tool_execution_end"\n')).toEqual([]);
    expect(completedCalls("claude-stream-json", '"tool_use" not json\n')).toEqual([]);
  });
});

describe("checkTripwire: each completed call needs a known tool and the gate's allow for the same call", () => {
  const calls = completedCalls("claude-stream-json", claudeStream([{ id: "t1", name: "Read" }]));
  it("an allow for the same call and tool: the turn stands", () => {
    expect(checkTripwire(CLAUDE, calls, [allow("t1", "Read")])).toEqual({ kind: "ok", calls: 1 });
  });
  it("no report, a block, another call's allow, or the same call under another tool: tripped, naming the tool", () => {
    const tripped = { kind: "tripped", tool: "Read", call: "t1", reply: "Read ran without the gate" };
    expect(checkTripwire(CLAUDE, calls, [])).toMatchObject(tripped);
    expect(checkTripwire(CLAUDE, calls, [{ ...allow("t1", "Read"), allow: false }])).toMatchObject(tripped);
    expect(checkTripwire(CLAUDE, calls, [allow("t2", "Read")])).toMatchObject(tripped);
    expect(checkTripwire(CLAUDE, calls, [allow("t1", "Bash")])).toMatchObject(tripped);
  });
  it("a tool the table does not know trips even with the gate's allow: it fails closed until reviewed", () => {
    const c = [{ call: "t1", tool: "WebFetch" }];
    expect(checkTripwire(CLAUDE, c, [allow("t1", "WebFetch")])).toMatchObject({
      kind: "tripped",
      tool: "WebFetch",
      why: expect.stringContaining("not in the tripwire's tool table"),
      reply: "WebFetch ran without the gate",
    });
    expect(
      checkTripwire(PI, [{ call: "p1", tool: "Read" }], [allow("p1", "Read")]).kind,
      "Claude's name in Pi's stream",
    ).toBe("tripped");
  });
  it("the session's typed tools are known; another session's are not", () => {
    expect(checkTripwire(PI, [{ call: "p1", tool: "send_message" }], [allow("p1", "send_message")]).kind).toBe("ok");
    expect(checkTripwire(PI, [{ call: "p1", tool: "launch" }], [allow("p1", "launch")]).kind).toBe("tripped");
  });
  it("the record line names the tool and the call, or the count", () => {
    expect(tripwireLine(3, { kind: "ok", calls: 2 })).toBe(
      "turn 3: tripwire: the gate allowed each of 2 completed tool calls",
    );
    expect(tripwireLine(1, checkTripwire(CLAUDE, calls, []))).toBe(
      'turn 1: tripwire: Read (call "t1") ran without the gate: the gate reported no allow for call "t1"',
    );
  });
  it("a turn keeps at most GATE_REPORTS_PER_TURN reports: a flood grows nothing and can only trip its own turn", () => {
    const kept: GateReport[] = [];
    for (let i = 0; i < GATE_REPORTS_PER_TURN.value + 10; i++) keepReport(kept, allow(`c${i}`, "Read"));
    expect(kept.length).toBe(GATE_REPORTS_PER_TURN.value);
    expect(kept.at(-1)?.call).toBe(`c${GATE_REPORTS_PER_TURN.value - 1}`);
  });
});

describe("readGateReport: a report's args, field by field", () => {
  const good = { call: "t1", tool: "Read", allow: true, digest: D };
  it.each([
    ["not an object", null, "args is not an object"],
    ["an array", [good], "args is not an object"],
    ["a string", "t1", "args is not an object"],
    ["no call", { ...good, call: undefined }, "call is not a non-empty string"],
    ["an empty call", { ...good, call: "" }, "call is not a non-empty string"],
    ["a number for call", { ...good, call: 7 }, "call is not a non-empty string"],
    ["no tool", { ...good, tool: undefined }, "tool is not a non-empty string"],
    ["an empty tool", { ...good, tool: "" }, "tool is not a non-empty string"],
    ["allow as a string", { ...good, allow: "true" }, "allow is not true or false"],
    ["no digest", { ...good, digest: undefined }, "digest is not 64 hex digits"],
    ["a digest with a prefix", { ...good, digest: `x${D}` }, "digest is not 64 hex digits"],
    ["a digest with a suffix", { ...good, digest: `${D}x` }, "digest is not 64 hex digits"],
    ["an uppercase digest", { ...good, digest: D.toUpperCase() }, "digest is not 64 hex digits"],
    // A regex test would read [D] as the string D: the type check comes first.
    ["a digest in a list", { ...good, digest: [D] }, "digest is not 64 hex digits"],
  ])("%s is refused, naming the field", (_what, args, bad) => {
    expect(readGateReport(args)).toEqual({ bad });
  });
  it("a good report comes back with exactly its four fields", () => {
    expect(readGateReport({ ...good, extra: 1 })).toEqual(good);
    expect(readGateReport({ ...good, allow: false })).toEqual({ ...good, allow: false });
  });
});

describe("the streams' edge cases: a malformed event never completes a call it does not name", () => {
  const claudeLine = (content: unknown) => `${JSON.stringify({ type: "user", message: { content } })}\n`;
  it("Claude Code: a tool_result needs a string tool_use_id; an error result or another block type completes nothing", () => {
    expect(completedCalls("claude-stream-json", claudeLine([{ type: "tool_result", tool_use_id: 7 }]))).toEqual([]);
    expect(
      completedCalls("claude-stream-json", claudeLine([{ type: "text", tool_use_id: "t1", text: "tool_result" }])),
    ).toEqual([]);
    expect(
      completedCalls("claude-stream-json", claudeLine([{ type: "tool_result", tool_use_id: "t1", is_error: true }])),
    ).toEqual([]);
    expect(completedCalls("claude-stream-json", claudeLine("tool_result"))).toEqual([]);
    expect(completedCalls("claude-stream-json", `${JSON.stringify({ type: "user", tool_result: 1 })}\n`)).toEqual([]);
  });
  it("Claude Code: a block that is not an object (null, a string) is passed over, not a crash of pid 1", () => {
    expect(
      completedCalls(
        "claude-stream-json",
        claudeLine([null, "tool_result", { type: "tool_result", tool_use_id: "t1" }]),
      ),
    ).toEqual([{ call: "t1", tool: "(a call the stream never named)" }]);
  });
  it("Claude Code: only a tool_use block with a string id and name names a call", () => {
    const result = { type: "tool_result", tool_use_id: "t1" };
    const unnamed = "(a call the stream never named)";
    for (const use of [
      { type: "tool_use", id: "t1", name: 5 },
      { type: "tool_use", id: 1, name: "Read" },
      { type: "server_tool_use", id: "t1", name: "Read" },
    ])
      expect(completedCalls("claude-stream-json", claudeLine([use, result])), JSON.stringify(use)).toEqual([
        { call: "t1", tool: unnamed },
      ]);
    expect(
      completedCalls("claude-stream-json", claudeLine([{ type: "tool_use", id: "t1", name: "Read" }, result])),
    ).toEqual([{ call: "t1", tool: "Read" }]);
  });
  it("Pi: an event that is not tool_execution_end, or an error, completes nothing; a missing id or name matches no report", () => {
    const pi = (e: unknown) => `${JSON.stringify(e)}\n`;
    expect(
      completedCalls(
        "pi-json",
        pi({ type: "tool_execution_start", toolCallId: "p1", toolName: "read", note: "tool_execution_end" }),
      ),
    ).toEqual([]);
    expect(completedCalls("pi-json", pi([{ type: "tool_execution_end" }]))).toEqual([]);
    expect(
      completedCalls("pi-json", pi({ type: "tool_execution_end", toolCallId: "p1", toolName: "read", isError: true })),
    ).toEqual([]);
    const bare = completedCalls(
      "pi-json",
      pi({ type: "tool_execution_end", toolCallId: 3, toolName: null, isError: false }),
    );
    expect(bare).toEqual([{ call: "", tool: "(a call the stream never named)" }]);
    expect(checkTripwire(PI, bare, [allow("", "(a call the stream never named)")]).kind, "no table names it").toBe(
      "tripped",
    );
  });
});

describe("gate reports on the tool socket", () => {
  it("a report is kept, never forwarded; a malformed one is refused naming the field", () => {
    const routes = new Map();
    const args = { call: "t1", tool: "Read", allow: true, digest: D };
    expect(decideToolCall(routes, { id: 1, tool: GATE_REPORT_TOOL, args }, null)).toEqual({
      kind: "report",
      id: 1,
      report: args,
    });
    expect(decideToolCall(routes, { id: 2, tool: GATE_REPORT_TOOL, args: { ...args, digest: "x" } }, null)).toEqual({
      kind: "answer",
      id: 2,
      error: "bad request: mosaic.gate-report: digest is not 64 hex digits",
    });
    expect(decideToolCall(routes, { id: 3, tool: GATE_REPORT_TOOL, args: { ...args, allow: "yes" } }, null)).toEqual({
      kind: "answer",
      id: 3,
      error: "bad request: mosaic.gate-report: allow is not true or false",
    });
  });

  const scratch = makeScratch("tripwire-socket");
  afterAll(() => scratch.remove());
  it("the runner's real tool server hands each report to the turn and answers ok", async () => {
    const path = join(scratch.root, "tools.sock");
    const seen: GateReport[] = [];
    const forwarded: string[] = [];
    const server = await serveToolSocket(
      { path },
      new Map(),
      null,
      async (_s, verb) => {
        forwarded.push(verb);
        return { kind: "ok", result: null };
      },
      planRunnerBounds({ kind: "result-line" }).toolSocket,
      (r) => seen.push(r),
    );
    try {
      const line = JSON.stringify({ id: 7, tool: GATE_REPORT_TOOL, args: allow("t1", "Read") });
      const answer = await new Promise<string>((resolve, reject) => {
        const c = createConnection(path, () => c.write(`${line}\n`));
        let got = "";
        c.on("data", (d) => {
          got += d.toString();
          if (got.includes("\n")) {
            c.destroy();
            resolve(got.trim());
          }
        });
        c.on("error", reject);
      });
      expect(JSON.parse(answer)).toEqual({ id: 7, ok: true, result: null });
      expect(seen).toEqual([allow("t1", "Read")]);
      expect(forwarded, "nothing reaches the broker").toEqual([]);
    } finally {
      server.close();
    }
  });
});
