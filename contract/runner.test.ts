// The runner's decisions and planSession(), as pure functions: each safety line in src/core/runner
// and src/core/session/plan-session.ts has a focused assertion here, and session.json per example
// instance is a golden with its invariants beside it. live/runtime.test.ts proves the same lines
// by effect, through the real runner in a real sandbox.
import { describe, expect, it } from "vitest";
import { EXIT, claimOutcome, judgeTurn, messageAction, pollStep, replyText, type TurnRun } from "../src/core/runner/decisions.ts";
import { parseCapabilityLine, parseSessionFile, type SessionFile } from "../src/core/runner/session-file.ts";
import { decideToolCall, parseToolLine, parseToolRoutes, toolAnswer, type ToolRoute } from "../src/core/runner/tool-call.ts";
import { MODEL_PORT, RUNNER_ENTRY, planSession } from "../src/core/session/plan-session.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { heldActions } from "../src/core/tools/catalog.ts";
import { FOUNDER_ENV } from "../src/core/session/env.ts";
import { credentialVariableNames } from "../src/core/session/credentials.ts";
import { normalise } from "../src/conformance/golden.ts";
import { jsonBody, matchGolden } from "../src/conformance/golden-expect.ts";
import { HOST_LAYOUTS } from "../src/conformance/host-fixtures.ts";
import { memoryView } from "../src/conformance/tree.ts";
import { FIXTURE_REPO, STAND_IN, loadCases } from "./support/launch-cases.ts";

const ok = (over: Partial<TurnRun> = {}): TurnRun => ({ code: 0, signal: null, timedOut: false, stdout: "done\n", marker: true, ...over });
const PI_END = { kind: "marker", file: "/run/x/turn-end" } as unknown as SessionFile["turnEnd"];
const CLAUDE_END = { kind: "result-line" } as unknown as SessionFile["turnEnd"];

describe("judgeTurn: what counts as a finished turn (seed 000)", () => {
  it("Pi: exit 0 without the agent_end marker is a failed turn", () => {
    expect(judgeTurn(PI_END, ok({ marker: false }), 900)).toEqual({ kind: "failed", why: expect.stringContaining("agent_end marker") });
    expect(judgeTurn(PI_END, ok(), 900)).toEqual({ kind: "ok", reply: "done" });
  });
  it("Claude Code: exit 0 with no result line, an empty one or an error one is a failed turn", () => {
    const line = (o: object) => JSON.stringify(o);
    for (const stdout of ["", "not json\n", line({ type: "result", result: "  " }), line({ type: "result", is_error: true, result: "x" }), line({ type: "result", result: 3 })]) {
      expect(judgeTurn(CLAUDE_END, ok({ stdout }), 900).kind, JSON.stringify(stdout)).toBe("failed");
    }
    const two = [line({ type: "system" }), line({ type: "result", result: "first" }), line({ type: "result", result: "last" })].join("\n");
    expect(judgeTurn(CLAUDE_END, ok({ stdout: two }), 900)).toEqual({ kind: "ok", reply: "last" });
  });
  it("a timeout, a signal and a non-zero exit fail whatever the harness printed, and the reply says why", () => {
    expect(judgeTurn(PI_END, ok({ timedOut: true }), 7)).toEqual({ kind: "failed", why: expect.stringContaining("7 s wall clock") });
    expect(judgeTurn(PI_END, ok({ signal: "SIGKILL", code: null }), 900)).toEqual({ kind: "failed", why: "the turn was killed by SIGKILL" });
    expect(judgeTurn(PI_END, ok({ code: 1 }), 900)).toEqual({ kind: "failed", why: "the harness exited 1" });
    expect(replyText({ kind: "failed", why: "x" })).toBe("The turn failed: x");
  });
});

