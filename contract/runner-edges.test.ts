// The edges of decisions.ts, tool-call.ts and bounds.ts the generated sweep found untested: each
// refusal's exact reason, Pi's and Claude Code's malformed turn streams, the fake adapter's reply,
// tools.json entries that route nothing, request ids, and where the nesting and args bounds bite.
import { describe, expect, it } from "vitest";
import {
  EXIT,
  type BrokerAnswer,
  claimOutcome,
  judgeTurn,
  messageAction,
  pollStep,
  replyText,
  turnStderrName,
  type TurnRun,
} from "../src/core/runner/decisions.ts";
import type { SessionFile } from "../src/core/runner/session-file.ts";
import {
  boundRefusal,
  decideToolCall,
  nestedDeeperThan,
  parseToolLine,
  parseToolRoutes,
  readToolLine,
  toolAnswer,
  type ToolRoute,
} from "../src/core/runner/tool-call.ts";
import { planRunnerBounds } from "../src/core/runner/bounds.ts";

const run = (over: Partial<TurnRun> = {}): TurnRun => ({
  code: 0,
  signal: null,
  timedOut: false,
  stdout: "",
  marker: true,
  overCap: null,
  ...over,
});
const PI_END: SessionFile["turnEnd"] = { kind: "marker", file: "/run/x/turn-end", writtenAt: "agent_end", why: "" };
const CLAUDE_END: SessionFile["turnEnd"] = { kind: "result-line", emptyOutputFails: true, why: "" };
const FAKE_END: SessionFile["turnEnd"] = { kind: "exit", why: "" };
const line = (o: unknown) => JSON.stringify(o);
const assistant = (over: Record<string, unknown> = {}) => ({
  role: "assistant",
  stopReason: "stop",
  content: [{ type: "text", text: "done" }],
  ...over,
});
/** A Pi JSON stream whose agent_end event carries `messages`. */
const piEnd = (messages: unknown) => `${line({ type: "agent_start" })}\n${line({ type: "agent_end", messages })}\n`;
const pi = (stdout: string) => judgeTurn(PI_END, run({ stdout }), 900);
const bytes = (t: string) => new TextEncoder().encode(t);

describe("the broker's answers, with the reason the runner logs", () => {
  it("claim: each outcome is its exit code with a reason naming role.claim and what the broker said", () => {
    expect(claimOutcome({ kind: "unreachable", why: "ENOENT" })).toEqual({
      kind: "exit",
      code: EXIT.brokerUnreachable,
      why: "role.claim got no answer: ENOENT",
    });
    expect(claimOutcome({ kind: "error", code: "refused", message: "pm is held by another session" })).toEqual({
      kind: "exit",
      code: EXIT.claimRefused,
      why: "role.claim refused: pm is held by another session",
    });
    expect(claimOutcome({ kind: "error", code: "unauthenticated", message: "unknown capability" })).toEqual({
      kind: "exit",
      code: EXIT.sessionInvalid,
      why: "role.claim: unauthenticated: unknown capability",
    });
  });
  it("the poll that stops the runner (23) names the count and the last failure, an error's code or no answer's why", () => {
    expect(pollStep(2, { kind: "error", code: "internal", message: "boom" }, 3)).toEqual({
      failed: 3,
      stop: { code: EXIT.brokerUnreachable, why: "the broker failed 3 polls in a row (last: internal: boom)" },
    });
    expect(pollStep(4, { kind: "unreachable", why: "ECONNREFUSED" }, 5)).toEqual({
      failed: 5,
      stop: { code: EXIT.brokerUnreachable, why: "the broker failed 5 polls in a row (last: ECONNREFUSED)" },
    });
  });
  it("an incoming RESULT is ignored with the reason it gets no reply", () => {
    expect(messageAction({ id: "1", from: "a", kind: "result", body: "x", replyTo: "0" })).toEqual({
      kind: "ignore",
      why: "an incoming RESULT never gets an automatic reply",
    });
  });
});

