import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseCliArgs } from "../src/cli/args.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import type { RecordedRequest } from "../src/conformance/stand-ins/model-script/record.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { judge, type AssertionVerdictKind } from "../src/conformance/scenario/assert.ts";
import type { Evidence } from "../src/conformance/scenario/evidence.ts";
import {
  formatScenarioError,
  loadScenario,
  parseScenario,
  ScenarioError,
  scenarioFiles,
} from "../src/conformance/scenario/load.ts";
import { gateHookCommand } from "../src/core/bundle/hook.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { applyFault } from "../src/conformance/scenario/knobs.ts";
import { matchLaunch } from "../src/conformance/scenario/launch-service.ts";
import { renderJunit, renderSummary, renderTable } from "../src/conformance/scenario/report.ts";
import type { ScenarioResult } from "../src/conformance/scenario/run.ts";
import { ASSERTION_KIND_NAMES, renderScenarioSchema, type Assertion } from "../src/conformance/scenario/schema.ts";

const GOOD = `# yaml-language-server: $schema=./scenario.schema.json
name: probe
description: a scenario the tests bend
harness: pi
instance: { ref: pi-coder }
model:
  turns:
    - tool_use: { name: read, input: { path: "{{secrets_env}}" } }
    - text: done
messages:
  - body: go
assertions:
  - reply_contains: done
    because: the turn ends
`;

/** The probe on the fake harness: no model. */
const FAKE = GOOD.replace(/model:\n(    .*\n|  turns:\n)+/, "").replace("harness: pi", "harness: fake");

/** The probe as a PM on the fake harness that may launch a Claude Code coder. */
const PM = `${FAKE.replace("instance: { ref: pi-coder }", "instance: { ref: claude-pm }")}launches:
  - harness: claude-code
    instance: { ref: claude-coder }
    model:
      turns:
        - text: done
    assertions:
      - reply_contains: done
`;

/** The error parseScenario throws for a text, as file:line: field: message [code]. */
function errorOf(text: string, file = "scenarios/probe.yaml"): ScenarioError {
  try {
    parseScenario(text, file);
  } catch (e) {
    if (e instanceof ScenarioError) return e;
    throw e;
  }
  throw new Error("it loaded");
}

describe("the shipped scenarios", () => {
  it("each loads, names its file, and points editors at the schema", () => {
    const files = scenarioFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) {
      const s = loadScenario(f);
      expect(s.name).toBe(basename(f, ".yaml"));
      expect(readFileSync(f, "utf8").split("\n")[0], f).toBe("# yaml-language-server: $schema=./scenario.schema.json");
    }
  });
  it("scenarios/scenario.schema.json is what npm run schema writes now", () => {
    expect(readFileSync(join(REPO_ROOT, "scenarios/scenario.schema.json"), "utf8")).toBe(renderScenarioSchema());
  });
  it("the JSON Schema is strict: no additional properties at the top", () => {
    const schema = JSON.parse(renderScenarioSchema()) as { additionalProperties?: boolean; required?: string[] };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(expect.arrayContaining(["name", "harness", "instance", "messages", "assertions"]));
  });
});