describe("the broker's answers", () => {
  it("claim: ok claims; refused is 21; a dead capability is 22; no answer is 23", () => {
    expect(claimOutcome({ kind: "ok", result: {} })).toEqual({ kind: "claimed" });
    expect(claimOutcome({ kind: "error", code: "refused", message: "no" })).toMatchObject({ code: EXIT.claimRefused });
    expect(claimOutcome({ kind: "error", code: "unauthenticated", message: "no" })).toMatchObject({ code: EXIT.sessionInvalid });
    expect(claimOutcome({ kind: "unreachable", why: "ENOENT" })).toMatchObject({ code: EXIT.brokerUnreachable });
  });
  it("a poll: a dead capability or claim stops the runner at once (22), whatever the count", () => {
    for (const code of ["unauthenticated", "claim-revoked", "not-claimed"]) {
      expect(pollStep(0, { kind: "error", code, message: "m" }, 30), code).toEqual({ failed: 0, stop: { code: EXIT.sessionInvalid, why: `message.read: ${code}: m` } });
    }
  });
  it("a poll: failures count, an answer resets the count, and `retries` in a row stop the runner (23)", () => {
    let failed = 0;
    const down = { kind: "unreachable", why: "ECONNREFUSED" } as const;
    for (let i = 1; i < 3; i++) {
      const s = pollStep(failed, down, 3);
      expect(s, `poll ${i}`).toEqual({ failed: i, stop: null });
      failed = s.failed;
    }
    expect(pollStep(failed, { kind: "ok", result: [] }, 3)).toEqual({ failed: 0, stop: null });
    expect(pollStep(2, down, 3).stop).toEqual({ code: EXIT.brokerUnreachable, why: expect.stringContaining("failed 3 polls in a row") });
    expect(pollStep(2, { kind: "error", code: "internal", message: "boom" }, 3).stop?.code).toBe(EXIT.brokerUnreachable);
  });
  it("an incoming RESULT is never answered, so two sessions cannot loop replying to each other", () => {
    expect(messageAction({ id: "1", from: "a", kind: "result", body: "x" }).kind).toBe("ignore");
    expect(messageAction({ id: "1", from: "a", kind: "message", body: "x" }).kind).toBe("turn");
  });
});

describe("the tool socket: a typed tool call", () => {
  const routes = new Map<string, ToolRoute>([["send_message", { broker: "message.send" }], ["launch_role", { launchSocket: true }]]);
  const req = (tool: unknown, args: unknown = { to: "x" }) => ({ id: 7, tool, args });
  it("a tool that tools.json does not list is refused, and nothing is forwarded", () => {
    for (const tool of ["message.send", "role.claim", "__proto__", "constructor", "toString", ""]) {
      expect(decideToolCall(routes, req(tool), "/run/launch.sock"), tool).toEqual({ kind: "answer", id: 7, error: `refused: ${tool} is not one of this session's typed tools` });
    }
  });
  it("the launch tool without a launch socket is refused; with one it goes to the launch socket only", () => {
    expect(decideToolCall(routes, req("launch_role"), null)).toEqual({ kind: "answer", id: 7, error: "refused: this role may not launch" });
    expect(decideToolCall(routes, req("launch_role"), "/run/launch.sock")).toMatchObject({ kind: "forward", socket: "launch", verb: "launch" });
  });
  it("the verb comes from tools.json, never from the caller, and bad args are refused", () => {
    expect(decideToolCall(routes, { id: 1, tool: "send_message", args: { verb: "role.claim" } }, null)).toEqual({ kind: "forward", id: 1, socket: "broker", verb: "message.send", args: { verb: "role.claim" } });
    for (const args of [null, [], "x", 3]) expect(decideToolCall(routes, req("send_message", args), null).kind, JSON.stringify(args)).toBe("answer");
    expect(decideToolCall(routes, req(3), null)).toEqual({ kind: "answer", id: 7, error: "bad request: tool is not a string" });
  });
  it("tools.json and request lines that are not what planBundle writes are refused with a reason", () => {
    expect(parseToolRoutes("{")).toEqual({ problem: "tools.json is not JSON" });
    expect(parseToolRoutes('{"tools": [{"name": "x", "via": {}}]}')).toEqual({ problem: "x: no broker verb or launch socket" });
    expect(parseToolLine("[]")).toEqual({ bad: "bad request: not a JSON object" });
    expect(toolAnswer(1, { kind: "unreachable", why: "ENOENT" })).toContain("the call was not made");
  });
});