describe("Pi's JSON stream: the reply is the last agent_end's last assistant message", () => {
  it("an agent_end event with no message, a null one or no messages list has no assistant message (and does not throw)", () => {
    for (const messages of [[], [null], undefined, "done", [assistant(), "done"]]) {
      let got: unknown;
      try {
        got = pi(piEnd(messages));
      } catch (e) {
        got = `threw: ${String(e)}`;
      }
      expect(got, JSON.stringify(messages)).toEqual({
        kind: "failed",
        why: "Pi's agent_end event ends with no assistant message",
      });
    }
  });
  it("an aborted last message fails like an error, and a stop without a string errorMessage says no message", () => {
    const table: Array<[Record<string, unknown>, string]> = [
      [{ stopReason: "aborted", errorMessage: "the user pressed Esc" }, "aborted: the user pressed Esc"],
      [{ stopReason: "aborted" }, "aborted: no message"],
      [{ stopReason: "error" }, "error: no message"],
      [{ stopReason: "error", errorMessage: { status: 429 } }, "error: no message"],
    ];
    for (const [over, why] of table)
      expect(pi(piEnd([assistant(over)])), JSON.stringify(over)).toEqual({
        kind: "failed",
        why: `Pi's last message stopped on ${why}`,
      });
  });
  it("only text blocks with string text make the reply: a null block, another type's text and a text block without text are left out", () => {
    const content = [
      null,
      { type: "image", text: "alt text" },
      { type: "text", text: 3 },
      { type: "text" },
      { type: "text", text: "kept" },
    ];
    let got: unknown;
    try {
      got = pi(piEnd([assistant({ content })]));
    } catch (e) {
      got = `threw: ${String(e)}`;
    }
    expect(got).toEqual({ kind: "ok", reply: "kept" });
    expect(pi(piEnd([assistant({ content: "kept" })])), "content that is not a list is no text").toEqual({
      kind: "ok",
      reply: "",
    });
  });
  it("a later event of another type that mentions agent_end does not replace the agent_end event", () => {
    const stdout = `${piEnd([assistant()])}${line({ type: "message_update", note: "agent_end" })}\n`;
    expect(stdout.split("\n")[2], "control: the later line holds the quoted name").toContain('"agent_end"');
    expect(pi(stdout)).toEqual({ kind: "ok", reply: "done" });
  });
  it("the event is found by the name as Pi writes it: a type that only decodes to agent_end is not read", () => {
    const escaped = line({ type: "agent_end", messages: [assistant()] }).replace('"agent_end"', '"agent\\u005fend"');
    expect((JSON.parse(escaped) as { type: string }).type, "control: it decodes to agent_end").toBe("agent_end");
    expect(pi(`${escaped}\n`)).toEqual({ kind: "failed", why: "Pi's JSON stream has no agent_end event" });
  });
});

describe("Claude Code's stream-json: the reply is the last result line", () => {
  it("with no result line the turn fails with the reason that points at TMPDIR", () => {
    expect(judgeTurn(CLAUDE_END, run({ stdout: line({ type: "system" }) }), 900)).toEqual({
      kind: "failed",
      why: "the harness exited 0 with no result (is TMPDIR writable?)",
    });
  });
  it("lines after the result that are not result lines leave it the reply", () => {
    const stdout = [line({ type: "result", result: "the answer" }), line({ type: "system", subtype: "hook" })].join(
      "\n",
    );
    expect(judgeTurn(CLAUDE_END, run({ stdout }), 900)).toEqual({ kind: "ok", reply: "the answer" });
  });
  it("an event is a line that starts with {: an indented result line is not read", () => {
    const stdout = [line({ type: "result", result: "first" }), ` ${line({ type: "result", result: "indented" })}`].join(
      "\n",
    );
    expect(judgeTurn(CLAUDE_END, run({ stdout }), 900)).toEqual({ kind: "ok", reply: "first" });
  });
});