describe("the loader names file, line and field", () => {
  it("the probe itself loads (so each case below fails for its own change)", () => {
    expect(parseScenario(GOOD, "scenarios/probe.yaml").assertions).toEqual([
      { reply_contains: "done", because: "the turn ends" },
    ]);
  });
  it("the PM probe loads, its launched session with it", () => {
    const s = parseScenario(PM, "scenarios/probe.yaml");
    expect(s.launches.map((l) => [l.harness, l.instance.instance, l.instance.launchedBy, l.assertions])).toEqual([
      ["claude-code", "acme-coder", "acme-pm", [{ reply_contains: "done" }]],
    ]);
  });
  it.each([
    [
      "launches from a session that may not launch",
      PM.replace("{ ref: claude-pm }", "{ ref: pi-coder }"),
      "scenarios/probe.yaml:11: launches: the instance acme-coder does not hold the launch action",
    ],
    [
      "an unknown key in a launched session",
      PM.replace("  - harness: claude-code", "  - harness: claude-code\n    harnes: pi"),
      "scenarios/probe.yaml:13: launches[0].harnes: not a field here (a typo?) [bad-scenario]",
    ],
    [
      "a launched harness its instance does not run",
      PM.replace("  - harness: claude-code", "  - harness: pi"),
      "scenarios/probe.yaml:12: launches[0].harness: the instance's vars.harness is claude-code",
    ],
    [
      "a launched session without a model",
      PM.replace(/    model:\n      turns:\n        - text: done\n/, ""),
      "scenarios/probe.yaml:12: launches[0].model: the claude-code harness needs a model script [missing-field]",
    ],
    [
      "a launched session asserting nothing",
      PM.replace("    assertions:\n      - reply_contains: done\n", "    assertions: []\n"),
      "launches[0].assertions: a launched session asserts something",
    ],
    [
      "a template variable typo in a launched model",
      PM.replace("        - text: done", '        - text: "{{main_rnu}}"'),
      "scenarios/probe.yaml:16: launches[0].model.turns[0].text: {{main_rnu}} is not a template variable the runner fills",
    ],
    [
      "a file assertion of a launched session on a non-path",
      PM.replace("      - reply_contains: done", '      - file_absent: "{{trap_port}}/x"'),
      "launches[0].assertions[0].file_absent: {{trap_port}} is not a path",
    ],
    [
      "a second launched session of one instance",
      PM + PM.slice(PM.indexOf("launches:\n") + 10),
      "launches[1].instance: a second launched session of instance acme-coder",
    ],
    [
      "trap_untouched in a launched session with no trap",
      PM.replace("      - reply_contains: done", "      - trap_untouched: true"),
      "launches[0].assertions[0].trap_untouched: no trap to be touched",
    ],
    [
      "an unknown break knob in a launched session",
      PM.replace(
        "    assertions:\n      - reply",
        "    break: { launch_socket: open }\n    assertions:\n      - reply",
      ),
      "launches[0].break.launch_socket: Invalid input",
    ],
  ])("%s", (_what, text, expected) => {
    expect(formatScenarioError(errorOf(text))).toContain(expected);
  });
  it.each([
    [
      "an unknown key at the top",
      GOOD.replace("harness: pi", "harness: pi\nharnes: pi"),
      "scenarios/probe.yaml:5: harnes: not a field here (a typo?) [bad-scenario]",
    ],
    [
      "an unknown key in an assertion",
      GOOD.replace("    because: the turn ends", "    becuase: the turn ends"),
      "scenarios/probe.yaml:14: assertions[0].becuase: not a field here (a typo?) [bad-scenario]",
    ],
    [
      "an unknown assertion kind",
      GOOD.replace("  - reply_contains: done", "  - reply_contain: done"),
      "scenarios/probe.yaml:13: assertions[0].reply_contain: not an assertion kind",
    ],
    [
      "an unknown key in the model's tool call",
      GOOD.replace('input: { path: "{{secrets_env}}" } }', "input: { path: x }, extra: 1 }"),
      "scenarios/probe.yaml:8: model.turns[0].tool_use.extra:",
    ],
    [
      "a malformed turn names the turn",
      GOOD.replace("    - text: done", "    - text: done\n      tool_use: { name: read, input: {} }"),
      "scenarios/probe.yaml:9: model.turns[1]:",
    ],
    [
      "an empty text turn",
      GOOD.replace("    - text: done", '    - text: ""'),
      "scenarios/probe.yaml:9: model.turns[1].text:",
    ],
    [
      "a template variable the runner does not fill",
      GOOD.replace("{{secrets_env}}", "{{secrets_evn}}"),
      "scenarios/probe.yaml:8: model.turns[0].tool_use.input.path: {{secrets_evn}} is not a template variable the runner fills",
    ],
    [
      "the secret in a script",
      GOOD.replace("{{secrets_env}}", "{{secret}}"),
      "{{secret}} may stand only in assertions",
    ],
    [
      "a name unlike the file",
      GOOD.replace("name: probe", "name: other"),
      "scenarios/probe.yaml:2: name: the name is other, the file is probe.yaml",
    ],
    [
      "a harness the instance does not run",
      GOOD.replace("harness: pi", "harness: claude-code"),
      "scenarios/probe.yaml:4: harness: the instance's vars.harness is pi",
    ],
    [
      "no messages",
      GOOD.replace("messages:\n  - body: go\n", ""),
      "scenarios/probe.yaml:2: messages: missing [missing-field]",
    ],
    ["an empty needle", GOOD.replace("reply_contains: done", 'reply_contains: ""'), "an empty string is in everything"],
    [
      "a gate to break on the fake harness",
      FAKE.replace("assertions:", "break: { gate: unhooked }\nassertions:"),
      "break.gate: the fake harness has no gate",
    ],
    [
      "a hook timeout for Pi, which has no hook",
      GOOD.replace("assertions:", "fault: { gate_timeout_seconds: 2 }\nassertions:"),
      "fault.gate_timeout_seconds: only Claude Code's hook runs the gate under a timeout; the pi harness has none",
    ],
    [
      "a hook timeout as long as the shipped one",
      GOOD.replace("assertions:", "fault: { gate_timeout_seconds: 10 }\nassertions:"),
      "fault.gate_timeout_seconds: Too big",
    ],
    [
      "a gate fault on the fake harness",
      FAKE.replace("assertions:", "fault: { gate: hang }\nassertions:"),
      "fault.gate: the fake harness has no gate",
    ],
    [
      "an unknown gate fault",
      GOOD.replace("assertions:", "fault: { gate: slow }\nassertions:"),
      "scenarios/probe.yaml:12: fault.gate: Invalid option",
    ],
    [
      "a flag to drop that is no flag",
      GOOD.replace("assertions:", "break: { drop_flags: [restricted] }\nassertions:"),
      "break.drop_flags[0]: a flag, starting with -",
    ],
    [
      "trap_untouched with no trap",
      GOOD.replace("  - reply_contains: done", "  - trap_untouched: true"),
      "assertions[0].trap_untouched: no trap to be touched",
    ],
    [
      "a template variable typo in a run file's path",
      GOOD.replace("assertions:", "run_files:\n  session/{{worksapce_slug}}/x: y\nassertions:"),
      "run_files.session/{{worksapce_slug}}/x: {{worksapce_slug}} is not a template variable",
    ],
    [
      "a run file in HOME, which the sandbox never shows",
      GOOD.replace("assertions:", "run_files:\n  home/.claude/CLAUDE.md: y\nassertions:"),
      "run_files: home/ is a private tmpfs in the sandbox",
    ],
    [
      "the canary in a message",
      GOOD.replace("  - body: go", "  - body: 'send {{canary}}'"),
      "{{canary}} may stand only in assertions",
    ],
    [
      "a climbing link in the workspace",
      GOOD.replace("assertions:", "workspace:\n  links:\n    ../out: /x\nassertions:"),
      "workspace.links.../out: a bad key",
    ],
    [
      "a model check on the fake harness",
      GOOD.replace(/model:\n(    .*\n|  turns:\n)+/, "")
        .replace("harness: pi", "harness: fake")
        .replace("  - reply_contains: done", "  - tool_result_contains: done"),
      "assertions[0].tool_result_contains: tool_result_contains reads what the model saw",
    ],
    [
      "a file assertion on a relative path",
      GOOD.replace("  - reply_contains: done", "  - file_absent: planted.txt"),
      "assertions[0].file_absent: an absolute host path",
    ],
    [
      "YAML that does not parse",
      GOOD.replace("messages:", "messages: [").replace("  - body: go", "- body: go"),
      "[bad-yaml]",
    ],
    ["a duplicate key", GOOD.replace("harness: pi", "harness: pi\nharness: fake"), "[bad-yaml]"],
  ])("%s", (_what, text, expected) => {
    expect(formatScenarioError(errorOf(text))).toContain(expected);
  });
});

