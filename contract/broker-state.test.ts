import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../src/conformance/stand-ins/broker/protocol.ts";
import {
  CATALOG_VERBS,
  VERBS,
  endRun,
  handleLine,
  issueCapability,
  newBrokerState,
  recordUnanswered,
  revokeClaim,
  sentTo,
  setPolicy,
  step,
  type BrokerState,
  type SocketName,
  type StepOutput,
} from "../src/conformance/stand-ins/broker/state.ts";
import { TOOL_CATALOG } from "../src/core/tools/catalog.ts";
import { isMosaicError } from "../src/core/errors.ts";

// 0xa0 and up, so a capability has hex letters and its upper-case spelling is another string.
const rnd = (n: number) => new Uint8Array(32).fill(0xa0 + n);
let serial = 0;

function call(
  s: BrokerState,
  cap: string,
  verb: string,
  args: Record<string, unknown> = {},
  socket: SocketName = socketOf(verb),
): StepOutput {
  return step(s, { id: ++serial, cap, verb, args }, socket);
}

function socketOf(verb: string): SocketName {
  return VERBS.get(verb)?.socket ?? "broker";
}

/** Calls, expects ok, and gives the result and the next state. */
function ok(
  s: BrokerState,
  cap: string,
  verb: string,
  args: Record<string, unknown> = {},
): { s: BrokerState; result: any } {
  const out = call(s, cap, verb, args);
  expect(out.response, `${verb} ${JSON.stringify(args)}`).toMatchObject({ ok: true });
  expect(out.record).toMatchObject({ outcome: "ok", capValid: true, verb, cap });
  return { s: out.state, result: (out.response as { result: unknown }).result };
}

/** The call failed with `code` and changed nothing: the same state back, and the state given not touched either. */
function expectNoEffect(before: BrokerState, out: StepOutput, code: ErrorCode, why: string): void {
  const snapshot = structuredClone(before);
  expect(out.response, why).toMatchObject({ ok: false, error: { code } });
  expect(out.state, `${why}: the state is unchanged`).toBe(before);
  expect(before, `${why}: the state given is not mutated`).toEqual(snapshot);
  expect(out.record, why).toMatchObject({ outcome: "error", code });
}

/** Args each verb accepts in world(): a guard that is missing would let the call through. */
const SAMPLE_ARGS: Record<string, Record<string, unknown>> = {
  "role.claim": {},
  "role.release": {},
  "message.read": {},
  "message.send": { to: "pm-1", body: "hi" },
  "message.list": {},
  "task.get": { task: "t-1" },
  "task.list": {},
  "decision.raise": { question: "Ship it?" },
  "task.create": { title: "t", body: "b" },
  "task.update": { task: "t-1", state: "closed" },
  "task.comment": { task: "t-1", body: "c" },
  launch: { instance: "coder-2", message: "start" },
};

/**
 * Run a (coder-1, reviewer-1), run b (coder-1 again, unclaimed) and run pm (pm-1, which may
 * launch), all of business acme. coder-1 of run a is the first capability issued: the one a
 * lookup that fell back to "some capability" would hand a forged one.
 */
function world() {
  let s = newBrokerState();
  const issue = (run: string, instance: string, n: number) => {
    const r = issueCapability(s, { run, instance, business: "acme" }, rnd(n));
    s = r.state;
    return r.cap;
  };
  const a = issue("run-a", "coder-1", 1);
  const a2 = issue("run-a", "reviewer-1", 2);
  const b = issue("run-b", "coder-1", 3);
  const pm = issue("run-pm", "pm-1", 4);
  s = ok(s, a, "role.claim").s;
  s = ok(s, a2, "role.claim").s;
  s = ok(s, pm, "role.claim").s;
  const t = ok(s, pm, "task.create", { title: "first", body: "b" });
  expect(t.result).toEqual({ id: "t-1" });
  return { s: t.s, a, a2, b, pm };
}

const EVERY_VERB = [...VERBS.keys()];

describe("the verb table", () => {
  it("serves the runner's verbs, every typed-tool verb of the catalog, and launch", () => {
    expect(EVERY_VERB.sort()).toEqual(
      [...new Set([...CATALOG_VERBS, "role.claim", "role.release", "message.read", "message.send"])].sort(),
    );
    expect(Object.keys(SAMPLE_ARGS).sort()).toEqual(EVERY_VERB.sort());
  });
  it("every sample call succeeds for a claimed live capability (so a guard that fails is what refuses it below)", () => {
    for (const verb of EVERY_VERB) {
      const w = world();
      ok(w.s, verb === "launch" ? w.pm : w.a, verb, SAMPLE_ARGS[verb]);
    }
  });
});