describe("the fake adapter's turn (turnEnd exit) and what goes back", () => {
  it("exit 0 is ok and stdout is the reply, its trailing newlines cut and its leading space kept, with no marker or result line", () => {
    const stdout = `  ${line({ type: "result", result: "not read" })}\n\n`;
    expect(judgeTurn(FAKE_END, run({ stdout, marker: false }), 900)).toEqual({ kind: "ok", reply: stdout.trimEnd() });
    expect(judgeTurn(FAKE_END, run({ stdout: "  two\nlines \n" }), 900)).toEqual({
      kind: "ok",
      reply: "  two\nlines",
    });
    expect(judgeTurn(FAKE_END, run({ code: 3 }), 900), "control: it still fails a non-zero exit").toEqual({
      kind: "failed",
      why: "the harness exited 3",
    });
  });
  it("an ok turn's reply goes back as it is", () => {
    expect(replyText({ kind: "ok", reply: "the answer" })).toBe("the answer");
  });
  it("each turn's stderr file is its 1-based number, four digits or more", () => {
    expect([1, 42, 9999, 12345].map(turnStderrName)).toEqual([
      "0001.stderr",
      "0042.stderr",
      "9999.stderr",
      "12345.stderr",
    ]);
  });
});

describe("tools.json: each entry's name and route", () => {
  it("a broker verb or the launch socket routes a tool", () => {
    const r = parseToolRoutes(
      line({
        tools: [
          { name: "send_message", via: { broker: "message.send" } },
          { name: "launch_role", via: { launchSocket: true } },
        ],
      }),
    );
    expect(r instanceof Map ? Object.fromEntries(r) : r).toEqual({
      send_message: { broker: "message.send" },
      launch_role: { launchSocket: true },
    });
  });
  it("a file with no tools list, or an entry with no name or route, routes nothing and says why", () => {
    const table: Array<[unknown, string]> = [
      [{}, "tools.json has no tools list"],
      [null, "tools.json has no tools list"],
      [3, "tools.json has no tools list"],
      [{ tools: [null] }, "a tools.json entry has no name or route"],
      [{ tools: ["send_message"] }, "a tools.json entry has no name or route"],
      [{ tools: { send_message: { broker: "message.send" } } }, "tools.json has no tools list"],
      [{ tools: [{ via: { broker: "message.send" } }] }, "a tools.json entry has no name or route"],
      [{ tools: [{ name: 3, via: { broker: "message.send" } }] }, "a tools.json entry has no name or route"],
      [{ tools: [{ name: "send_message" }] }, "a tools.json entry has no name or route"],
      [{ tools: [{ name: "send_message", via: "message.send" }] }, "a tools.json entry has no name or route"],
      [{ tools: [{ name: "send_message", via: null }] }, "a tools.json entry has no name or route"],
      [{ tools: [{ name: "send_message", via: { broker: 3 } }] }, "send_message: no broker verb or launch socket"],
      [
        { tools: [{ name: "launch_role", via: { launchSocket: "yes" } }] },
        "launch_role: no broker verb or launch socket",
      ],
    ];
    for (const [file, problem] of table) {
      let got: unknown;
      try {
        got = parseToolRoutes(line(file));
      } catch (e) {
        got = `threw: ${String(e)}`;
      }
      expect(got, line(file)).toEqual({ problem });
    }
  });
});

describe("a tool-socket request line", () => {
  it("a line that is JSON but not an object is refused as such", () => {
    for (const text of ["null", "3", '"send_message"', "true", "[]"]) {
      let got: unknown;
      try {
        got = parseToolLine(text);
      } catch (e) {
        got = `threw: ${String(e)}`;
      }
      expect(got, text).toEqual({ bad: "bad request: not a JSON object" });
    }
  });
  it("the id comes back only as a string or a number; any other id is null", () => {
    const table: Array<[unknown, string | number | null]> = [
      ["call-1", "call-1"],
      ["", ""],
      [7, 7],
      [true, null],
      [{ n: 1 }, null],
      [null, null],
    ];
    for (const [id, want] of table)
      expect(parseToolLine(line({ id, tool: "send_message", args: {} })), line(id)).toEqual({
        id: want,
        tool: "send_message",
        args: {},
      });
    expect(parseToolLine(line({ tool: "send_message" })), "no id, no args").toEqual({
      id: null,
      tool: "send_message",
      args: undefined,
    });
  });
  it("a typed tool's args that are not an object are refused with that reason", () => {
    const routes = new Map<string, ToolRoute>([["send_message", { broker: "message.send" }]]);
    for (const args of [null, [], "to pm", undefined])
      expect(decideToolCall(routes, { id: "c", tool: "send_message", args }, null), line(args)).toEqual({
        kind: "answer",
        id: "c",
        error: "bad request: args is not an object",
      });
  });
});

