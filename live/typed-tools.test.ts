import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { gateCompileCacheDir } from "../src/core/bundle/hook.ts";
import { piReply } from "../src/core/runner/decisions.ts";
import { GATE_REPORT_TOOL, type GateReport } from "../src/core/runner/tripwire.ts";
import { decideLaunch, type LaunchPlan } from "../src/core/launch/decide-launch.ts";
import { exampleInstance, exampleSettings } from "../src/conformance/worlds/examples.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { readLaunchFacts } from "../src/host/launch-facts.ts";
import { warmGateCache } from "../src/host/warm-gate-cache.ts";
import { writeBundle } from "../src/host/write-bundle.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { runProcess } from "../src/conformance/processes/run-process.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import { scriptOf, type Reply } from "../src/conformance/stand-ins/model-script/format.ts";
import { parseRecording } from "../src/conformance/processes/stdio-recorder.ts";
import { ToolSocketStandIn, type StandInAnswer } from "../src/conformance/stand-ins/tool-socket.ts";
import { runSockets } from "../src/core/runner/run-paths.ts";

// Typed tools through the real CLIs: decideLaunch() plans a coder from the shipped examples,
// writeBundle() writes its bundle, and the adapter's own argv runs the real Claude Code (the
// bundle's mcp.json starts src/host/mcp-server.ts) or Pi (the extension registers the tools). The
// scripted model calls send_message; a tool-socket stand-in at <run>/sock/tools.sock records the call and
// answers it, and the next model request shows what the model saw. Unconfined for now: the runner
// will run these inside bwrap.
const CLAUDE = join(REPO_ROOT, "node_modules/.bin/claude");
const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const itClaude = liveIt("Claude Code", existsSync(CLAUDE) ? null : `${CLAUDE} missing (npm ci)`);
const itPi = liveIt("Pi", existsSync(PI_CLI) ? null : `${PI_CLI} missing (npm ci)`);

const BASELINE = JSON.parse(readFileSync(join(REPO_ROOT, "baselines/mcp.json"), "utf8")) as {
  claudeCode: string;
  negotiatedProtocolVersion: string;
  handshake: Array<{
    from: "client" | "server";
    method?: string;
    answers?: string;
    protocolVersion?: string;
    error?: number;
    clientInfo?: { name: string; version: string };
    serverInfo?: { name: string; version: string };
  }>;
};

let scratch: ReturnType<typeof makeScratch>;
beforeAll(() => {
  scratch = makeScratch("typed");
});
afterAll(() => scratch?.remove());

type Prepared = { plan: LaunchPlan; run: string; env: NodeJS.ProcessEnv };

function prepare(name: string, example: "claude-coder" | "pi-coder", apiUrl: string): Prepared {
  const ws = join(scratch.root, "ws", name);
  const run = join(scratch.root, "runs", name);
  for (const d of [ws, join(run, "home"), join(run, "tmp"), join(run, "turns"), join(run, "sock")])
    mkdirSync(d, { recursive: true });
  chmodSync(join(run, "home"), 0o700);
  const instance = exampleInstance(example, { workspace: ws, run: name });
  const settings = exampleSettings();
  const hostEnv = {
    PATH: process.env.PATH,
    MOSAIC_CLAUDE_BIN: CLAUDE,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: "stand-in-api-key",
    LANG: "C.UTF-8",
  };
  // The session runs unconfined here, so whether bwrap could confine it does not enter the plan.
  const facts = {
    ...readLaunchFacts(readHostFacts({ repo: REPO_ROOT, env: hostEnv }), { repo: REPO_ROOT, runDir: run }),
    sandboxProblem: null,
  };
  const decision = decideLaunch(instance, settings, facts, hostEnv);
  if (decision.kind !== "launch") throw new Error(`the example did not plan: ${decision.code}: ${decision.message}`);
  const plan = decision.plan;
  writeBundle(plan.bundleDir, plan.bundle);
  if (plan.harness === "claude-code") warmGateCache(process.execPath, REPO_ROOT, gateCompileCacheDir(plan.bundleDir));
  else {
    const agentDir = plan.adapter.env.PI_CODING_AGENT_DIR!;
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { anthropic: { baseUrl: apiUrl, apiKey: "stand-in-api-key" } } }),
    );
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
  }
  // bwrap would set HOME and TMPDIR to the run's own; unconfined, the test does. Unconfined there is
  // no model proxy either: the CLI calls the scripted API directly (live/network.test.ts has the proxy).
  return {
    plan,
    run,
    env: { ...plan.adapter.env, ANTHROPIC_BASE_URL: apiUrl, HOME: join(run, "home"), TMPDIR: join(run, "tmp") },
  };
}

