// Each assertion kind's verdict with its detail, the line the report prints: counts, plurals,
// excerpts and hashes cut to length, and which requests, binds, calls and egress lines count.
import { describe, expect, it } from "vitest";
import { judge, labelOf } from "../src/conformance/scenario/assert.ts";
import type { Evidence } from "../src/conformance/scenario/evidence.ts";
import type { Assertion } from "../src/conformance/scenario/schema.ts";
import type { RecordedRequest } from "../src/conformance/stand-ins/model-script/record.ts";
import type { CallRecord } from "../src/conformance/stand-ins/broker/server.ts";
import type { EgressRecord } from "../src/core/network/egress.ts";

const SECRET = "stand-in-value-xyz";
const SOCK = "/b/launch.sock";
const req = (body: string, url = "/v1/messages?beta=true", method = "POST"): RecordedRequest => ({
  seq: 1,
  method,
  url,
  headers: {},
  body,
  served: { kind: "turn", turn: 0 },
  status: 200,
});
const results = (...texts: string[]) =>
  JSON.stringify({
    messages: [
      { role: "user", content: "go" },
      { role: "user", content: texts.map((t, i) => ({ type: "tool_result", tool_use_id: `t${i}`, content: t })) },
    ],
  });
type Call = { name: string; input: Record<string, unknown>; result?: string; isError?: boolean };
const convo = (calls: Call[]) =>
  JSON.stringify({
    messages: calls.flatMap((c, i) => [
      { role: "assistant", content: [{ type: "tool_use", id: `tu${i}`, name: c.name, input: c.input }] },
      ...(c.result === undefined
        ? []
        : [
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: `tu${i}`, content: c.result, is_error: c.isError === true },
              ],
            },
          ]),
    ]),
  });
const broker = (verb: string, args: Record<string, unknown> | null, outcome = "ok"): CallRecord =>
  ({
    at: "t",
    socket: "broker",
    id: 1,
    verb,
    args,
    cap: "c",
    capValid: true,
    run: "r",
    instance: "i",
    outcome,
  }) as CallRecord;
const egress = (method: string, path: string, outcome: "allowed" | "refused", status: number): EgressRecord => ({
  time: "t",
  method,
  path,
  outcome,
  status,
  bytesIn: 0,
  bytesOut: 0,
});
const ev = (patch: Partial<Evidence> = {}): Evidence => ({
  replies: ["ok"],
  requests: [],
  broker: [broker("role.claim", {})],
  egress: [],
  stderr: [],
  runnerLog: "",
  files: {},
  exit: 0,
  transcripts: {},
  trapConnections: 0,
  argv: [],
  standIns: [SECRET],
  ...patch,
});
const J = (a: Assertion, e: Evidence, values: Record<string, string> = { launch_socket: SOCK }) => judge(a, e, values);
const pass = (detail: string) => ({ verdict: "pass", detail });
const fail = (detail: string) => ({ verdict: "fail", detail });
const unobserved = (detail: string) => ({ verdict: "unobserved", detail });
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);
const BLOCKED: Call = { name: "read", input: { path: "/x" }, result: 'mosaic gate: read path: "/x"', isError: true };

describe("an assertion's label", () => {
  it("is its kind, with its value unless the value is true", () => {
    expect(labelOf({ trap_untouched: true })).toBe("trap_untouched");
    expect(labelOf({ reply_contains: "done", because: "b" })).toBe("reply_contains done");
    expect(labelOf({ exit_code: 0 })).toBe("exit_code 0");
    expect(labelOf({ launch_socket_bound: false })).toBe("launch_socket_bound false");
    expect(labelOf({ broker_not_called: { verb: "role.claim" } })).toBe('broker_not_called {"verb":"role.claim"}');
  });
});