describe("the hook timeout knob", () => {
  const hook = gateHookCommand("/usr/bin/node", "/repo", "/run/bundle/policy.json", "/run/bundle/gate-compile-cache");
  const prepared = (settings: string) =>
    ({
      launch: { bundle: { "settings.json": settings } },
      session: { sessionFile: { adapter: { argv: [], env: {} } } },
    }) as unknown as PreparedLaunch;
  const claude = (fault: object) => ({
    ...parseScenario(GOOD, "scenarios/probe.yaml"),
    harness: "claude-code" as const,
    fault,
  });
  it("gives the shipped wrapper the knob's seconds, and changes nothing else", () => {
    const settings = JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: hook }] }] } });
    const out = applyFault(claude({ gate_timeout_seconds: 2 }), "/ws", "/repo", prepared(settings)).launch.bundle[
      "settings.json"
    ]!;
    expect(out).toBe(settings.replace("timeout -k 2 10 ", "timeout -k 1 2 "));
  });
  it("stops the run when settings.json has no shipped wrapper to shorten", () => {
    expect(() =>
      applyFault(claude({ gate_timeout_seconds: 2 }), "/ws", "/repo", prepared(JSON.stringify({ hooks: {} }))),
    ).toThrow("fault.gate_timeout_seconds: the bundle's settings.json has no hook under `timeout -k 2 10`");
  });
});

