// A planned session for the live tier, with nothing hand-built: decideLaunch() plans a role from a
// shipped example instance, writeBundle() writes its bundle, and the adapter's own argv runs the
// real Claude Code or Pi inside bwrap from binds()/bwrapArgv(). Tests plant what they need in the
// workspace and the run's HOME, change the plan on purpose where a positive control needs it, and
// read what reached the scripted API.
import { appendFileSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gateCompileCacheDir } from "../../core/bundle/hook.ts";
import { decideLaunch, type LaunchPlan } from "../../core/launch/decide-launch.ts";
import { binds } from "../../core/sandbox/binds.ts";
import { bwrapArgv } from "../../core/sandbox/bwrap-argv.ts";
import type { Bind, HostFacts, SandboxSpec } from "../../core/sandbox/types.ts";
import { importGraph } from "../../host/import-graph.ts";
import { readLaunchFacts } from "../../host/launch-facts.ts";
import { warmGateCache } from "../../host/warm-gate-cache.ts";
import { writeBundle } from "../../host/write-bundle.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import type { ProcessResult } from "../processes/run-process.ts";
import { runConfined } from "./sandbox-run.ts";
import { realFsView } from "../../host/fs-view.ts";
import { egressLogPath, serveModelProxy } from "../../host/model-proxy.ts";
import { MODEL_PORT } from "../../core/network/egress.ts";
import { runSockets } from "../../core/runner/run-paths.ts";
import { upstreamCredential } from "../../core/network/placeholder.ts";
import { exampleInstance, exampleSettings } from "./examples.ts";
import { layOutSession, makeQuietBrokerWorld, type QuietBrokerWorld } from "./world.ts";

export const CLAUDE_BIN = join(REPO_ROOT, "node_modules/.bin/claude");

/** The in-sandbox front of a turn run without the runner: it forwards the model port, then runs the harness. */
export const MODEL_FRONT = join(REPO_ROOT, "src/conformance/processes/forward-then-exec.ts");

/** The files the front loads, for the spec's runnerFiles. */
export function modelFrontFiles(): string[] {
  return importGraph([MODEL_FRONT]).files;
}

/** The argv that puts the front before a harness command: the model port forwarded to `<run>/sock/model.sock`. */
export function modelFrontArgv(node: string, run: string, port = MODEL_PORT): string[] {
  return [node, MODEL_FRONT, String(port), runSockets(run).model];
}

/**
 * The session with its model port moved to `port`: the front, Claude Code's ANTHROPIC_BASE_URL and
 * Pi's models.json. For a control that shares the host's network, where 8787 may be taken.
 */
export function withModelPort(s: LiveSession, port: number): LiveSession {
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = { ...s.plan.adapter.env, ANTHROPIC_BASE_URL: url };
  if (s.plan.harness === "pi") {
    const models = JSON.parse(s.plan.bundle["models.json"]!) as { providers: Record<string, { baseUrl: string }> };
    for (const p of Object.values(models.providers)) p.baseUrl = url;
    writeFileSync(join(env.PI_CODING_AGENT_DIR!, "models.json"), JSON.stringify(models));
  }
  return { ...s, modelPort: port, plan: { ...s.plan, adapter: { ...s.plan.adapter, env } } };
}

/** What every session of one test file shares: its scratch root, the founder's HOME, the host. */
export type SessionSetup = {
  root: string;
  founderHome: string;
  hostFacts: HostFacts;
  /** A listening stand-in broker socket under root (the spec names it; no session calls it). */
  brokerSocket: string;
};

/**
 * A world for planned sessions: the founder's stand-ins and a quiet broker socket; close() stops the
 * broker and removes the root (kept when a live test failed). The stand-ins' secret is the value
 * nothing may leak.
 */
export async function startSessionSetup(
  label: string,
  hostFacts: HostFacts,
): Promise<{ setup: SessionSetup; world: QuietBrokerWorld; close: () => Promise<void> }> {
  const world = await makeQuietBrokerWorld(label);
  const setup = { root: world.root, founderHome: world.stand.founderHome, hostFacts, brokerSocket: world.brokerSocket };
  return { setup, world, close: world.close };
}

export type LiveSession = {
  plan: LaunchPlan;
  spec: SandboxSpec;
  facts: HostFacts;
  ws: string;
  run: string;
  /**
   * What the session's HOME holds when the CLI starts: `<run>/home-seed`, copied into the HOME
   * tmpfs (`<run>/home`) first, as an earlier turn of the session would have left it.
   */
  home: string;
  /** Packages the gate's entry loads: none, since Claude Code's sandbox has no node_modules. */
  gatePackages: string[];
  /** The scripted API the host's model proxy forwards to, and the host env it takes the credential from. */
  apiUrl: string;
  hostEnv: Record<string, string | undefined>;
  /** The host's record of what the session's model port let out: one JSON line a request. */
  egressLog: string;
  /** The in-sandbox model port the front listens on: MODEL_PORT unless a control moved it. */
  modelPort?: number;
};