describe("capabilities", () => {
  it("issueCapability gives 32 random bytes as hex, bound to one run and one instance", () => {
    const r = issueCapability(newBrokerState(), { run: "r", instance: "i" }, new Uint8Array(32).fill(0xab));
    expect(r.cap).toBe("ab".repeat(32));
    expect(r.state.caps.get(r.cap)).toEqual({ run: "r", instance: "i", business: null, status: "live" });
  });
  it("refuses a short random, an empty run, a capability issued twice, and a run that has ended", () => {
    const s = newBrokerState();
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(isMosaicError(e), String(e)).toBe(true);
        return (e as { code: string; field: string }).field;
      }
      return expect.fail("expected a MosaicError");
    };
    expect(code(() => issueCapability(s, { run: "r", instance: "i" }, new Uint8Array(31)))).toBe("random");
    expect(code(() => issueCapability(s, { run: "", instance: "i" }, rnd(1)))).toBe("run");
    const once = issueCapability(s, { run: "r", instance: "i" }, rnd(1)).state;
    expect(code(() => issueCapability(once, { run: "r2", instance: "j" }, rnd(1)))).toBe("random");
    expect(code(() => issueCapability(endRun(s, "r"), { run: "r", instance: "i" }, rnd(1)))).toBe("run");
  });

  it("a forged capability gets unauthenticated and has no effect, on every verb and both sockets", () => {
    const w = world();
    const forged = [
      "11".repeat(31) + "12",
      "ff".repeat(32),
      w.a.slice(0, 63),
      w.a.toUpperCase(),
      "",
      "constructor",
      "__proto__",
    ];
    for (const cap of forged) {
      for (const verb of [...EVERY_VERB, "no.such.verb"]) {
        for (const socket of ["broker", "launch"] as const) {
          const out = call(w.s, cap, verb, SAMPLE_ARGS[verb] ?? {}, socket);
          expectNoEffect(w.s, out, "unauthenticated", `${JSON.stringify(cap)} ${verb} on ${socket}`);
          expect(out.record).toMatchObject({ cap, capValid: false, run: null, instance: null });
        }
      }
    }
  });

  it("a live capability's call is recorded with its run and instance, and the cap as sent", () => {
    const w = world();
    const out = call(w.s, w.a, "message.read");
    expect(out.record).toEqual({
      socket: "broker",
      id: serial,
      verb: "message.read",
      args: {},
      cap: w.a,
      capValid: true,
      run: "run-a",
      instance: "coder-1",
      outcome: "ok",
    });
  });
});

describe("end of run", () => {
  it("voids every capability of the run: a call after it gets unauthenticated and changes nothing; other runs go on", () => {
    const w = world();
    const ended = endRun(w.s, "run-a");
    for (const cap of [w.a, w.a2]) {
      for (const verb of EVERY_VERB) {
        const out = call(ended, cap, verb, SAMPLE_ARGS[verb]);
        expectNoEffect(ended, out, "unauthenticated", `${verb} with an ended run's capability`);
        expect(out.record, "the attempt is recorded against the ended run").toMatchObject({
          cap,
          capValid: false,
          run: "run-a",
        });
      }
    }
    expect(ok(ended, w.pm, "message.read").result, "another run's capability still works").toEqual({ messages: [] });
    expect(ok(ended, w.b, "role.claim").result, "the ended run's instance is free for another run").toEqual({
      instance: "coder-1",
      run: "run-b",
    });
  });
  it("a run that never claimed ends the same way", () => {
    const w = world();
    const out = call(endRun(w.s, "run-b"), w.b, "role.claim");
    expect(out.response).toMatchObject({ ok: false, error: { code: "unauthenticated" } });
  });
});