function runTurn(p: Prepared, message: string) {
  const [cmd, ...args] = p.plan.adapter.argv;
  return runProcess(cmd!, [...args, message], { cwd: p.plan.adapter.cwd, env: p.env, timeoutMs: 60_000 });
}

/** The first tool result of a model request: what the model was shown, and whether as an error. */
function shown(body: string | undefined): { text: string; isError: boolean } {
  const text = toolResultsIn(body)[0] ?? "(no tool result)";
  const msgs = (JSON.parse(body ?? '{"messages":[]}') as { messages: Array<{ content: unknown }> }).messages;
  const block = msgs
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; is_error?: boolean }>) : []))
    .find((b) => b.type === "tool_result");
  // Claude Code appends a system reminder after the tool's own text.
  return { text: text.split("\n")[0]!, isError: block?.is_error === true };
}

const SEND = { to: "acme-pm", body: "the patch is ready" };
const REFUSAL = "refused: acme-pm is not an instance this role may message";

type Arm = {
  name: string;
  answer: StandInAnswer | "socket-removed";
  dropTypedToolsFromPolicy?: true;
  /** The tool result's text, exactly, or a pattern where the harness adds its own words. */
  sees: (run: string, harnessName: string) => { text: string | RegExp; isError: boolean };
  recorded: boolean;
};

const ARMS: Arm[] = [
  {
    name: "a call reaches the tool socket by its catalog name and the model sees the runner's result",
    answer: { ok: true, result: { id: "msg-1" } },
    sees: () => ({ text: '{"id":"msg-1"}', isError: false }),
    recorded: true,
  },
  {
    name: "a refusal reaches the model as refused: <reason>, as an error",
    answer: { ok: false, error: REFUSAL },
    sees: () => ({ text: REFUSAL, isError: true }),
    recorded: true,
  },
  {
    name: "the gate still sees typed tools: with send_message dropped from policy.typedTools it blocks, and nothing reaches the socket",
    answer: { ok: true, result: { id: "msg-1" } },
    dropTypedToolsFromPolicy: true,
    // Claude Code puts "PreToolUse:<tool> hook error: [<command>]: " before the hook's stderr.
    sees: (_run, harnessName) => ({
      text: new RegExp(`(^|\\]: )mosaic gate: ${harnessName} is not one of this session's tools$`),
      isError: true,
    }),
    recorded: false,
  },
  {
    name: "positive control: with the tool socket gone, the model sees a fail-closed refusal and nothing is recorded",
    answer: "socket-removed",
    sees: (run) => ({
      text: `refused: the runner's tool socket ${runSockets(run).tools} does not exist (the runner is not serving it); the call was not made`,
      isError: true,
    }),
    recorded: false,
  },
];

const HARNESSES = [
  {
    harness: "claude-code",
    it: itClaude,
    example: "claude-coder",
    toolName: "mcp__mosaic__send_message",
    done: (stdout: string) =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; result?: string })
        .find((m) => m.type === "result")?.result,
  },
  {
    harness: "pi",
    it: itPi,
    example: "pi-coder",
    toolName: "send_message",
    done: (stdout: string) => {
      const r = piReply(stdout);
      return "reply" in r ? r.reply.trim() : undefined;
    },
  },
] as const;

/** The stand-in's requests: the typed calls, and the gate's reports of its decisions (the tripwire's evidence). */
function split(requests: ReadonlyArray<{ tool: unknown; args: unknown }>) {
  return {
    calls: requests.filter((r) => r.tool !== GATE_REPORT_TOOL),
    reports: requests.filter((r) => r.tool === GATE_REPORT_TOOL).map((r) => r.args as GateReport),
  };
}

