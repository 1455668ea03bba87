import { MosaicError } from "../errors.ts";
import { MODEL_PORT } from "../network/egress.ts";
import type { FsView } from "../gate/fs-view.ts";
import type { LaunchPlan } from "../launch/decide-launch.ts";
import type { ResolvedInstance } from "../launch/instance.ts";
import { binds, mountStubs } from "../sandbox/binds.ts";
import { bwrapArgv } from "../sandbox/bwrap-argv.ts";
import { dropToSession } from "../sandbox/identity.ts";
import { TOOL_SOCKET_FD, runSockets } from "../runner/run-paths.ts";
import type { MountStub } from "../sandbox/protected.ts";
import type { Bind, HostFacts, SandboxSpec } from "../sandbox/types.ts";
import { RUNNER_DEFAULTS, SESSION_FILE_VERSION, type SessionFile } from "../runner/session-file.ts";
import { planRunnerBounds } from "../runner/bounds.ts";
import { heldActions } from "../tools/catalog.ts";
import { sessionEnv } from "./env.ts";

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
}

export interface SessionPlan {
  spec: SandboxSpec;
  binds: Bind[];
  /** bwrap's command line; the launcher runs it behind sessionCommand()'s drop to the session's identity. */
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

/** bwrap's argv as the launcher runs it: a root caller drops to the session's identity first. */
export function sessionCommand(facts: HostFacts, argv: readonly string[]): string[] {
  return [...dropToSession(facts), ...argv];
}

/**
 * One path from a launch plan to a running session (issue 9): the sandbox spec, its binds and
 * bwrap argv, and session.json, all from the plan and the host's facts. No caller builds a spec by
 * hand. Throws a MosaicError where the sandbox cannot confine the session.
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
  };
  const table = binds(spec, inp.facts, inp.fs);
  const adapter =
    fake !== null
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
  const sessionFile: SessionFile = {
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
    turnEnd: fake !== null ? { kind: "exit", why: "the fake adapter's exit status is the turn's" } : plan.turnEnd,
    // safety: tripwire-off
    tripwire: fake !== null ? null : plan.tripwire,
    turnTimeoutSeconds: inp.timings?.turnTimeoutSeconds ?? RUNNER_DEFAULTS.turnTimeoutSeconds,
    brokerRetries: inp.timings?.brokerRetries ?? RUNNER_DEFAULTS.brokerRetries,
    pollMs: inp.timings?.pollMs ?? RUNNER_DEFAULTS.pollMs,
    brokerTimeoutSeconds: inp.timings?.brokerTimeoutSeconds ?? RUNNER_DEFAULTS.brokerTimeoutSeconds,
    model: instance.network === "none" ? null : { port: MODEL_PORT, socket: runSockets(inp.runDir).model },
    toolSocket: { path: runSockets(inp.runDir).tools, fd: TOOL_SOCKET_FD },
    bounds: planRunnerBounds(fake !== null ? { kind: "exit" } : plan.turnEnd),
  };
  return {
    spec,
    binds: table,
    argv: bwrapArgv(spec, inp.facts, table),
    mountStubs: mountStubs(spec, inp.fs),
    sessionFile,
    env: sessionEnv(inp.hostEnv),
  };
}