describe("claims", () => {
  it("one live claim per instance: a second run's claim is refused and changes nothing", () => {
    const w = world();
    const out = call(w.s, w.b, "role.claim");
    expectNoEffect(w.s, out, "refused", "run b claims coder-1, which run a holds");
    expect(out.response).toMatchObject({ error: { message: "coder-1 is claimed by run run-a" } });
    expect(call(w.s, w.b, "message.read").response, "run b holds nothing").toMatchObject({
      ok: false,
      error: { code: "not-claimed" },
    });
    expect(ok(w.s, w.a, "message.read").result, "run a still holds it").toEqual({ messages: [] });
  });
  it("the same run claims again without harm; after release another run may claim", () => {
    const w = world();
    const again = ok(w.s, w.a, "role.claim");
    expect(again.result).toEqual({ instance: "coder-1", run: "run-a" });
    const released = ok(again.s, w.a, "role.release");
    expect(released.result).toEqual({ released: true });
    expect(call(released.s, w.a, "message.read").response, "released: not claimed any more").toMatchObject({
      ok: false,
      error: { code: "not-claimed" },
    });
    expect(ok(released.s, w.b, "role.claim").result).toEqual({ instance: "coder-1", run: "run-b" });
  });
  it("not-claimed before the claim, on every verb but role.claim, with no effect", () => {
    let s = newBrokerState();
    const r = issueCapability(s, { run: "r", instance: "pm-1", business: "acme" }, rnd(7));
    s = r.state;
    for (const verb of EVERY_VERB.filter((v) => v !== "role.claim")) {
      expectNoEffect(s, call(s, r.cap, verb, SAMPLE_ARGS[verb]), "not-claimed", verb);
    }
  });
  it("a revoked claim makes every later call with that capability fail claim-revoked, with no effect; the instance is free", () => {
    const w = world();
    const r = revokeClaim(w.s, "coder-1");
    expect(r.revoked).toBe(true);
    for (const verb of EVERY_VERB) {
      const out = call(r.state, w.a, verb, SAMPLE_ARGS[verb]);
      expectNoEffect(r.state, out, "claim-revoked", verb);
      expect(out.record).toMatchObject({ capValid: false, run: "run-a", instance: "coder-1" });
    }
    expect(ok(r.state, w.a2, "message.read").result, "the run's other instance keeps its claim").toEqual({
      messages: [],
    });
    expect(ok(r.state, w.b, "role.claim").result).toEqual({ instance: "coder-1", run: "run-b" });
    const none = revokeClaim(r.state, "coder-1");
    expect(none.revoked, "nothing to revoke").toBe(false);
    expect(none.state).toBe(r.state);
  });
  it("a policy that refuses the claim: role.claim refused, nothing held", () => {
    const w = world();
    const s = setPolicy(w.s, "coder-2", { claim: "refuse" });
    const r = issueCapability(s, { run: "run-c", instance: "coder-2" }, rnd(9));
    const out = call(r.state, r.cap, "role.claim");
    expectNoEffect(r.state, out, "refused", "claim refused by policy");
    expect(out.response).toMatchObject({ error: { message: "the broker refuses coder-2's claim (policy)" } });
  });
});

describe("sockets and verbs", () => {
  it("launch only on the launch socket; the launch socket serves nothing else", () => {
    const w = world();
    const onBroker = call(w.s, w.pm, "launch", SAMPLE_ARGS.launch, "broker");
    expectNoEffect(w.s, onBroker, "refused", "launch on the broker socket");
    expect(onBroker.response).toMatchObject({
      error: { message: "launch is served by the launch socket, not the broker socket" },
    });
    for (const verb of EVERY_VERB.filter((v) => v !== "launch")) {
      expectNoEffect(
        w.s,
        call(w.s, w.pm, verb, SAMPLE_ARGS[verb], "launch"),
        "unknown-verb",
        `${verb} on the launch socket`,
      );
    }
    const launched = ok(w.s, w.pm, "launch", SAMPLE_ARGS.launch);
    expect(launched.result).toEqual({ launched: true, instance: "coder-2" });
    expect(launched.s.launches).toEqual([{ by: "pm-1", run: "run-pm", instance: "coder-2", message: "start" }]);
  });
  it("an unknown verb gets unknown-verb; a typed tool's name is refused with its verb named", () => {
    const w = world();
    expectNoEffect(w.s, call(w.s, w.a, "message.delete"), "unknown-verb", "unknown verb");
    const tool = call(w.s, w.a, "send_message", { to: "pm-1", body: "x" });
    expectNoEffect(w.s, tool, "refused", "a tool name");
    expect(tool.response).toMatchObject({
      error: { message: "send_message is a typed tool's name, not a broker verb: its broker verb is message.send" },
    });
  });
  it("a line that is not a request: bad-request naming the field, its id echoed, nothing changed", () => {
    const w = world();
    const out = handleLine(w.s, { kind: "bad", id: 7, field: "cap", reason: "must be a string" }, "broker");
    expect(out.state).toBe(w.s);
    expect(out.response).toEqual({
      id: 7,
      ok: false,
      error: { code: "bad-request", message: "cap: must be a string" },
    });
    expect(out.record).toMatchObject({ verb: null, cap: null, capValid: false, outcome: "error", code: "bad-request" });
  });
  it("an unanswered line is recorded and does nothing", () => {
    const w = world();
    const rec = recordUnanswered(
      w.s,
      { kind: "request", request: { id: 1, cap: w.a, verb: "role.release", args: {} } },
      "broker",
    );
    expect(rec).toEqual({
      socket: "broker",
      id: 1,
      verb: "role.release",
      args: {},
      cap: w.a,
      capValid: true,
      run: "run-a",
      instance: "coder-1",
      outcome: "unanswered",
    });
  });
});