for (const h of HARNESSES) {
  describe(`${h.harness}: typed tools through the runner's tool socket`, () => {
    for (const [i, arm] of ARMS.entries()) {
      h.it(
        arm.name,
        async () => {
          const api = await startScriptedApi();
          const url = api.url;
          const p = prepare(`${h.harness}-${i}`, h.example, url);
          const stand = new ToolSocketStandIn(runSockets(p.run).tools, () =>
            arm.answer === "socket-removed" ? { ok: true, result: { id: "msg-1" } } : arm.answer,
          );
          await stand.start();
          try {
            expect(
              JSON.parse(p.plan.bundle["policy.json"]!).typedTools,
              "the plan gives the coder send_message",
            ).toContain(h.toolName);
            if (arm.answer === "socket-removed") rmSync(stand.path);
            if (arm.dropTypedToolsFromPolicy) {
              const file = join(p.plan.bundleDir, "policy.json");
              writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), typedTools: [] }));
            }
            const replies: Reply[] = [{ tool_use: { name: h.toolName, input: SEND } }, { text: `turn-finished-${i}` }];
            api.replaceScript(scriptOf(replies));
            const r = await runTurn(p, "tell the pm");
            expect(h.done(r.stdout), `the turn ended; stderr: ${r.stderr.slice(0, 800)}`).toBe(`turn-finished-${i}`);
            const bodies = api.messageBodies();
            expect(bodies.length).toBe(2);
            const want = arm.sees(p.run, h.toolName);
            const got = shown(bodies[1]);
            if (typeof want.text === "string") expect(got.text, "what the model saw").toBe(want.text);
            else expect(got.text, "what the model saw").toMatch(want.text);
            expect(got.isError, "shown as an error").toBe(want.isError);
            const { calls, reports } = split(stand.requests);
            if (arm.recorded) expect(calls).toEqual([{ id: expect.any(Number), tool: "send_message", args: SEND }]);
            else expect(calls, "no typed call reached the tool socket").toEqual([]);
            if (arm.answer !== "socket-removed")
              expect(
                reports.map((r) => [r.tool, r.allow]),
                "the gate reported its decision on the same socket, for the tripwire",
              ).toEqual([[h.toolName, !arm.dropTypedToolsFromPolicy]]);
          } finally {
            await stand.stop();
            await api.stop();
          }
        },
        90_000,
      );
    }
  });
}

// Who checks args against the schema: the runner must, because Claude Code does not.
describe("args outside the tool's schema", () => {
  const BAD = { to: "acme-pm", extra: 1 };
  for (const h of HARNESSES) {
    const claude = h.harness === "claude-code";
    h.it(
      claude
        ? "claude-code passes them to the server unchanged, so the runner must check them"
        : "pi refuses them before the call, and nothing reaches the socket",
      async () => {
        const api = await startScriptedApi();
        const url = api.url;
        const p = prepare(`${h.harness}-bad-args`, h.example, url);
        const stand = new ToolSocketStandIn(runSockets(p.run).tools, () => ({
          ok: false,
          error: "refused: body is required",
        }));
        await stand.start();
        try {
          api.replaceScript(scriptOf([{ tool_use: { name: h.toolName, input: BAD } }, { text: "turn-finished-bad" }]));
          const r = await runTurn(p, "tell the pm");
          expect(h.done(r.stdout), `the turn ended; stderr: ${r.stderr.slice(0, 800)}`).toBe("turn-finished-bad");
          const got = shown(api.messageBodies()[1]);
          expect(got.isError).toBe(true);
          if (claude) {
            expect(split(stand.requests).calls).toEqual([{ id: expect.any(Number), tool: "send_message", args: BAD }]);
            expect(got.text).toBe("refused: body is required");
          } else {
            expect(split(stand.requests).calls).toEqual([]);
            expect(got.text).toMatch(/^Validation failed for tool "send_message"/);
          }
        } finally {
          await stand.stop();
          await api.stop();
        }
      },
      90_000,
    );
  }
});