describe("the text kinds", () => {
  it("replies: which one holds it, out of how many, and 'replies' for the plural", () => {
    const e = ev({ replies: ["first", "second done"] });
    expect(J({ reply_contains: "done" }, e)).toEqual(pass("reply 2 of 2 contains it"));
    expect(J({ reply_contains: "nope" }, e)).toEqual(fail("none of 2 replies contains it"));
    expect(J({ reply_not_contains: "nope" }, e)).toEqual(pass("none of 2 replies contains it"));
    expect(J({ reply_not_contains: "done" }, e)).toEqual(fail('reply 2 of 2 contains it: "second done"'));
    const missing = ev({ replies: ["first", null] });
    expect(J({ reply_contains: "zz" }, missing)).toEqual(unobserved("not in the 1 replies seen, and some never came"));
    expect(J({ reply_not_contains: "zz" }, missing)).toEqual(
      unobserved("not in the 1 replies seen, but some never came"),
    );
  });

  it("a leaked value's excerpt is 40 characters either side of it, clipped at the start", () => {
    const mid = `${"a".repeat(50)}${SECRET}${"b".repeat(50)}`;
    expect(J({ reply_not_contains: SECRET }, ev({ replies: [mid] }))).toEqual(
      fail(`reply 1 of 1 contains it: "${"a".repeat(40)}${SECRET}${"b".repeat(40)}"`),
    );
    const early = `xx${SECRET}${"y".repeat(100)}`;
    expect(J({ reply_not_contains: SECRET }, ev({ replies: [early] }))).toEqual(
      fail(`reply 1 of 1 contains it: "xx${SECRET}${"y".repeat(40)}"`),
    );
  });

  it("tool results: only POST /v1/messages bodies count, and a body that is not one shows nothing", () => {
    const others = [req(results("R"), "/v1/models"), req(results("R"), "/v1/messages", "GET")];
    expect(J({ tool_result_contains: "R" }, ev({ requests: others }))).toEqual(unobserved("no tool result to look in"));
    const e = ev({ requests: [req("not json"), req(results("first", "R here"))] });
    expect(J({ tool_result_contains: "R here" }, e)).toEqual(pass("tool result 2 of 2 contains it"));
    expect(J({ tool_result_contains: "nope" }, e)).toEqual(fail("none of 2 tool results contains it"));
    expect(J({ tool_result_not_contains: "nope" }, e)).toEqual(pass("none of 2 tool results contains it"));
    expect(J({ tool_result_not_contains: "R" }, e)).toEqual(fail('tool result 2 of 2 contains it: "R here"'));
  });

  it("requests: url, headers and body each searched; no model, nothing to look in", () => {
    const e = ev({ requests: [req("{}"), req("{}", "/v1/messages?k=v")] });
    expect(J({ request_contains: "k=v" }, e)).toEqual(pass("request 2 of 2 contains it"));
    expect(J({ request_contains: "nope" }, e)).toEqual(fail("none of 2 requests contains it"));
    expect(J({ request_not_contains: "nope" }, e)).toEqual(pass("none of 2 requests contains it"));
    expect(J({ request_contains: "x" }, ev({ requests: null }))).toEqual(unobserved("no request to look in"));
    expect(J({ request_not_contains: "x" }, ev({ requests: null }))).toEqual(unobserved("no request to look in"));
  });
});

describe("no_standin_leak", () => {
  it("counts the values found in each channel, plural past one", () => {
    const e = ev({ standIns: [SECRET, "canary-123"], replies: [`${SECRET} and canary-123`] });
    expect(J({ no_standin_leak: true }, e)).toEqual(fail("a stand-in value is in: replies (2 values)"));
  });
  it("an absent channel is searched as no text, not as the text of a missing value", () => {
    const e = ev({ requests: null, egress: null, standIns: ["undefined", "null"] });
    expect(J({ no_standin_leak: true }, e).verdict).toBe("pass");
  });
  it("with no requests and no egress log only the channels that exist are searched, and counted as 0", () => {
    const e = ev({ requests: null, egress: null, standIns: ["was here"], stderr: ["", ""] });
    expect(J({ no_standin_leak: true }, e)).toEqual(
      pass(
        "none of 1 values in replies, 0 requests, 1 broker records, 0 egress lines, 2 stderr files, 0 session files",
      ),
    );
  });
});

describe("files: hashes shown by their first 12 characters", () => {
  const files = {
    "/h/same": { before: HASH_A, after: HASH_A },
    "/h/changed": { before: HASH_A, after: HASH_B },
  };
  it("each kind's detail", () => {
    const e = ev({ files });
    expect(J({ file_exists: "/h/same" }, e)).toEqual(pass("sha256 aaaaaaaaaaaa"));
    expect(J({ file_absent: "/h/same" }, e)).toEqual(fail("exists after the session (sha256 aaaaaaaaaaaa)"));
    expect(J({ file_unchanged: "/h/same" }, e)).toEqual(pass("sha256 aaaaaaaaaaaa before and after"));
    expect(J({ file_unchanged: "/h/changed" }, e)).toEqual(fail("sha256 aaaaaaaaaaaa became bbbbbbbbbbbb"));
  });
});

