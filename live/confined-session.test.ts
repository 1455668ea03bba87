import { existsSync, mkdirSync, writeFileSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { sessionEnv } from "../src/core/session/env.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { layOutSession, makeQuietBrokerWorld, type QuietBrokerWorld } from "../src/conformance/worlds/world.ts";
import { runConfined } from "../src/conformance/worlds/sandbox-run.ts";
import { realFsView } from "../src/host/fs-view.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import { loadModelScript } from "../src/conformance/stand-ins/model-script/format.ts";
import type { ScriptFailure } from "../src/conformance/stand-ins/model-script/record.ts";
import { modelFrontArgv, modelFrontFiles } from "../src/conformance/worlds/live-session.ts";
import { MODEL_URL } from "../src/core/network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import { serveModelProxy } from "../src/host/model-proxy.ts";
import { runSockets } from "../src/core/runner/run-paths.ts";
import { exposedBind, withBindsBeforeLast } from "../src/conformance/controls/binds.ts";

// Real Claude Code and Pi sessions in real bwrap sandboxes built by binds()/bwrapArgv(), driven by
// the scripted API. The model's one tool call is a shell that tries the founder's stand-in secrets
// and the places beside the session; its output comes back to the API as the tool result, so the
// test reads what the model would have seen. Breaking it on purpose shows each attack works.
const CLAUDE = join(REPO_ROOT, "node_modules/.bin/claude");
const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const STAND_IN_KEY = "stand-in-api-key-not-a-secret";

const hostFacts = readHostFacts({ repo: REPO_ROOT });
const problem =
  checkoutProblem(REPO_ROOT) ??
  sandboxProblem(hostFacts) ??
  (existsSync(CLAUDE) ? null : `${CLAUDE} missing (npm ci)`) ??
  (existsSync(PI_CLI) ? null : `${PI_CLI} missing (npm ci)`);
const it = liveIt("bwrap, Claude Code and Pi", problem);

let world: QuietBrokerWorld;
let R: string;
let founderHome: string;
let SECRET: string;

beforeAll(async () => {
  world = await makeQuietBrokerWorld("confined");
  R = world.root;
  founderHome = world.stand.founderHome;
  SECRET = world.stand.secret;
  mkdirSync(join(R, "repo"), { recursive: true });
  writeFileSync(join(R, "repo/runner.ts"), "// stand-in: the session command replaces the runner\n");
  writeFileSync(join(R, "repo/adapter.sh"), "exit 0\n");
});

afterAll(async () => {
  await world?.close();
});

function prepareRun(name: string, harness: SandboxSpec["harness"]): { spec: SandboxSpec; facts: HostFacts } {
  const { ws, run } = layOutSession(world, name, "{}\n");
  mkdirSync(join(run, "bundle"));
  const spec: SandboxSpec = {
    harness,
    repo: REPO_ROOT,
    runnerFiles: [join(R, "repo/runner.ts"), ...modelFrontFiles()],
    runner: join(R, "repo/runner.ts"),
    adapter: join(R, "repo/adapter.sh"),
    brokerSocket: world.brokerSocket,
    launchSocket: join(world.sockDir, "launch.sock"),
    mayLaunch: false,
    workspace: ws,
    runDir: run,
  };
  const facts: HostFacts = {
    ...hostFacts,
    home: founderHome,
    claude: { path: CLAUDE, realPath: realpathSync(CLAUDE) },
  };
  return { spec, facts };
}

/** The model's one Bash call: each line "name yes|no", then an attempt to print the secret. */
function attackScript(spec: SandboxSpec): string {
  const t = (name: string, cmd: string) =>
    `if sh -c '${cmd}' >/dev/null 2>&1; then echo "${name} yes"; else echo "${name} no"; fi`;
  return [
    t("read-ssh-key", `cat ${founderHome}/.ssh/id_ed25519`),
    t("read-stand-in-env", `cat ${founderHome}/.config/mosaic-dev/secrets/stand-in.env`),
    t("read-mosaic", `cat ${founderHome}/.mosaic/state.json`),
    t("read-git-credentials", `cat ${founderHome}/.git-credentials`),
    t("read-other-workspace", `cat ${R}/data/workspaces/acme/other/secret.txt`),
    t("read-checkout", `ls ${REPO_ROOT}/src/core`),
    t("write-beside-workspace", `echo x > ${R}/data/workspaces/acme/planted.txt`),
    t("write-workspace", `echo x > ${spec.workspace}/made-by-session.txt`),
    t("write-tmp", "echo x > /tmp/t"),
    t("write-home", 'touch "$HOME/h"'),
    `cat ${founderHome}/.config/mosaic-dev/secrets/stand-in.env 2>/dev/null; true`,
  ].join("\n");
}

type Outcome = { answers: Record<string, string>; bodies: string[]; failures: ScriptFailure[]; stderr: string };

/** Runs one real session: the harness CLI, in the workspace, inside bwrap built from the table. */
async function runSession(spec: SandboxSpec, facts: HostFacts, table: Bind[]): Promise<Outcome> {
  const toolName = spec.harness === "pi" ? "bash" : "Bash";
  const turns = [{ tool_use: { name: toolName, input: { command: attackScript(spec) } } }, { text: "done" }];
  const api = await startScriptedApi({
    script: loadModelScript({ turns }, { source: "live/confined-session.test.ts" }),
  });
  // The session's network is its own loopback: the front forwards the model port to this proxy.
  const proxy = serveModelProxy({
    socket: runSockets(spec.runDir).model,
    upstream: api.url,
    credential: { header: "x-api-key", value: STAND_IN_KEY },
    mode: "model-only",
    egressLog: join(spec.runDir, "..", `${basename(spec.runDir)}.egress.jsonl`),
  });
  await proxy.listening;
  const url = MODEL_URL;
  try {
    const argv = bwrapArgv(spec, facts, table);
    const dd = argv.lastIndexOf("--");
    let cli: string[];
    const env: NodeJS.ProcessEnv = { ...sessionEnv(process.env) };
    if (spec.harness === "claude-code") {
      cli = [
        CLAUDE,
        "-p",
        "go",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "dontAsk",
        "--allowedTools",
        "Bash",
        "--tools",
        "Bash",
        "--setting-sources",
        "",
        "--model",
        "claude-sonnet-4-5",
      ];
      Object.assign(env, {
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: CREDENTIAL_PLACEHOLDER,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      });
    } else {
      // HOME is a tmpfs inside; the agent dir lives in the run directory, as the Pi adapter puts it.
      const agentDir = join(spec.runDir, "session/pi-agent");
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            scripted: {
              baseUrl: url,
              api: "anthropic-messages",
              apiKey: CREDENTIAL_PLACEHOLDER,
              models: [{ id: "scripted-model", name: "scripted" }],
            },
          },
        }),
      );
      writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
      cli = [
        facts.node.path,
        PI_CLI,
        "-p",
        "go",
        "--provider",
        "scripted",
        "--model",
        "scripted-model",
        "--no-session",
        "--offline",
        "-nc",
        "-ns",
        "-ne",
        "--tools",
        "bash",
      ];
      env.PI_CODING_AGENT_DIR = agentDir;
    }
    // The adapters cd into the workspace; bwrap starts in the run directory.
    const inner = [
      "/bin/sh",
      "-c",
      'cd "$0" && exec "$@"',
      spec.workspace,
      ...modelFrontArgv(facts.node.path, spec.runDir),
      ...cli,
    ];
    const full = [...argv.slice(0, dd + 1), ...inner];
    const r = await runConfined({
      command: full,
      env: env as Record<string, string>,
      facts,
      timeoutMs: 50_000,
      asSession: { trees: [spec.workspace, spec.runDir] },
    });
    const bodies = api.messageBodies();
    const toolResult = toolResultsIn(bodies[1]).join("\n");
    const answers = Object.fromEntries([...toolResult.matchAll(/^([a-z-]+) (yes|no)$/gm)].map((m) => [m[1]!, m[2]!]));
    return { answers, bodies, failures: api.failures(), stderr: r.stderr };
  } finally {
    await proxy.close();
    await api.stop();
  }
}