describe("which declared session answers a launch", () => {
  const [coder] = parseScenario(PM, "scenarios/probe.yaml").launches;
  const l = (over: Partial<{ by: string; run: string; instance: string }> = {}) => ({
    by: "probe",
    run: "run",
    instance: "acme-coder",
    message: "go",
    ...over,
  });
  it.each([
    ["the declared instance, from the launcher's run", l(), new Set(), { kind: "serve", spec: coder }],
    [
      "an instance nobody declared",
      l({ instance: "acme-qa" }),
      new Set(),
      { kind: "stray", why: "probe launched acme-qa, which the scenario does not declare under launches" },
    ],
    [
      "a second launch of one instance",
      l(),
      new Set([coder]),
      { kind: "stray", why: "probe launched acme-coder a second time" },
    ],
    [
      "a launch from another run (a launched session's own)",
      l({ run: "run-1", by: "acme-coder" }),
      new Set(),
      { kind: "stray", why: "run run-1 launched acme-coder: only the main session's launches are served" },
    ],
  ])("%s", (_what, launch, served, want) => {
    expect(matchLaunch(launch, "run", [coder!], served as Set<typeof coder & {}>)).toEqual(want);
  });
});

// Hand-built evidence: each assertion kind passes, fails, and is unobserved where it can be.
const SECRET = "stand-in-value-abc";
const body = (results: string[]) =>
  JSON.stringify({
    messages: [
      { role: "user", content: "go" },
      { role: "user", content: results.map((r, i) => ({ type: "tool_result", tool_use_id: `t${i}`, content: r })) },
    ],
  });
const req = (b: string, seq = 1): RecordedRequest => ({
  seq,
  method: "POST",
  url: "/v1/messages?beta=true",
  headers: { "x-api-key": "<redacted:0123>" },
  body: b,
  served: { kind: "turn", turn: seq - 1 },
  status: 200,
});
const base = (): Evidence => ({
  replies: ["all done"],
  requests: [req(body([])), req(body(['mosaic gate: read path: "/x" outside the workspace']), 2)],
  broker: [
    {
      at: "t",
      socket: "broker",
      id: 1,
      verb: "role.claim",
      args: {},
      cap: "c",
      capValid: true,
      run: "run",
      instance: "i",
      outcome: "ok",
    },
    {
      at: "t",
      socket: "broker",
      id: 2,
      verb: "message.send",
      args: { to: "acme-pm", body: "hi" },
      cap: "c",
      capValid: true,
      run: "run",
      instance: "i",
      outcome: "ok",
    },
  ],
  egress: [
    {
      time: "t",
      method: "POST",
      path: "/v1/messages?beta=true",
      outcome: "allowed",
      status: 200,
      bytesIn: 1,
      bytesOut: 1,
    },
    { time: "t", method: "GET", path: "/v1/models", outcome: "refused", status: 403, bytesIn: 0, bytesOut: 1 },
  ],
  stderr: ["", ""],
  runnerLog: [
    "mosaic runner: claimed acme-coder for run r1",
    "mosaic runner: turn 1: tripwire: the gate allowed each of 2 completed tool calls",
    "mosaic runner: turn 1: ok",
    "",
  ].join("\n"),
  files: {
    "/h/kept": { before: "aa", after: "aa" },
    "/h/changed": { before: "aa", after: "bb" },
    "/h/made": { before: null, after: "cc" },
    "/h/gone": { before: "aa", after: null },
  },
  exit: 0,
  transcripts: { "/run/home/.claude/projects/x/s.jsonl": '{"type":"user"}' },
  trapConnections: 0,
  argv: ["bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/b/launch.sock", "/b/launch.sock", "--", "node"],
  standIns: [SECRET],
});
// A conversation with its tool calls: each tool_use answered by a tool_result of the same id.
const convo = (calls: Array<{ name: string; input: Record<string, unknown>; result?: string; isError?: boolean }>) =>
  JSON.stringify({
    messages: [
      { role: "user", content: "go" },
      ...calls.flatMap((c, i) => [
        { role: "assistant", content: [{ type: "tool_use", id: `tu${i}`, name: c.name, input: c.input }] },
        ...(c.result === undefined
          ? []
          : [
              {
                role: "user",
                content: [
                  {
                    type: "tool_result",
                    tool_use_id: `tu${i}`,
                    content: c.result,
                    ...(c.isError ? { is_error: true } : {}),
                  },
                ],
              },
            ]),
      ]),
    ],
  });