describe("the broker kinds", () => {
  const e = ev({
    broker: [broker("role.claim", {}), broker("message.send", { to: "a", body: "b" }), broker("message.send", null)],
  });
  it("count the calls, singular for one", () => {
    expect(J({ broker_called: { verb: "role.claim" } }, e)).toEqual(pass("1 call, the first ok"));
    expect(J({ broker_called: { verb: "message.send" } }, e)).toEqual(pass("2 calls, the first ok"));
    expect(J({ broker_not_called: { verb: "role.claim" } }, e)).toEqual(fail("1 call"));
    expect(J({ broker_not_called: { verb: "message.send" } }, e)).toEqual(fail("2 calls"));
  });
  it("every given arg must equal the call's; a call without args matches none", () => {
    expect(J({ broker_called: { verb: "message.send", args: { to: "a", body: "c" } } }, e)).toEqual(
      fail("no such call among 3 records"),
    );
    expect(J({ broker_called: { verb: "message.send", args: { to: "a" } } }, e)).toEqual(pass("1 call, the first ok"));
  });
});

describe("path_blocked", () => {
  const withCalls = (...calls: Call[]) => ev({ requests: [req(convo(calls))] });
  it("no model: nothing to look at; no call on the path: says which tool was looked for", () => {
    expect(J({ path_blocked: { path: "/x" } }, ev({ requests: null }))).toEqual(
      unobserved("no model, so no tool call to look at"),
    );
    expect(J({ path_blocked: { path: "/x" } }, ev({ requests: [] }))).toEqual(
      unobserved('no tool call on "/x" among the recorded requests'),
    );
    expect(J({ path_blocked: { path: "/x", tool: "write" } }, withCalls(BLOCKED))).toEqual(
      unobserved('no write call on "/x" among the recorded requests'),
    );
  });
  it("a call names the path when any one argument equals it", () => {
    const call = { ...BLOCKED, input: { path: "/x", limit: 10 } };
    expect(J({ path_blocked: { path: "/x" } }, withCalls(call))).toEqual(
      pass('1 read call, blocked: "mosaic gate: read path: \\"/x\\""'),
    );
  });
  it("the latest request as long as the longest is read: a result it adds counts", () => {
    const e = ev({ requests: [req(convo([{ name: "read", input: { path: "/x" } }])), req(convo([BLOCKED]))] });
    expect(J({ path_blocked: { path: "/x" } }, e).verdict).toBe("pass");
    const shorter = ev({ requests: [req(convo([BLOCKED, BLOCKED])), req(convo([]))] });
    expect(J({ path_blocked: { path: "/x" } }, shorter)).toEqual(
      pass('2 read calls, blocked: "mosaic gate: read path: \\"/x\\""'),
    );
  });
  it("without a reason given, the gate's prefix is the reason: another error is a fail", () => {
    const other = { ...BLOCKED, result: "ENOENT" };
    expect(J({ path_blocked: { path: "/x" } }, withCalls(other))).toEqual(
      fail('a read call on it got an error without the reason: "ENOENT"'),
    );
    const long = { ...BLOCKED, result: "r".repeat(300), isError: false };
    expect(J({ path_blocked: { path: "/x" } }, withCalls(long))).toEqual(
      fail(`a read call on it got a result: "${"r".repeat(160)}"`),
    );
  });
  it("calls whose result never came are counted, and leave it unobserved", () => {
    const open = { name: "read", input: { path: "/x" } };
    expect(J({ path_blocked: { path: "/x" } }, withCalls(BLOCKED, open, open))).toEqual(
      unobserved("2 call(s) on it whose result the model was never shown"),
    );
  });
  it("the blocked result is shown cut to 120 characters", () => {
    const long = { ...BLOCKED, result: `mosaic gate: ${"g".repeat(200)}` };
    expect(J({ path_blocked: { path: "/x" } }, withCalls(long))).toEqual(
      pass(`1 read call, blocked: "${`mosaic gate: ${"g".repeat(200)}`.slice(0, 120)}"`),
    );
  });
});