describe("claude-code: the MCP handshake", () => {
  itClaude(
    "Claude Code and the server negotiate the protocol version baselines/mcp.json pins",
    async () => {
      const api = await startScriptedApi({ script: scriptOf([{ text: "handshake-done" }]) });
      const url = api.url;
      try {
        const p = prepare("claude-handshake", "claude-coder", url);
        // The recorder goes between Claude Code and the bundle's own server command, line for line.
        const wire = join(p.run, "mcp-wire.jsonl");
        const mcpFile = join(p.plan.bundleDir, "mcp.json");
        const mcp = JSON.parse(readFileSync(mcpFile, "utf8")) as {
          mcpServers: { mosaic: { command: string; args: string[] } };
        };
        const server = mcp.mcpServers.mosaic;
        mcp.mcpServers.mosaic = {
          ...server,
          command: process.execPath,
          args: [join(REPO_ROOT, "src/conformance/processes/stdio-recorder.ts"), wire, server.command, ...server.args],
        };
        writeFileSync(mcpFile, JSON.stringify(mcp));
        const r = await runTurn(p, "hello");
        expect(r.stdout, r.stderr.slice(0, 800)).toContain("handshake-done");
        const init = r.stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; subtype?: string; mcp_servers?: unknown })
          .find((m) => m.type === "system" && m.subtype === "init");
        expect(init?.mcp_servers, "Claude Code connected the bundle's server").toEqual([
          { name: "mosaic", status: "connected", source: "dynamic" },
        ]);

        const lines = parseRecording(readFileSync(wire, "utf8")).map((l) => ({
          dir: l.dir,
          msg: JSON.parse(l.line) as {
            id?: unknown;
            method?: string;
            params?: Record<string, unknown>;
            result?: Record<string, unknown>;
            error?: { code: number };
          },
        }));
        const sent = lines.filter((l) => l.dir === "in").map((l) => l.msg);
        const answerTo = (m: { id?: unknown }) => lines.find((l) => l.dir === "out" && l.msg.id === m.id)?.msg;
        const seen = [];
        for (const m of sent.slice(0, BASELINE.handshake.filter((s) => s.from === "client").length)) {
          const meta = (m.params?._meta ?? {}) as Record<string, unknown>;
          const version = (m.params?.protocolVersion ?? meta["io.modelcontextprotocol/protocolVersion"]) as
            | string
            | undefined;
          const info = (m.params?.clientInfo ?? meta["io.modelcontextprotocol/clientInfo"]) as
            | { name: string; version: string }
            | undefined;
          seen.push({
            from: "client",
            method: m.method,
            ...(version ? { protocolVersion: version } : {}),
            ...(m.method === "initialize" && info ? { clientInfo: { name: info.name, version: info.version } } : {}),
          });
          if (m.id === undefined) continue;
          const a = answerTo(m);
          if (m.method === "tools/list") continue;
          const si = a?.result?.serverInfo as { name: string; version: string } | undefined;
          seen.push({
            from: "server",
            answers: m.method,
            ...(a?.error ? { error: a.error.code } : {}),
            ...(a?.result?.protocolVersion ? { protocolVersion: a.result.protocolVersion } : {}),
            ...(si ? { serverInfo: { name: si.name, version: si.version } } : {}),
          });
        }
        const pinned = BASELINE.handshake.map(({ note: _note, ...rest }: Record<string, unknown>) => rest);
        expect(
          seen,
          "the handshake differs from baselines/mcp.json: read the recording and update the baseline",
        ).toEqual(pinned);
        const initAnswer = answerTo(sent.find((m) => m.method === "initialize")!);
        expect(initAnswer?.result?.protocolVersion, "the negotiated protocol version").toBe(
          BASELINE.negotiatedProtocolVersion,
        );
        expect((sent.find((m) => m.method === "initialize")?.params?.clientInfo as { version: string }).version).toBe(
          BASELINE.claudeCode,
        );
      } finally {
        await api.stop();
      }
    },
    90_000,
  );
});