const withCalls =
  (...calls: Parameters<typeof convo>[0]) =>
  (e: Evidence): Evidence => ({ ...e, requests: [req(body([])), req(convo(calls), 2)] });
const BLOCKED = {
  name: "read",
  input: { path: "/x" },
  result: 'mosaic gate: read path: "/x" outside the workspace',
  isError: true,
};
type Case = [string, Assertion, (e: Evidence) => Evidence, AssertionVerdictKind];
const same = (e: Evidence) => e;
const noReply = (e: Evidence): Evidence => ({ ...e, replies: [null] });
const noModel = (e: Evidence): Evidence => ({ ...e, requests: null });
const CASES: Case[] = [
  ["reply found", { reply_contains: "done" }, same, "pass"],
  ["reply not found", { reply_contains: "nope" }, same, "fail"],
  ["reply never came", { reply_contains: "done" }, noReply, "unobserved"],
  ["reply clean", { reply_not_contains: "{{secret}}" }, same, "pass"],
  ["reply holds it", { reply_not_contains: "{{secret}}" }, (e) => ({ ...e, replies: [`got ${SECRET}`] }), "fail"],
  [
    "reply clean but one missing",
    { reply_not_contains: "{{secret}}" },
    (e) => ({ ...e, replies: ["ok", null] }),
    "unobserved",
  ],
  ["tool result found", { tool_result_contains: "mosaic gate: read path" }, same, "pass"],
  ["tool result not found", { tool_result_contains: "allowed" }, same, "fail"],
  ["tool results with no model", { tool_result_contains: "mosaic gate" }, noModel, "unobserved"],
  [
    "no tool result at all",
    { tool_result_not_contains: "{{secret}}" },
    (e) => ({ ...e, requests: [req(body([]))] }),
    "unobserved",
  ],
  ["tool result clean", { tool_result_not_contains: "{{secret}}" }, same, "pass"],
  [
    "tool result holds it",
    { tool_result_not_contains: "{{secret}}" },
    (e) => ({ ...e, requests: [req(body([SECRET]))] }),
    "fail",
  ],
  ["request clean", { request_not_contains: "{{secret}}" }, same, "pass"],
  [
    "request holds it in its url",
    { request_not_contains: "{{secret}}" },
    (e) => ({ ...e, requests: [{ ...req(body([])), url: `/v1/messages?k=${SECRET}` }] }),
    "fail",
  ],
  ["no request", { request_not_contains: "x" }, (e) => ({ ...e, requests: [] }), "unobserved"],
  ["request carries it", { request_contains: "mosaic gate" }, same, "pass"],
  ["no request carries it", { request_contains: "a marker" }, same, "fail"],
  ["no leak", { no_standin_leak: true }, same, "pass"],
  ["a leak in a request", { no_standin_leak: true }, (e) => ({ ...e, requests: [req(body([SECRET]))] }), "fail"],
  [
    "a leak in the broker's record",
    { no_standin_leak: true },
    (e) => ({ ...e, broker: [{ ...e.broker[1]!, args: { to: "x", body: SECRET } }] }),
    "fail",
  ],
  [
    "a leak in the egress log",
    { no_standin_leak: true },
    (e) => ({ ...e, egress: [{ ...e.egress![0]!, path: `/v1/messages?${SECRET}` }] }),
    "fail",
  ],
  ["a leak in a turn's stderr", { no_standin_leak: true }, (e) => ({ ...e, stderr: [SECRET] }), "fail"],
  ["a leak in a reply", { no_standin_leak: true }, (e) => ({ ...e, replies: [SECRET] }), "fail"],
  ["nothing planted", { no_standin_leak: true }, (e) => ({ ...e, standIns: [] }), "unobserved"],
  ["no leak but a reply missing", { no_standin_leak: true }, noReply, "unobserved"],
  ["file exists", { file_exists: "/h/made" }, same, "pass"],
  ["file gone", { file_exists: "/h/gone" }, same, "fail"],
  ["file not hashed", { file_exists: "/h/other" }, same, "unobserved"],
  ["file absent", { file_absent: "/h/gone" }, same, "pass"],
  ["file present", { file_absent: "/h/made" }, same, "fail"],
  ["file unchanged", { file_unchanged: "/h/kept" }, same, "pass"],
  ["file changed", { file_unchanged: "/h/changed" }, same, "fail"],
  ["file new: nothing to compare", { file_unchanged: "/h/made" }, same, "fail"],
  ["file deleted", { file_unchanged: "/h/gone" }, same, "fail"],
  ["broker called", { broker_called: { verb: "message.send", args: { to: "acme-pm" }, outcome: "ok" } }, same, "pass"],
  ["broker called with other args", { broker_called: { verb: "message.send", args: { to: "someone" } } }, same, "fail"],
  ["broker called, refused", { broker_called: { verb: "message.send", outcome: "error" } }, same, "fail"],
  [
    "broker saw nothing of the run",
    { broker_called: { verb: "message.send" } },
    (e) => ({ ...e, broker: [] }),
    "unobserved",
  ],
  ["broker not called", { broker_not_called: { verb: "launch" } }, same, "pass"],
  ["broker called after all", { broker_not_called: { verb: "message.send" } }, same, "fail"],
  [
    "turn failed",
    { turn_failed: { why: "wall clock" } },
    (e) => ({ ...e, replies: ["The turn failed: the turn ran past its wall clock"] }),
    "pass",
  ],
  ["turn did not fail", { turn_failed: true }, same, "fail"],
  ["the gate saw every call", { gate_saw_every_call: true }, same, "pass"],
  [
    "a call ran without the gate",
    { gate_saw_every_call: true },
    (e) => ({
      ...e,
      runnerLog: e.runnerLog.replace(
        "tripwire: the gate allowed each of 2 completed tool calls",
        'tripwire: Read (call "t1") ran without the gate: the gate reported no allow for call "t1"',
      ),
    }),
    "fail",
  ],
  [
    "a turn with no tripwire line (the tripwire off)",
    { gate_saw_every_call: true },
    (e) => ({ ...e, runnerLog: e.runnerLog.replace(/.*tripwire.*\n/, "") }),
    "fail",
  ],
  ["no turn ran", { gate_saw_every_call: true }, (e) => ({ ...e, runnerLog: "" }), "unobserved"],
  [
    "turn failed for another reason",
    { turn_failed: { why: "wall clock" } },
    (e) => ({ ...e, replies: ["The turn failed: the harness exited 3"] }),
    "fail",
  ],
  ["turn never answered", { turn_failed: true }, noReply, "unobserved"],
  ["path blocked", { path_blocked: { path: "/x" } }, withCalls(BLOCKED), "pass"],
  [
    "path blocked, by that tool and reason",
    { path_blocked: { path: "/x", tool: "read", reason: "outside the workspace" } },
    withCalls(BLOCKED),
    "pass",
  ],
  [
    "path read after all",
    { path_blocked: { path: "/x" } },
    withCalls(BLOCKED, { name: "read", input: { path: "/x" }, result: SECRET }),
    "fail",
  ],
  [
    "path's call errs for another reason",
    { path_blocked: { path: "/x", reason: "mosaic gate:" } },
    withCalls({ ...BLOCKED, result: "ENOENT" }),
    "fail",
  ],
  [
    "the reason shown but not as an error",
    { path_blocked: { path: "/x" } },
    withCalls({ ...BLOCKED, isError: false }),
    "fail",
  ],
  ["no call on the path", { path_blocked: { path: "/y" } }, withCalls(BLOCKED), "unobserved"],
  ["another tool's call only", { path_blocked: { path: "/x", tool: "write" } }, withCalls(BLOCKED), "unobserved"],
  [
    "a call on the path never answered",
    { path_blocked: { path: "/x" } },
    withCalls({ name: "read", input: { path: "/x" } }),
    "unobserved",
  ],
  ["exit code", { exit_code: 0 }, same, "pass"],
  ["another exit code", { exit_code: 0 }, (e) => ({ ...e, exit: 23 }), "fail"],
  ["killed, no exit code", { exit_code: 0 }, (e) => ({ ...e, exit: null }), "unobserved"],
  ["trap untouched", { trap_untouched: true }, same, "pass"],
  ["trap reached", { trap_untouched: true }, (e) => ({ ...e, trapConnections: 2 }), "fail"],
  ["no trap", { trap_untouched: true }, (e) => ({ ...e, trapConnections: null }), "unobserved"],
  [
    "a leak in a transcript",
    { no_standin_leak: true },
    (e) => ({ ...e, transcripts: { "/run/home/t.jsonl": `{"cat":"${SECRET}"}` } }),
    "fail",
  ],
  ["launch socket bound", { launch_socket_bound: true }, same, "pass"],
  [
    "launch socket not bound, as wanted",
    { launch_socket_bound: false },
    (e) => ({ ...e, argv: e.argv!.filter((t) => t !== "/b/launch.sock" && t !== "--ro-bind") }),
    "pass",
  ],
  ["launch socket bound, wanted not", { launch_socket_bound: false }, same, "fail"],
  [
    "launch socket wanted, not bound",
    { launch_socket_bound: true },
    (e) => ({ ...e, argv: ["bwrap", "--ro-bind", "/b/launch.sock.other", "/x", "--", "node"] }),
    "fail",
  ],
  ["never launched: no argv", { launch_socket_bound: false }, (e) => ({ ...e, argv: null }), "unobserved"],
  ["egress refused", { egress_refused: { method: "GET", path: "/v1/models" } }, same, "pass"],
  ["egress allowed it", { egress_refused: { path: "/v1/messages" } }, same, "fail"],
  ["egress never saw it", { egress_refused: { path: "/v1/files" } }, same, "unobserved"],
  ["no egress log", { egress_refused: { path: "/v1/models" } }, (e) => ({ ...e, egress: null }), "unobserved"],
];