/** Plans and writes one launch of a shipped example instance (claude-coder or pi-coder) under setup.root. */
export function planLiveSession(
  setup: SessionSetup,
  name: string,
  apiUrl: string,
  example: "claude-coder" | "pi-coder",
  hostEnv: Record<string, string | undefined> = {},
): LiveSession {
  const R = setup.root;
  const { ws, run, home } = layOutRun(R, name);
  // The host's environment: stand-in credentials the proxy adds upstream (hostEnv overrides; undefined removes).
  const env = Object.fromEntries(
    Object.entries({
      PATH: process.env.PATH,
      MOSAIC_CLAUDE_BIN: CLAUDE_BIN,
      ANTHROPIC_AUTH_TOKEN: "stand-in-proxy-token",
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: "stand-in-api-key",
      LANG: "C.UTF-8",
      ...hostEnv,
    }).filter(([, v]) => v !== undefined),
  );
  // The facts the session is planned and bound with are the ones its launch was decided on.
  const facts: HostFacts = {
    ...setup.hostFacts,
    home: setup.founderHome,
    claude: { path: CLAUDE_BIN, realPath: realpathSync(CLAUDE_BIN) },
  };
  const plan = decideExample(example, name, ws, run, facts, env);
  writeBundle(plan.bundleDir, plan.bundle);
  if (plan.harness === "claude-code")
    warmGateCache(setup.hostFacts.node.path, REPO_ROOT, gateCompileCacheDir(plan.bundleDir));
  const harness = plan.harness;
  const gate = importGraph([
    join(REPO_ROOT, harness === "pi" ? "src/host/pi-extension.ts" : "src/host/claude-gate.ts"),
  ]);
  if (harness === "pi") {
    // Pi ignores ANTHROPIC_BASE_URL; the bundle's models.json routes its provider to the in-sandbox
    // model port with the placeholder key, and Pi reads it from its agent dir, as the launcher copies it.
    const agentDir = plan.adapter.env.PI_CODING_AGENT_DIR!;
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "models.json"), plan.bundle["models.json"]!);
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
  }
  const runner = join(R, "runner-stand-in.ts");
  writeFileSync(runner, "// the runner is not built yet; the session command replaces it\n");
  const spec: SandboxSpec = {
    harness,
    repo: REPO_ROOT,
    runnerFiles: [runner, ...gate.files, ...modelFrontFiles()],
    runner,
    adapter: runner,
    brokerSocket: setup.brokerSocket,
    launchSocket: join(R, "sock/launch.sock"),
    mayLaunch: false,
    workspace: ws,
    runDir: run,
  };
  return {
    plan,
    spec,
    facts,
    ws,
    run,
    home,
    gatePackages: gate.packages,
    apiUrl,
    hostEnv: env,
    egressLog: egressLogPath(join(R, "state"), name),
  };
}

/** The session's workspace and run directory, and the seed of its HOME. */
function layOutRun(root: string, name: string): { ws: string; run: string; home: string } {
  const { ws, run } = layOutSession({ data: join(root, "data") }, name);
  const home = join(run, "home-seed");
  mkdirSync(home, { recursive: true });
  return { ws, run, home };
}

/** The shipped example instance, decided as the launcher decides it; anything but a launch throws. */
function decideExample(
  example: "claude-coder" | "pi-coder",
  name: string,
  ws: string,
  run: string,
  facts: HostFacts,
  env: Record<string, string | undefined>,
) {
  const instance = exampleInstance(example, { workspace: ws, run: name });
  const decision = decideLaunch(
    instance,
    exampleSettings(),
    readLaunchFacts(facts, { repo: REPO_ROOT, runDir: run }),
    env,
  );
  if (decision.kind !== "launch") throw new Error(`the example did not plan: ${decision.code}: ${decision.message}`);
  return decision.plan;
}

/**
 * The adapter's command, in the workspace, inside the sandbox, with the message appended. The
 * turn's stdout and stderr also go to `<run>/turns/turn.log`, which a failed test keeps.
 */
export async function runLiveTurn(
  s: LiveSession,
  message: string,
  table: Bind[] = binds(s.spec, s.facts, realFsView()),
  editArgv: (argv: string[]) => string[] = (a) => a,
): Promise<ProcessResult> {
  const argv = editArgv(bwrapArgv(s.spec, s.facts, table));
  const dd = argv.lastIndexOf("--");
  // The session's network is its own loopback: the front forwards the model port to the host's
  // proxy on <run>/sock/model.sock, which adds the real credential and logs each request.
  const socket = runSockets(s.run).model;
  const proxy = serveModelProxy({
    socket,
    upstream: s.apiUrl,
    credential: upstreamCredential(s.plan.credentialSet, s.hostEnv),
    mode: "model-only",
    egressLog: s.egressLog,
  });
  await proxy.listening;
  const inner = [
    "/bin/sh",
    "-c",
    'cp -a "$0/." "$HOME/" && cd "$1" && shift 2 && exec "$@"',
    s.home,
    s.plan.adapter.cwd,
    "_",
    ...modelFrontArgv(s.facts.node.path, s.run, s.modelPort),
    ...s.plan.adapter.argv,
    message,
  ];
  const r = await runConfined({
    command: [...argv.slice(0, dd + 1), ...inner],
    env: s.plan.adapter.env,
    facts: s.facts,
    timeoutMs: 60_000,
    asSession: { trees: [s.ws, s.run] },
  }).finally(() => proxy.close());
  appendFileSync(
    join(s.run, "turns/turn.log"),
    [
      `$ ${s.plan.adapter.argv.join(" ")} ${message}`,
      `exit ${r.status} signal ${r.signal} timedOut ${r.timedOut}`,
      "-- stdout",
      r.stdout,
      "-- stderr",
      r.stderr,
      "",
    ].join("\n"),
  );
  return r;
}