describe("session.json and the capability line", () => {
  it("a bad session.json names its first bad field", () => {
    const cases: Array<[string, string]> = [
      ["nope", "(file)"],
      ["[]", "(file)"],
      ['{"version": 2}', "version"],
      ['{"version": 1, "business": ""}', "business"],
    ];
    for (const [text, field] of cases) {
      const p = parseSessionFile(text);
      expect(p.ok ? null : p.field, text).toBe(field);
    }
  });
  it("the capability arrives as {cap} on the first stdin line, nothing else", () => {
    expect(parseCapabilityLine('{"cap":"c-1"}')).toEqual({ ok: true, value: "c-1" });
    for (const line of ["", "c-1", '{"cap": ""}', '{"capability": "c-1"}']) expect(parseCapabilityLine(line).ok, line).toBe(false);
  });
});

describe("planSession: session.json per example instance", () => {
  const facts = HOST_LAYOUTS["merged-usr"]!.facts;
  const fs = memoryView({});
  for (const c of loadCases().filter((x) => x.refuses === undefined)) {
    it(`${c.name}: ${c.why}`, async () => {
      const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
      if (d.kind !== "launch") throw new Error(`${c.name}: expected a launch, got ${d.code}`);
      const runDir = c.facts.runDir;
      const p = planSession({
        plan: d.plan, instance: c.instance, facts, fs, repo: FIXTURE_REPO, runDir,
        brokerSocket: "/srv/mosaic-data/broker.sock", launchSocket: "/srv/mosaic-data/launch.sock",
        runnerFiles: [`${FIXTURE_REPO}/src/core/runner/decisions.ts`], packages: [`${FIXTURE_REPO}/node_modules/@modelcontextprotocol/sdk`],
        adapter: { kind: "harness" }, hostEnv: c.env,
      });
      const sf = p.sessionFile;
      // Invariants beside the golden: a careless goldens:update cannot bless these away.
      expect(parseSessionFile(JSON.stringify(sf)).ok, "the runner accepts what the launcher writes").toBe(true);
      const mayLaunch = heldActions(c.instance.actions).includes("launch");
      expect(sf.launchSocket, "the launch socket only for a role holding the launch action").toBe(mayLaunch ? "/srv/mosaic-data/launch.sock" : null);
      expect(p.spec.mayLaunch, "the sandbox binds the launch socket only for that role").toBe(mayLaunch);
      expect(p.spec.runner, "the runner is the checkout's").toBe(`${FIXTURE_REPO}/${RUNNER_ENTRY}`);
      expect(p.spec.runnerFiles, "the runner's entry is among the bound files").toContain(p.spec.runner);
      expect([sf.workspace, sf.runDir, sf.run], "session.json is this instance's").toEqual([c.instance.workspace, runDir, c.instance.run]);
      expect(sf.model === null || (sf.model.port === MODEL_PORT && sf.model.socket === `${runDir}/model.sock`), "the model socket is the run's own").toBe(true);
      expect(sf.adapter.env.HOME, "HOME is the run's own").toBe(`${runDir}/home`);
      const founder = new Set(FOUNDER_ENV.map((e) => e.name));
      for (const env of [p.env, sf.adapter.env]) for (const k of Object.keys(env)) expect(founder.has(k), `${k}: a founder variable`).toBe(false);
      expect(p.argv.at(-1), "bwrap runs the runner on the run directory").toBe(runDir);
      const body = normalise(jsonBody(sf), { "<run>": runDir, "<ws>": c.instance.workspace, "<data>": "/srv/mosaic-data", "<repo>": FIXTURE_REPO, "<stand-in>": STAND_IN });
      await matchGolden("session/session-file", c.name, "jsonc", `session.json for ${c.name}: ${c.why}`, body);
      // bwrap's environment, which the runner and every process it starts inherit: no credential, ever.
      for (const k of credentialVariableNames()) expect(p.env[k], `${k} in the sandbox's environment`).toBeUndefined();
      const credential = new Set(credentialVariableNames());
      await matchGolden("session/session-env", c.name, "txt", `the sandbox's environment (bwrap's, so the runner's) for ${c.name}`,
        ["variable | value", ...Object.keys(p.env).sort().map((k) => `${k} | ${credential.has(k) ? "<set>" : p.env[k] === STAND_IN ? "<stand-in>" : p.env[k]}`)].join("\n"));
    });
  }
});
