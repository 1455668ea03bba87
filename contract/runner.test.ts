// The runner's decisions and planSession(), as pure functions: each safety line in src/core/runner
// and src/core/session/plan-session.ts has a focused assertion here, and session.json per example
// instance is a golden with its invariants beside it. live/runtime.test.ts proves the same lines
// by effect, through the real runner in a real sandbox.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  EXIT,
  claimOutcome,
  judgeTurn,
  messageAction,
  pollStep,
  replyText,
  type TurnRun,
} from "../src/core/runner/decisions.ts";
import { parseCapabilityLine, parseSessionFile, type SessionFile } from "../src/core/runner/session-file.ts";
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
import { MODEL_PORT, RUNNER_ENTRY, planSession } from "../src/core/session/plan-session.ts";
import {
  BROKER_LINE_BYTES,
  TOOL_SOCKET_BOUNDS,
  TURN_BOUNDS,
  planRunnerBounds,
  turnEndKill,
} from "../src/core/runner/bounds.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { heldActions } from "../src/core/tools/catalog.ts";
import { FOUNDER_ENV } from "../src/core/session/env.ts";
import { credentialVariableNames } from "../src/core/session/credentials.ts";
import { normalise } from "../src/conformance/golden/golden.ts";
import { jsonBody, matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { HOST_LAYOUTS } from "../src/conformance/worlds/host-fixtures.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import { FIXTURE_REPO, STAND_IN, loadCases } from "./support/launch-cases.ts";

const ok = (over: Partial<TurnRun> = {}): TurnRun => ({
  code: 0,
  signal: null,
  timedOut: false,
  stdout: "done\n",
  marker: true,
  overCap: null,
  ...over,
});
/** Pi's JSON mode, cut to the lines judgeTurn reads: the last agent_end and its last assistant message. */
const PI_STREAM = [
  JSON.stringify({ type: "agent_start" }),
  JSON.stringify({
    type: "agent_end",
    messages: [
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", stopReason: "stop", content: [{ type: "text", text: "done" }] },
    ],
  }),
  "",
].join("\n");
const PI_END = { kind: "marker", file: "/run/x/turn-end" } as unknown as SessionFile["turnEnd"];
const CLAUDE_END = { kind: "result-line" } as unknown as SessionFile["turnEnd"];

describe("judgeTurn: what counts as a finished turn (seed 000)", () => {
  it("Pi: exit 0 without the agent_end marker is a failed turn", () => {
    expect(judgeTurn(PI_END, ok({ marker: false }), 900)).toEqual({
      kind: "failed",
      why: expect.stringContaining("agent_end marker"),
    });
    expect(judgeTurn(PI_END, ok({ stdout: PI_STREAM }), 900)).toEqual({ kind: "ok", reply: "done" });
  });
  it("Pi: the reply is the last assistant message of agent_end in its JSON stream; no agent_end, or an error stop, fails", () => {
    expect(judgeTurn(PI_END, ok(), 900), "text mode's stdout is no JSON stream").toEqual({
      kind: "failed",
      why: "Pi's JSON stream has no agent_end event",
    });
    const end = (last: unknown) => ok({ stdout: `${JSON.stringify({ type: "agent_end", messages: [last] })}\n` });
    expect(judgeTurn(PI_END, end({ role: "user", content: [] }), 900)).toEqual({
      kind: "failed",
      why: "Pi's agent_end event ends with no assistant message",
    });
    expect(
      judgeTurn(PI_END, end({ role: "assistant", stopReason: "error", errorMessage: "429", content: [] }), 900),
      "print mode exits 1 on this; JSON mode exits 0, so the runner fails it",
    ).toEqual({ kind: "failed", why: "Pi's last message stopped on error: 429" });
    expect(
      judgeTurn(
        PI_END,
        end({
          role: "assistant",
          stopReason: "stop",
          content: [
            { type: "text", text: "a" },
            { type: "thinking", thinking: "x" },
            { type: "text", text: "b" },
          ],
        }),
        900,
      ),
      "each text block on its line, as print mode writes them",
    ).toEqual({ kind: "ok", reply: "a\nb" });
  });
  it("Claude Code: exit 0 with no result line, an empty one or an error one is a failed turn", () => {
    const line = (o: object) => JSON.stringify(o);
    for (const stdout of [
      "",
      "not json\n",
      line({ type: "result", result: "  " }),
      line({ type: "result", is_error: true, result: "x" }),
      line({ type: "result", result: 3 }),
    ]) {
      expect(judgeTurn(CLAUDE_END, ok({ stdout }), 900).kind, JSON.stringify(stdout)).toBe("failed");
    }
    const two = [
      line({ type: "system" }),
      line({ type: "result", result: "first" }),
      line({ type: "result", result: "last" }),
    ].join("\n");
    expect(judgeTurn(CLAUDE_END, ok({ stdout: two }), 900)).toEqual({ kind: "ok", reply: "last" });
  });
  it("a timeout, a signal and a non-zero exit fail whatever the harness printed, and the reply says why", () => {
    expect(judgeTurn(PI_END, ok({ timedOut: true }), 7)).toEqual({
      kind: "failed",
      why: expect.stringContaining("7 s wall clock"),
    });
    expect(judgeTurn(PI_END, ok({ signal: "SIGKILL", code: null }), 900)).toEqual({
      kind: "failed",
      why: "the turn was killed by SIGKILL",
    });
    expect(judgeTurn(PI_END, ok({ code: 1 }), 900)).toEqual({ kind: "failed", why: "the harness exited 1" });
    expect(replyText({ kind: "failed", why: "x" })).toBe("The turn failed: x");
  });
});

describe("the runner's bounds (bounds.ts): every tool-socket client and every turn is bounded", () => {
  const MiB = 1024 * 1024;
  it("each bound is a row with its why; what the runner forwards or replies fits the broker's line", () => {
    for (const [name, row] of [...Object.entries(TOOL_SOCKET_BOUNDS), ...Object.entries(TURN_BOUNDS)]) {
      expect(Number.isInteger(row.value) && row.value > 0, `${name}: a positive integer`).toBe(true);
      expect(row.why.length, `${name}: says why`).toBeGreaterThan(40);
    }
    expect(TOOL_SOCKET_BOUNDS.lineBytes.value, "a tool line is no longer than the broker's").toBeLessThanOrEqual(
      BROKER_LINE_BYTES,
    );
    // {id, cap (64 hex), verb} around the args: well under 4 KiB.
    expect(
      TOOL_SOCKET_BOUNDS.argsBytes.value + 4096,
      "forwarded args plus the envelope fit the broker's line",
    ).toBeLessThanOrEqual(BROKER_LINE_BYTES);
    expect(
      TURN_BOUNDS.stdoutReply.value + 4096,
      "a reply read from stdout plus its envelope fits the broker's line",
    ).toBeLessThanOrEqual(BROKER_LINE_BYTES);
    expect(
      TURN_BOUNDS.stdoutStream.value,
      "Claude Code's stream stays far below V8's 512 MiB string",
    ).toBeLessThanOrEqual(64 * MiB);
    expect(
      TURN_BOUNDS.stderrFiles.value * TURN_BOUNDS.stderr.value,
      "what the runner leaves in turns/ is bounded whatever the number of turns",
    ).toBeLessThanOrEqual(128 * MiB);
  });
  it("planned per harness: stdout is the reply for the fake adapter, a stream for Pi and Claude Code; leftovers killed for all", () => {
    for (const kind of ["marker", "exit", "result-line"] as const) {
      const b = planRunnerBounds({ kind });
      expect(b.turn.stdoutBytes, kind).toBe(
        kind === "exit" ? TURN_BOUNDS.stdoutReply.value : TURN_BOUNDS.stdoutStream.value,
      );
      expect(b.turn.stderrBytes, kind).toBe(TURN_BOUNDS.stderr.value);
      expect(b.turn.stderrFiles, `${kind}: turns/ keeps the newest records only`).toBe(TURN_BOUNDS.stderrFiles.value);
      expect(b.turn.killNamespace, `${kind}: everything a turn started is killed at its end`).toBe(true);
      expect(b.toolSocket.depth, kind).toBe(TOOL_SOCKET_BOUNDS.depth.value);
    }
  });
  it("kill(-1) only for pid 1 of its own namespace with the plan's flag: a runner anywhere else kills its turn's group only", () => {
    expect(turnEndKill(1, true)).toBe("namespace");
    expect(turnEndKill(1, false), "the flag off (a positive control) kills the group only").toBe("group");
    for (const pid of [2, 4242, 65535])
      expect(turnEndKill(pid, true), `pid ${pid}: never signal the host's processes`).toBe("group");
  });
  it("nesting is counted on the raw bytes, iteratively: brackets in strings and escapes do not count", () => {
    const b = (t: string) => new TextEncoder().encode(t);
    expect(nestedDeeperThan(b("[[[1]]]"), 3)).toBe(false);
    expect(nestedDeeperThan(b("[[[[1]]]]"), 3)).toBe(true);
    expect(nestedDeeperThan(b('{"a":{"b":[{}]}}'), 3)).toBe(true);
    expect(nestedDeeperThan(b(`["${"[".repeat(100)}"]`), 3), "brackets inside a string").toBe(false);
    expect(nestedDeeperThan(b(`["\\"${"[".repeat(100)}"]`), 3), "an escaped quote does not end the string").toBe(false);
    expect(nestedDeeperThan(b(`["\\\\", ${"[".repeat(4)}`), 3), "an escaped backslash does").toBe(true);
    expect(nestedDeeperThan(b("[".repeat(1_000_000)), 32), "a million deep costs a loop, not the stack").toBe(true);
  });
  it("a tool line: too deep is refused before the parse, args too large after it, each naming its bound", () => {
    const bounds = planRunnerBounds({ kind: "exit" }).toolSocket;
    const line = (t: string) => new TextEncoder().encode(t);
    const deep = `{"id":3,"tool":"send_message","args":{"x":${"[".repeat(20_000)}${"]".repeat(20_000)}}}`;
    let got: unknown;
    try {
      got = readToolLine(line(deep), bounds);
    } catch (e) {
      got = `threw: ${String(e)}`;
    }
    expect(got, "the finding's 20,000-deep args are refused by the depth bound, not parsed and re-encoded").toEqual({
      bad: boundRefusal("depth", bounds),
      id: null,
    });
    expect(boundRefusal("depth", bounds)).toBe(
      "bad request: JSON nested deeper than 32 (the tool socket's depth bound)",
    );
    const big = JSON.stringify({ id: 4, tool: "send_message", args: { body: "b".repeat(bounds.argsBytes) } });
    expect(readToolLine(line(big), bounds), "args past the bound").toEqual({
      bad: boundRefusal("argsBytes", bounds),
      id: 4,
    });
    expect(readToolLine(line('{"id":5,"tool":"send_message","args":{"to":"pm"}}'), bounds)).toEqual({
      id: 5,
      tool: "send_message",
      args: { to: "pm" },
    });
    expect(readToolLine(line("nope"), bounds)).toEqual({ bad: "bad request: not JSON", id: null });
  });
  it("a turn past an output cap fails, naming the stream and the cap, whatever it exited with", () => {
    for (const stream of ["stdout", "stderr"] as const) {
      expect(judgeTurn(PI_END, ok({ overCap: { stream, cap: 1024 } }), 900)).toEqual({
        kind: "failed",
        why: `its ${stream} passed the 1024-byte cap (session.json bounds.turn.${stream}Bytes); the runner stopped reading it and killed the turn's processes`,
      });
    }
  });
});

describe("the broker's answers", () => {
  it("claim: ok claims; refused is 21; a dead capability is 22; no answer is 23", () => {
    expect(claimOutcome({ kind: "ok", result: {} })).toEqual({ kind: "claimed" });
    expect(claimOutcome({ kind: "error", code: "refused", message: "no" })).toMatchObject({ code: EXIT.claimRefused });
    expect(claimOutcome({ kind: "error", code: "unauthenticated", message: "no" })).toMatchObject({
      code: EXIT.sessionInvalid,
    });
    expect(claimOutcome({ kind: "unreachable", why: "ENOENT" })).toMatchObject({ code: EXIT.brokerUnreachable });
  });
  it("a poll: a dead capability or claim stops the runner at once (22), whatever the count", () => {
    for (const code of ["unauthenticated", "claim-revoked", "not-claimed"]) {
      expect(pollStep(0, { kind: "error", code, message: "m" }, 30), code).toEqual({
        failed: 0,
        stop: { code: EXIT.sessionInvalid, why: `message.read: ${code}: m` },
      });
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
    expect(pollStep(2, down, 3).stop).toEqual({
      code: EXIT.brokerUnreachable,
      why: expect.stringContaining("failed 3 polls in a row"),
    });
    expect(pollStep(2, { kind: "error", code: "internal", message: "boom" }, 3).stop?.code).toBe(
      EXIT.brokerUnreachable,
    );
  });
  it("an incoming RESULT is never answered, so two sessions cannot loop replying to each other", () => {
    expect(messageAction({ id: "1", from: "a", kind: "result", body: "x" }).kind).toBe("ignore");
    expect(messageAction({ id: "1", from: "a", kind: "message", body: "x" }).kind).toBe("turn");
  });
});

describe("the tool socket: a typed tool call", () => {
  const routes = new Map<string, ToolRoute>([
    ["send_message", { broker: "message.send" }],
    ["launch_role", { launchSocket: true }],
  ]);
  const req = (tool: unknown, args: unknown = { to: "x" }) => ({ id: 7, tool, args });
  it("a tool that tools.json does not list is refused, and nothing is forwarded", () => {
    for (const tool of ["message.send", "role.claim", "__proto__", "constructor", "toString", ""]) {
      expect(decideToolCall(routes, req(tool), "/run/launch.sock"), tool).toEqual({
        kind: "answer",
        id: 7,
        error: `refused: ${tool} is not one of this session's typed tools`,
      });
    }
  });
  it("the launch tool without a launch socket is refused; with one it goes to the launch socket only", () => {
    expect(decideToolCall(routes, req("launch_role"), null)).toEqual({
      kind: "answer",
      id: 7,
      error: "refused: this role may not launch",
    });
    expect(decideToolCall(routes, req("launch_role"), "/run/launch.sock")).toMatchObject({
      kind: "forward",
      socket: "launch",
      verb: "launch",
    });
  });
  it("the verb comes from tools.json, never from the caller, and bad args are refused", () => {
    expect(decideToolCall(routes, { id: 1, tool: "send_message", args: { verb: "role.claim" } }, null)).toEqual({
      kind: "forward",
      id: 1,
      socket: "broker",
      verb: "message.send",
      args: { verb: "role.claim" },
    });
    for (const args of [null, [], "x", 3])
      expect(decideToolCall(routes, req("send_message", args), null).kind, JSON.stringify(args)).toBe("answer");
    expect(decideToolCall(routes, req(3), null)).toEqual({
      kind: "answer",
      id: 7,
      error: "bad request: tool is not a string",
    });
  });
  it("tools.json and request lines that are not what planBundle writes are refused with a reason", () => {
    expect(parseToolRoutes("{")).toEqual({ problem: "tools.json is not JSON" });
    expect(parseToolRoutes('{"tools": [{"name": "x", "via": {}}]}')).toEqual({
      problem: "x: no broker verb or launch socket",
    });
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
    // The pi-coder golden with its placeholders made absolute paths again.
    const golden = readFileSync(join(import.meta.dirname, "../goldens/session/session-file/pi-coder.jsonc"), "utf8");
    const good = JSON.parse(
      golden.replace(/^\/\/.*\n/gm, "").replace(/"<[a-z-]+>/g, (m) => `"/${m.slice(2, -1)}`),
    ) as Record<string, unknown>;
    expect(parseSessionFile(JSON.stringify(good)).ok, "the golden session.json parses").toBe(true);
    const bounds = good.bounds as { toolSocket: Record<string, unknown>; turn: Record<string, unknown> };
    cases.push(
      [JSON.stringify({ ...good, tripwire: undefined }), "tripwire"],
      [JSON.stringify({ ...good, tripwire: { stream: "text", typedTools: [] } }), "tripwire"],
      [JSON.stringify({ ...good, tripwire: { stream: "pi-json", typedTools: [""] } }), "tripwire"],
      [JSON.stringify({ ...good, bounds: undefined }), "bounds"],
      [
        JSON.stringify({ ...good, bounds: { ...bounds, toolSocket: { ...bounds.toolSocket, depth: 0 } } }),
        "bounds.toolSocket.depth",
      ],
      [
        JSON.stringify({ ...good, bounds: { ...bounds, turn: { ...bounds.turn, stdoutBytes: "1" } } }),
        "bounds.turn.stdoutBytes",
      ],
      [
        JSON.stringify({ ...good, bounds: { ...bounds, turn: { ...bounds.turn, stderrFiles: 0 } } }),
        "bounds.turn.stderrFiles",
      ],
      [
        JSON.stringify({ ...good, bounds: { ...bounds, turn: { ...bounds.turn, killNamespace: "yes" } } }),
        "bounds.turn.killNamespace",
      ],
    );
    for (const [text, field] of cases) {
      const p = parseSessionFile(text);
      expect(p.ok ? null : p.field, text).toBe(field);
    }
  });
  it("the capability arrives as {cap} on the first stdin line, nothing else", () => {
    expect(parseCapabilityLine('{"cap":"c-1"}')).toEqual({ ok: true, value: "c-1" });
    for (const line of ["", "c-1", '{"cap": ""}', '{"capability": "c-1"}'])
      expect(parseCapabilityLine(line).ok, line).toBe(false);
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
        plan: d.plan,
        instance: c.instance,
        facts,
        fs,
        repo: FIXTURE_REPO,
        runDir,
        brokerSocket: "/srv/mosaic-data/broker.sock",
        launchSocket: "/srv/mosaic-data/launch.sock",
        runnerFiles: [`${FIXTURE_REPO}/src/core/runner/decisions.ts`],
        packages: [`${FIXTURE_REPO}/node_modules/@modelcontextprotocol/sdk`],
        adapter: { kind: "harness" },
        hostEnv: c.env,
        stateDir: `${FIXTURE_REPO}/.scratch/state`,
        launchedAt: { hostPid: 4242, now: 1_700_000_000_000 },
      });
      const sf = p.sessionFile;
      // Invariants beside the golden: a careless goldens:update cannot bless these away.
      expect(parseSessionFile(JSON.stringify(sf)).ok, "the runner accepts what the launcher writes").toBe(true);
      const mayLaunch = heldActions(c.instance.actions).includes("launch");
      expect(sf.launchSocket, "the launch socket only for a role holding the launch action").toBe(
        mayLaunch ? "/srv/mosaic-data/launch.sock" : null,
      );
      expect(p.spec.mayLaunch, "the sandbox binds the launch socket only for that role").toBe(mayLaunch);
      expect(sf.tripwire, "every real harness's session has its tripwire on, reading its own stream").toEqual({
        stream: d.plan.harness === "pi" ? "pi-json" : "claude-stream-json",
        typedTools: d.plan.tripwire.typedTools,
      });
      expect(p.spec.runner, "the runner is the checkout's").toBe(`${FIXTURE_REPO}/${RUNNER_ENTRY}`);
      expect(p.spec.runnerFiles, "the runner's entry is among the bound files").toContain(p.spec.runner);
      expect([sf.workspace, sf.runDir, sf.run], "session.json is this instance's").toEqual([
        c.instance.workspace,
        runDir,
        c.instance.run,
      ]);
      expect(
        sf.model === null || (sf.model.port === MODEL_PORT && sf.model.socket === `${runDir}/sock/model.sock`),
        "the model socket is the run's own, in the read-only sock/",
      ).toBe(true);
      expect(
        sf.toolSocket,
        "the tool socket is the run's own, in the read-only sock/, passed to the runner listening on descriptor 4",
      ).toEqual({ path: `${runDir}/sock/tools.sock`, fd: 4 });
      expect(
        p.binds.some((b) => b.inside === `${runDir}/sock` && b.mode === "ro"),
        "sock/ is bound read-only",
      ).toBe(true);
      expect(sf.adapter.env.HOME, "HOME is the run's own").toBe(`${runDir}/home`);
      const founder = new Set(FOUNDER_ENV.map((e) => e.name));
      for (const env of [p.env, sf.adapter.env])
        for (const k of Object.keys(env)) expect(founder.has(k), `${k}: a founder variable`).toBe(false);
      expect(p.argv.at(-1), "bwrap runs the runner on the run directory").toBe(runDir);
      expect(sf.bounds.turn.killNamespace, "every turn's leftovers are killed at its end").toBe(true);
      expect(
        sf.bounds.turn.stdoutBytes,
        "a turn's stdout is capped well below V8's 512 MiB string",
      ).toBeLessThanOrEqual(64 * 1024 * 1024);
      expect(sf.bounds.turn.stderrBytes, "a turn's stderr is capped").toBeLessThanOrEqual(8 * 1024 * 1024);
      expect(sf.bounds.turn.stderrFiles, "turns/ keeps a bounded number of records").toBe(16);
      expect(sf.bounds.toolSocket, "the tool socket's bounds are the table's").toEqual(
        planRunnerBounds({ kind: "exit" }).toolSocket,
      );
      const body = normalise(jsonBody(sf), {
        "<run>": runDir,
        "<ws>": c.instance.workspace,
        "<data>": "/srv/mosaic-data",
        "<repo>": FIXTURE_REPO,
        "<stand-in>": STAND_IN,
      });
      await matchGolden("session/session-file", c.name, "jsonc", `session.json for ${c.name}: ${c.why}`, body);
      // bwrap's environment, which the runner and every process it starts inherit: no credential, ever.
      for (const k of credentialVariableNames()) expect(p.env[k], `${k} in the sandbox's environment`).toBeUndefined();
      const credential = new Set(credentialVariableNames());
      await matchGolden(
        "session/session-env",
        c.name,
        "txt",
        `the sandbox's environment (bwrap's, so the runner's) for ${c.name}`,
        [
          "variable | value",
          ...Object.keys(p.env)
            .sort()
            .map((k) => `${k} | ${credential.has(k) ? "<set>" : p.env[k] === STAND_IN ? "<stand-in>" : p.env[k]}`),
        ].join("\n"),
      );
    });
  }
});