describe("every verb", () => {
  it("messages: send, read once, list since, result replies with replyTo", () => {
    const w = world();
    const sent = ok(w.s, w.a, "message.send", { to: "pm-1", body: "hello" });
    expect(sent.result).toEqual({ id: "m-2" });
    const read = ok(sent.s, w.pm, "message.read");
    expect(read.result).toEqual({ messages: [{ id: "m-2", from: "coder-1", kind: "message", body: "hello" }] });
    expect(ok(read.s, w.pm, "message.read").result, "reading marks them read").toEqual({ messages: [] });
    expect(ok(read.s, w.a, "message.read").result, "addressed to pm-1 only").toEqual({ messages: [] });
    const reply = ok(read.s, w.pm, "message.send", { to: "coder-1", body: "", kind: "result", replyTo: "m-2" });
    const got = ok(reply.s, w.a, "message.read");
    expect(got.result).toEqual({ messages: [{ id: "m-3", from: "pm-1", kind: "result", body: "", replyTo: "m-2" }] });
    const second = ok(got.s, w.a, "message.send", { to: "pm-1", body: "again" });
    expect(
      ok(second.s, w.pm, "message.list").result.messages.map((m: { id: string }) => m.id),
      "list shows read and unread",
    ).toEqual(["m-2", "m-4"]);
    expect(
      ok(second.s, w.pm, "message.list", { since: "m-2" }).result.messages.map((m: { id: string }) => m.id),
    ).toEqual(["m-4"]);
    expect(call(second.s, w.pm, "message.list", { since: "m-3" }).response, "m-3 went to coder-1").toMatchObject({
      ok: false,
      error: { code: "refused", message: "args.since: no message m-3 addressed to pm-1" },
    });
    expect(sentTo(second.s, "pm-1").map((m) => [m.id, m.read])).toEqual([
      ["m-2", true],
      ["m-4", false],
    ]);
  });
  it("a result may be longer than a tool's message body (a turn's whole output); a message may not", () => {
    const w = world();
    const long = "x".repeat(20_001);
    ok(w.s, w.a, "message.send", { to: "pm-1", body: long, kind: "result" });
    expect(call(w.s, w.a, "message.send", { to: "pm-1", body: long }).response).toMatchObject({
      ok: false,
      error: { code: "refused", message: expect.stringContaining("args.body:") },
    });
  });
  it("tasks and decisions: create, get, list by state, update, comment, raise; scoped to the business", () => {
    const w = world();
    const created = ok(w.s, w.a, "task.create", { title: "fix", body: "the bug", assignee: "coder-1" });
    expect(created.result).toEqual({ id: "t-2" });
    const got = ok(created.s, w.a, "task.get", { task: "t-2" });
    expect(got.result.task).toMatchObject({
      id: "t-2",
      title: "fix",
      body: "the bug",
      state: "open",
      assignee: "coder-1",
      createdBy: "coder-1",
      comments: [],
    });
    expect(ok(created.s, w.a, "task.list").result).toEqual({
      tasks: [
        { id: "t-1", title: "first", state: "open" },
        { id: "t-2", title: "fix", state: "open", assignee: "coder-1" },
      ],
    });
    const closed = ok(created.s, w.a, "task.update", { task: "t-2", state: "closed", body: "done" });
    expect(closed.result.task).toMatchObject({ id: "t-2", state: "closed", body: "done" });
    expect(
      ok(closed.s, w.a, "task.list").result.tasks.map((t: { id: string }) => t.id),
      "open by default",
    ).toEqual(["t-1"]);
    expect(ok(closed.s, w.a, "task.list", { state: "closed" }).result.tasks.map((t: { id: string }) => t.id)).toEqual([
      "t-2",
    ]);
    expect(ok(closed.s, w.a, "task.list", { state: "all" }).result.tasks).toHaveLength(2);
    const commented = ok(closed.s, w.pm, "task.comment", { task: "t-2", body: "thanks" });
    expect(commented.result).toEqual({ id: "c-3" });
    expect(ok(commented.s, w.a, "task.get", { task: "t-2" }).result.task.comments).toEqual([
      { id: "c-3", by: "pm-1", body: "thanks" },
    ]);
    const raised = ok(commented.s, w.a, "decision.raise", { question: "Merge?", options: ["yes", "no"] });
    expect(raised.result).toEqual({ id: "d-4" });
    expect(raised.s.decisions).toEqual([
      { id: "d-4", business: "acme", by: "coder-1", question: "Merge?", options: ["yes", "no"] },
    ]);
    for (const [verb, args] of [
      ["task.get", { task: "t-9" }],
      ["task.update", { task: "t-9", state: "open" }],
      ["task.comment", { task: "t-9", body: "x" }],
    ] as const) {
      expectNoEffect(raised.s, call(raised.s, w.a, verb, args), "refused", `${verb} of a task that does not exist`);
    }
    // Another business sees none of it.
    const other = issueCapability(raised.s, { run: "run-x", instance: "x-1", business: "globex" }, rnd(20));
    const xs = ok(other.state, other.cap, "role.claim").s;
    expect(ok(xs, other.cap, "task.list", { state: "all" }).result).toEqual({ tasks: [] });
    expectNoEffect(xs, call(xs, other.cap, "task.get", { task: "t-2" }), "refused", "another business's task");
  });
});

