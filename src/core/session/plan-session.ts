import { MosaicError } from "../errors.ts";
import { MODEL_PORT } from "../network/egress.ts";
import type { FsView } from "../gate/fs-view.ts";
import type { LaunchPlan } from "../launch/decide-launch.ts";
import type { ResolvedInstance } from "../launch/instance.ts";
import { binds, mountStubs } from "../sandbox/binds.ts";
import { bwrapArgv } from "../sandbox/bwrap-argv.ts";
import { TOOL_SOCKET_FD, runSockets } from "../runner/run-paths.ts";
import type { MountStub } from "../sandbox/protected.ts";
import type { Bind, HostFacts, SandboxSpec } from "../sandbox/types.ts";
import { RUNNER_DEFAULTS, SESSION_FILE_VERSION, type SessionFile } from "../runner/session-file.ts";
import { planRunnerBounds } from "../runner/bounds.ts";
import { heldActions } from "../tools/catalog.ts";
import { sessionEnv } from "./env.ts";
import { identityFilesDir, planHostSide, type HostPlan } from "./host-plan.ts";

/** The runner's entry, relative to the checkout. */
export const RUNNER_ENTRY = "src/host/runner/main.ts";

export { MODEL_PORT } from "../network/egress.ts";

/**
 * Which adapter runs each turn: the harness's own (the planned Claude Code or Pi command), or the
 * fake adapter for tests and scenarios, a shell that runs each message's body.
 */
export type AdapterChoice = { kind: "harness" } | { kind: "fake"; script: string };

export interface SessionInputs {
  plan: LaunchPlan;
  instance: ResolvedInstance;
  facts: HostFacts;
  /** The workspace as it is now, for the protected paths. */
  fs: FsView;
  repo: string;
  runDir: string;
  brokerSocket: string;
  launchSocket: string;
  /** Every repository file the runner and what the harness starts inside load (the host's import walk). */
  runnerFiles: string[];
  /** Package directories the harness's helpers load (Claude Code's MCP server). */
  packages: string[];
  adapter: AdapterChoice;
  /** The host's environment: only ENV_ALLOW of it reaches the sandbox. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  timings?: Partial<Pick<SessionFile, "turnTimeoutSeconds" | "brokerRetries" | "pollMs" | "brokerTimeoutSeconds">>;
  /** The host's own state: launch records, the seccomp program, the quarantine, the egress log. */
  stateDir: string;
  /** Makes the launch's cgroup names unique. */
  launchedAt: { hostPid: number; now: number };
  /** Where the model proxy sends the session's model calls; the host's ANTHROPIC_BASE_URL, else the public API. */
  modelUpstream?: string;
}

/** Every decision of one launch: the sandbox (spec, binds, argv, session.json, env) and the host's side (HostPlan). */
export interface SessionPlan extends HostPlan {
  spec: SandboxSpec;
  binds: Bind[];
  /** bwrap's command line; the launcher runs it behind the identity's drop (sessionCommand()). */
  argv: string[];
  /** The mount points bwrap will make in the workspace; the launcher removes them afterwards. */
  mountStubs: MountStub[];
  sessionFile: SessionFile;
  /** The environment bwrap (and so the runner) starts with. */
  env: Record<string, string>;
}

/**
 * The harness's argv with its binary absolute: inside the sandbox PATH reaches only /usr, so
 * Claude Code runs from the path the host resolved (MOSAIC_CLAUDE_BIN, or claude on PATH), the one
 * the bind table binds.
 */
function harnessCommand(plan: LaunchPlan, facts: HostFacts): string[] {
  const [bin, ...rest] = plan.adapter.argv;
  if (bin === undefined) throw new MosaicError("adapter-empty", "adapter.argv", "the planned harness command is empty");
  if (bin.startsWith("/")) return [...plan.adapter.argv];
  if (plan.harness !== "claude-code" || facts.claude === undefined)
    throw new MosaicError(
      "adapter-not-found",
      "adapter.argv[0]",
      `${JSON.stringify(bin)} is not an absolute path and the host resolved no Claude Code binary (set MOSAIC_CLAUDE_BIN)`,
    );
  return [facts.claude.path, ...rest];
}

/** bwrap's argv as the launcher runs it: a root caller drops to the session's identity first (identity.drop). */
export function sessionCommand(plan: Pick<SessionPlan, "identity" | "argv">): string[] {
  return [...plan.identity.drop, ...plan.argv]; // safety: start-skips-drop
}

/** The turn's command: the fake adapter's shell, or the harness's own argv, with HOME and TMPDIR the sandbox's. */
function planAdapter(inp: SessionInputs, harnessArgv: string[], fake: string | null): SessionFile["adapter"] {
  const { plan, instance } = inp;
  return fake !== null
    ? // The fake adapter starts in the run directory and cds into the workspace itself, so a sandbox
      // without its workspace (a positive control) still runs the turn and shows the write fail.
      {
        argv: ["/bin/sh", fake],
        env: {
          ...sessionEnv(inp.hostEnv),
          MOSAIC_WORKSPACE: instance.workspace,
          HOME: `${inp.runDir}/home`,
          TMPDIR: "/tmp",
        },
        cwd: inp.runDir,
      }
    : {
        argv: harnessArgv,
        env: { ...plan.adapter.env, HOME: `${inp.runDir}/home`, TMPDIR: "/tmp" },
        cwd: plan.adapter.cwd,
      };
}