describe("judging an assertion over evidence", () => {
  it.each(CASES)("%s", (_what, a, edit, want) => {
    const v = judge(a, edit(base()), { secret: SECRET, launch_socket: "/b/launch.sock" });
    expect(v.verdict, v.detail).toBe(want);
    expect(v.detail.length).toBeGreaterThan(0);
  });
  it("every assertion kind has a passing and a failing case above", () => {
    for (const kind of ASSERTION_KIND_NAMES) {
      const verdicts = CASES.filter(([, a]) => Object.hasOwn(a, kind)).map(([, , , v]) => v);
      expect(verdicts, kind).toContain("pass");
      expect(verdicts, kind).toContain("fail");
    }
  });
  it("a leak is named by its channel, never by its value", () => {
    const v = judge({ no_standin_leak: true }, { ...base(), stderr: [SECRET], replies: [SECRET] }, {});
    expect(v.detail).toBe("a stand-in value is in: replies (1 value), stderr (1 value)");
  });
});

const result = (name: string, verdicts: AssertionVerdictKind[], problem: string | null = null): ScenarioResult => ({
  name,
  harness: "pi",
  seconds: 1.5,
  problem,
  runDir: `/runs/${name}`,
  assertions: verdicts.map((v, i) => ({
    session: name,
    label: `reply_contains x${i}`,
    because: null,
    verdict: v,
    detail: `d${i}`,
  })),
  verdict: verdicts.every((v) => v === "pass") ? "pass" : "fail",
});