describe("args are validated with the catalog's schemas", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["message.send", { to: "pm-1" }, "args.body: Invalid input: expected string, received undefined"],
    ["message.send", { to: "pm-1", body: "x", cc: "y" }, "args.cc: not an argument of this verb"],
    ["message.send", { to: "pm-1", body: "x", kind: "memo" }, "args.kind: "],
    ["message.send", { to: "", body: "x", kind: "result" }, "args.to: "],
    ["message.list", { since: 3 }, "args.since: "],
    ["task.get", {}, "args.task: "],
    ["task.list", { state: "bogus" }, "args.state: "],
    ["decision.raise", { question: "q", options: ["ok", ""] }, "args.options[1]: "],
    ["task.create", { title: "", body: "b" }, "args.title: "],
    ["task.update", { task: "t-1", state: "done" }, "args.state: "],
    ["task.comment", { task: "t-1" }, "args.body: "],
    ["role.claim", { force: true }, "args.force: not an argument of this verb"],
    ["message.read", { all: true }, "args.all: not an argument of this verb"],
    ["launch", { instance: "coder-2" }, "args.message: "],
  ])("%s %j is refused naming %s", (verb, args, message) => {
    const w = world();
    const out = call(w.s, verb === "launch" ? w.pm : w.a, verb, args);
    expectNoEffect(w.s, out, "refused", verb);
    expect(
      (out.response as { error: { message: string } }).error.message.startsWith(message),
      (out.response as { error: { message: string } }).error.message,
    ).toBe(true);
  });
  it("the broker accepts exactly what each typed tool's own schema accepts", () => {
    const cases: Record<string, unknown>[] = [
      {},
      { task: "t-1" },
      { task: "t-1", body: "b" },
      { to: "pm-1", body: "b" },
      { since: "m-1" },
      { state: "all" },
      { state: "open" },
      { question: "q" },
      { title: "t", body: "b" },
      { instance: "i", message: "m" },
      { task: "" },
      { extra: 1 },
    ];
    for (const tool of TOOL_CATALOG) {
      const verb = "broker" in tool.via ? tool.via.broker : "launch";
      for (const args of cases) {
        const w = world();
        const out = call(w.s, w.pm, verb, args);
        const refusedForArgs =
          !out.response.ok &&
          out.response.error.message.startsWith("args.") &&
          !out.response.error.message.includes("no message") &&
          !out.response.error.message.includes("no task");
        expect(refusedForArgs, `${verb} ${JSON.stringify(args)}`).toBe(!tool.input.safeParse(args).success);
      }
    }
  });
});

describe("policy", () => {
  it("a verb the policy does not permit is refused with no effect; the runner's own verbs and a result reply are not the policy's", () => {
    const w = world();
    const s = setPolicy(w.s, "coder-1", {
      permitted: CATALOG_VERBS.filter((v) => v !== "task.create" && v !== "message.send"),
    });
    const out = call(s, w.a, "task.create", { title: "t", body: "b" });
    expectNoEffect(s, out, "refused", "task.create not permitted");
    expect(out.response).toMatchObject({
      error: { message: "task.create is not permitted for coder-1 (the broker's policy)" },
    });
    expectNoEffect(s, call(s, w.a, "message.send", { to: "pm-1", body: "x" }), "refused", "send_message not permitted");
    ok(s, w.a, "message.send", { to: "pm-1", body: "x", kind: "result" });
    ok(s, w.a, "message.read");
    ok(s, w.a, "task.list");
    ok(s, w.a, "role.release");
    ok(s, w.pm, "task.create", { title: "t", body: "b" });
  });
});