/** session.json: what the runner is told about its session; no secret. */
function planSessionFile(
  inp: SessionInputs,
  adapter: SessionFile["adapter"],
  mayLaunch: boolean,
  fake: boolean,
): SessionFile {
  const { plan, instance } = inp;
  return {
    version: SESSION_FILE_VERSION,
    business: instance.business,
    instance: instance.instance,
    role: instance.role,
    run: instance.run,
    runDir: inp.runDir,
    workspace: instance.workspace,
    brokerSocket: inp.brokerSocket,
    launchSocket: mayLaunch ? inp.launchSocket : null,
    adapter,
    turnEnd: fake ? { kind: "exit", why: "the fake adapter's exit status is the turn's" } : plan.turnEnd,
    // safety: tripwire-off
    tripwire: fake ? null : plan.tripwire,
    turnTimeoutSeconds: inp.timings?.turnTimeoutSeconds ?? RUNNER_DEFAULTS.turnTimeoutSeconds,
    brokerRetries: inp.timings?.brokerRetries ?? RUNNER_DEFAULTS.brokerRetries,
    pollMs: inp.timings?.pollMs ?? RUNNER_DEFAULTS.pollMs,
    brokerTimeoutSeconds: inp.timings?.brokerTimeoutSeconds ?? RUNNER_DEFAULTS.brokerTimeoutSeconds,
    model: instance.network === "none" ? null : { port: MODEL_PORT, socket: runSockets(inp.runDir).model },
    toolSocket: { path: runSockets(inp.runDir).tools, fd: TOOL_SOCKET_FD },
    bounds: planRunnerBounds(fake ? { kind: "exit" } : plan.turnEnd),
  };
}

/**
 * One path from a launch plan to a running session (issue 9): the sandbox spec, its binds and
 * bwrap argv, session.json, and the host's side of the launch (HostPlan), all from the plan and
 * the host's facts. No caller builds a spec by hand, and start() decides nothing of its own.
 * Throws a MosaicError where the sandbox cannot confine the session.
 */
export function planSession(inp: SessionInputs): SessionPlan {
  const { plan, instance } = inp;
  const runner = `${inp.repo}/${RUNNER_ENTRY}`;
  const fake = inp.adapter.kind === "fake" ? inp.adapter.script : null;
  const harnessArgv = fake === null ? harnessCommand(plan, inp.facts) : [];
  const adapterFile = fake ?? (plan.harness === "pi" ? harnessArgv[1]! : harnessArgv[0]!);
  const mayLaunch = heldActions(instance.actions).includes("launch"); // safety: may-launch-always
  const spec: SandboxSpec = {
    harness: plan.harness,
    repo: inp.repo,
    runnerFiles: [...new Set([runner, ...inp.runnerFiles])].sort(),
    runner,
    adapter: adapterFile,
    brokerSocket: inp.brokerSocket,
    launchSocket: inp.launchSocket,
    mayLaunch,
    workspace: instance.workspace,
    runDir: inp.runDir,
    packages: plan.harness === "claude-code" ? [...inp.packages].sort() : [],
    etcIdentity: {
      passwd: `${identityFilesDir(inp.stateDir, instance.run)}/passwd`,
      group: `${identityFilesDir(inp.stateDir, instance.run)}/group`,
    },
  };
  const table = binds(spec, inp.facts, inp.fs);
  const argv = bwrapArgv(spec, inp.facts, table);
  const sessionFile = planSessionFile(inp, planAdapter(inp, harnessArgv, fake), mayLaunch, fake !== null);
  const host = planHostSide({
    facts: inp.facts,
    stateDir: inp.stateDir,
    runDir: inp.runDir,
    run: instance.run,
    workspace: instance.workspace,
    network: instance.network,
    grants: instance.modelGrants,
    credentialSet: plan.credentialSet,
    hostEnv: inp.hostEnv,
    ...(inp.modelUpstream !== undefined ? { modelUpstream: inp.modelUpstream } : {}),
    bundleDir: plan.bundleDir,
    piAgentDir: plan.adapter.env.PI_CODING_AGENT_DIR ?? null,
    hasModelsFile: plan.bundle["models.json"] !== undefined,
    harness: plan.harness,
    launchedAt: inp.launchedAt,
    argv,
    binds: table,
  });
  return {
    spec,
    binds: table,
    argv,
    mountStubs: mountStubs(spec, inp.fs),
    sessionFile,
    env: sessionEnv(inp.hostEnv),
    ...host,
  };
}