describe("the report", () => {
  const all = [
    { name: "a", harness: "pi", runs: [result("a", ["pass", "pass"])] },
    { name: "b", harness: "pi", runs: [result("b", ["pass", "unobserved"])] },
  ];
  it("the table has a row per assertion, with the detail of one that did not pass", () => {
    const lines = renderTable(all).trimEnd().split("\n");
    expect(lines.length).toBe(5);
    expect(lines[4]).toMatch(/^b\s+reply_contains x1\s+unobserved\s+unobserved: d1$/);
  });
  it("the summary counts scenarios and verdicts; unobserved is not a pass", () => {
    expect(renderSummary(all)).toBe(
      "1/2 scenarios passed; 4 assertion verdicts: 3 pass, 0 fail, 1 unobserved (3.0 s)\n",
    );
  });
  it("repeated, each assertion and each scenario shows its pass rate", () => {
    const rep = [
      { name: "a", harness: "pi", runs: [result("a", ["pass"]), result("a", ["fail"]), result("a", ["pass"])] },
    ];
    expect(renderTable(rep)).toMatch(/a\s+reply_contains x0\s+2\/3 pass\s+fail: d0/);
    expect(renderSummary(rep)).toContain("pass rate a 2/3");
  });
  it("JUnit: fail and unobserved are failures", () => {
    const x = renderJunit(all);
    expect(x).toContain('<testsuite name="b" tests="2" failures="1"');
    expect(x).toContain('<failure message="unobserved: d1"/>');
    expect(x.match(/<failure /g)?.length).toBe(1);
  });
});