const CONFINED = {
  "read-ssh-key": "no",
  "read-stand-in-env": "no",
  "read-mosaic": "no",
  "read-git-credentials": "no",
  "read-other-workspace": "no",
  "read-checkout": "no",
  "write-beside-workspace": "no",
  "write-workspace": "yes",
  "write-tmp": "yes",
  "write-home": "yes",
};

/** The founder's HOME bound in, read-only, just before the private /tmp: the attack's door. */
function withFounderHome(table: Bind[]): Bind[] {
  return withBindsBeforeLast(table, [exposedBind(founderHome)]);
}

describe("real sessions in real bwrap sandboxes keep the stand-in secrets out of reach", () => {
  for (const harness of ["claude-code", "pi"] as const) {
    it(`${harness}: the model's shell reaches its workspace, /tmp and HOME, and nothing of the founder's`, async () => {
      const { spec, facts } = prepareRun(`${harness}-confined`, harness);
      const out = await runSession(spec, facts, binds(spec, facts, realFsView()));
      expect(out.bodies.length, `the CLI made both model calls; stderr: ${out.stderr.slice(0, 600)}`).toBe(2);
      expect(out.answers).toEqual(CONFINED);
      expect(out.failures, "every request was the script's").toEqual([]);
      for (const b of out.bodies) expect(b.includes(SECRET), "the stand-in secret never reaches the model").toBe(false);
      expect(existsSync(join(R, "data/workspaces/acme/planted.txt"))).toBe(false);
      expect(existsSync(join(spec.workspace, "made-by-session.txt"))).toBe(true);
    }, 90_000);

    it(`${harness}: breaking it on purpose, with the founder's HOME bound in, the secrets reach the model`, async () => {
      const { spec, facts } = prepareRun(`${harness}-broken`, harness);
      const out = await runSession(spec, facts, withFounderHome(binds(spec, facts, realFsView())));
      expect(out.bodies.length, `stderr: ${out.stderr.slice(0, 600)}`).toBe(2);
      expect(out.answers).toEqual({
        ...CONFINED,
        "read-ssh-key": "yes",
        "read-stand-in-env": "yes",
        "read-mosaic": "yes",
        "read-git-credentials": "yes",
      });
      expect(
        toolResultsIn(out.bodies[1]).join("\n").includes(SECRET),
        "with the door open the secret reaches the model",
      ).toBe(true);
    }, 90_000);
  }
});