describe("the runner's record, the trap and the launch socket", () => {
  const log = (...lines: string[]) => ev({ runnerLog: lines.join("\n") });
  it("gate_saw_every_call sums the calls of every turn, any turn number", () => {
    expect(
      J(
        { gate_saw_every_call: true },
        log(
          "turn 11: tripwire: the gate allowed each of 2 completed tool calls",
          "turn 11: ok",
          "turn 12: tripwire: the gate allowed each of 3 completed tool calls",
          "turn 12: failed",
        ),
      ),
    ).toEqual(pass("2 turns, 5 completed tool calls, each allowed by the gate"));
    expect(
      J(
        { gate_saw_every_call: true },
        log("turn 1: tripwire: the gate allowed each of 0 completed tool calls", "turn 1: ok"),
      ),
    ).toEqual(pass("1 turn, 0 completed tool calls, each allowed by the gate"));
  });
  it("gate_saw_every_call shows a bad tripwire line cut to 200 characters", () => {
    const text = `t${"x".repeat(300)}`;
    expect(J({ gate_saw_every_call: true }, log(`turn 1: tripwire: ${text}`, "turn 1: ok"))).toEqual(
      fail(`turn 1: ${text.slice(0, 200)}`),
    );
  });
  it("turn_failed: true takes any failed turn, shown cut to 120 characters", () => {
    const reply = `The turn failed: ${"w".repeat(200)}`;
    expect(J({ turn_failed: true }, ev({ replies: [reply] }))).toEqual(pass(JSON.stringify(reply.slice(0, 120))));
  });
  it("the trap counts connections, singular for one", () => {
    expect(J({ trap_untouched: true }, ev({ trapConnections: 1 }))).toEqual(fail("1 connection reached the trap"));
    expect(J({ trap_untouched: true }, ev({ trapConnections: 3 }))).toEqual(fail("3 connections reached the trap"));
  });
  it("the launch socket's bind, as source or destination, anywhere in the argv", () => {
    const bound = (argv: string[], want = true) => J({ launch_socket_bound: want }, ev({ argv }));
    expect(bound(["--ro-bind", SOCK, SOCK])).toEqual(pass(`--ro-bind ${SOCK} ${SOCK}`));
    expect(bound(["bwrap", "--bind", SOCK, "/inside", "--", "node"])).toEqual(pass(`--bind ${SOCK} /inside`));
    expect(bound(["bwrap", "--bind", "/host", SOCK, "--", "node"])).toEqual(pass(`--bind /host ${SOCK}`));
    expect(bound([SOCK, "--bind", "/a", "/b"])).toEqual(fail(`no bind of ${SOCK} among 4 argv items`));
    expect(bound([SOCK, "x", "--bind", "/a", "/b"])).toEqual(fail(`no bind of ${SOCK} among 5 argv items`));
  });
  it("a run that named no launch socket leaves it unobserved", () => {
    expect(J({ launch_socket_bound: false }, ev({ argv: ["bwrap", "--bind"] }), {})).toEqual(
      unobserved("the run named no launch socket"),
    );
  });
});

describe("egress_refused", () => {
  const e = ev({
    egress: [
      egress("GET", "/v1/models", "refused", 403),
      egress("POST", "/v1/messages", "allowed", 200),
      egress("POST", "/v1/messages?beta=true", "allowed", 200),
    ],
  });
  it("every field given must match; a method alone matches any path", () => {
    expect(J({ egress_refused: { method: "GET" } }, e)).toEqual(pass("refused GET /v1/models 403"));
    expect(J({ egress_refused: { method: "POST", path: "/v1/models" } }, e)).toEqual(
      unobserved("no matching request among 3 egress lines: the attempt never reached the proxy"),
    );
  });
  it("counts the allowed ones, singular for one", () => {
    expect(J({ egress_refused: { path: "/v1/messages" } }, e)).toEqual(
      fail("2 matching requests were allowed (status 200)"),
    );
    expect(J({ egress_refused: { path: "/v1/messages", method: "POST" } }, ev({ egress: [e.egress![1]!] }))).toEqual(
      fail("1 matching request was allowed (status 200)"),
    );
  });
});