describe("mosaic-harness run's arguments", () => {
  it.each([
    [["run"], { kind: "run", paths: [], only: null, json: false, junit: null, repeat: 1, jobs: null }],
    [
      ["run", "--only", "a", "--only", "b,c"],
      { kind: "run", paths: [], only: ["a", "b", "c"], json: false, junit: null, repeat: 1, jobs: null },
    ],
    [
      ["run", "scenarios/x.yaml", "--only", "a,b", "--json", "--junit", "r.xml", "--repeat", "3"],
      { kind: "run", paths: ["scenarios/x.yaml"], only: ["a", "b"], json: true, junit: "r.xml", repeat: 3, jobs: null },
    ],
    [["run", "--jobs", "4"], { kind: "run", paths: [], only: null, json: false, junit: null, repeat: 1, jobs: 4 }],
    [["run", "--jobs", "0"], { kind: "usage-error", message: "run: --jobs needs a whole number from 1 to 64, got 0" }],
    [
      ["run", "--jobs", "65"],
      { kind: "usage-error", message: "run: --jobs needs a whole number from 1 to 64, got 65" },
    ],
    [
      ["run", "--jobs", "1.5"],
      { kind: "usage-error", message: "run: --jobs needs a whole number from 1 to 64, got 1.5" },
    ],
    [
      ["run", "--repeat", "0"],
      { kind: "usage-error", message: "run: --repeat needs a whole number from 1 to 100, got 0" },
    ],
    [
      ["run", "--repeat"],
      { kind: "usage-error", message: "run: --repeat needs a whole number from 1 to 100, got nothing" },
    ],
    [["run", "--only"], { kind: "usage-error", message: "run: --only needs a comma-separated list of scenario names" }],
    [["run", "--junit"], { kind: "usage-error", message: "run: --junit needs a file" }],
    [["run", "--fast"], { kind: "usage-error", message: "run: unknown option --fast" }],
  ] as const)("%j", (argv, expected) => {
    expect(parseCliArgs(argv)).toEqual(expected);
  });
});

// The shell around the runner, as a real process: the exits that come before any session runs.
const scratch = makeScratch("scenario-cli");
afterAll(() => scratch.remove());
function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "src/cli/main.ts"), "run", ...args], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    env,
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe("mosaic-harness run, as a process", () => {
  it("a bad scenario exits 2 naming file, line and field, and runs nothing", () => {
    const dir = join(scratch.root, "bad");
    mkdirSync(dir);
    writeFileSync(join(dir, "probe.yaml"), GOOD.replace("harness: pi", "harness: pi\nharnes: pi"));
    const r = cli([dir]);
    expect(r.status).toBe(2);
    expect(r.err).toContain(`${join(dir, "probe.yaml")}:5: harnes: not a field here`);
    expect(r.out).toBe("");
  });
  it("--only with a name no scenario has exits 2", () => {
    const r = cli(["--only", "no-such-scenario"]);
    expect(r.status).toBe(2);
    expect(r.err).toContain("--only: no scenario named no-such-scenario");
  });
  it("no bwrap on PATH exits 3 with the probe's line", () => {
    const r = cli(["--only", "pi-reads-outside"], { ...process.env, PATH: join(scratch.root, "no-bin") });
    expect(r.status).toBe(3);
    expect(r.err).toMatch(/^mosaic-harness run: the sandbox cannot be set up: .*bwrap/);
  });
});