describe("the tool-socket answer for what the broker said", () => {
  it("ok carries the result; an error and no answer are refusals, no answer saying the call was not made", () => {
    const table: Array<[BrokerAnswer, unknown]> = [
      [
        { kind: "ok", result: { sent: "m-1" } },
        { id: 7, ok: true, result: { sent: "m-1" } },
      ],
      [
        { kind: "error", code: "forbidden", message: "pm may not send to qa" },
        { id: 7, ok: false, error: "refused: pm may not send to qa" },
      ],
      [
        { kind: "unreachable", why: "ENOENT" },
        { id: 7, ok: false, error: "refused: the broker did not answer (ENOENT); the call was not made" },
      ],
    ];
    for (const [a, want] of table) expect(JSON.parse(toolAnswer(7, a)), a.kind).toEqual(want);
  });
});

describe("the tool socket's bounds: each refusal names its bound and value, and where it bites", () => {
  const b = planRunnerBounds({ kind: "exit" }).toolSocket;
  it("each of the five bounds has its own answer with the planned value", () => {
    expect({
      lineBytes: boundRefusal("lineBytes", b),
      depth: boundRefusal("depth", b),
      argsBytes: boundRefusal("argsBytes", b),
      connections: boundRefusal("connections", b),
      pending: boundRefusal("pending", b),
    }).toEqual({
      lineBytes: "bad request: a line over 1048576 bytes (the tool socket's lineBytes bound); the connection is closed",
      depth: "bad request: JSON nested deeper than 32 (the tool socket's depth bound)",
      argsBytes: "bad request: args over 1044480 bytes (the tool socket's argsBytes bound)",
      connections:
        "refused: more than 32 connections at once (the tool socket's connections bound); the connection is closed",
      pending: "refused: more than 16 requests waiting on one connection (the tool socket's pending bound)",
    });
  });
  it("nesting is depth at once, not brackets in all: closed siblings of either kind do not add up", () => {
    const table: Array<[string, number, boolean]> = [
      ["[][][][]", 1, false],
      ["{}{}{}{}", 1, false],
      ['{"a":[],"b":{},"c":[{}],"d":{"e":[]}}', 3, false],
      ['{"a":[],"b":{},"c":[{}],"d":{"e":[]}}', 2, true],
      ['{"a":[],"b":{},"c":[{}],"d":{"e":[[]]}}', 3, true],
      ["[[]]", 1, true],
    ];
    for (const [text, max, deeper] of table)
      expect(nestedDeeperThan(bytes(text), max), `${text} > ${max}`).toBe(deeper);
  });
  it("args of exactly argsBytes bytes are read; one byte more is refused, counted in UTF-8 bytes, not characters", () => {
    const envelope = line({ body: "" }).length;
    const withBody = (body: string) => bytes(line({ id: 9, tool: "send_message", args: { body } }));
    const atBound = "b".repeat(b.argsBytes - envelope);
    expect(readToolLine(withBody(atBound), b)).toEqual({ id: 9, tool: "send_message", args: { body: atBound } });
    expect(readToolLine(withBody(`${atBound}b`), b)).toEqual({ bad: boundRefusal("argsBytes", b), id: 9 });
    expect(readToolLine(bytes(line({ id: 9, tool: "send_message" })), b), "no args: nothing to count").toEqual({
      id: 9,
      tool: "send_message",
      args: undefined,
    });
    const wide = "é".repeat(Math.floor((b.argsBytes - envelope) / 2) + 1);
    expect(wide.length, "control: under the bound in characters").toBeLessThan(b.argsBytes);
    expect(readToolLine(withBody(wide), b)).toEqual({ bad: boundRefusal("argsBytes", b), id: 9 });
  });
});
