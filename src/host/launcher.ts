// The launcher: one resolved instance in, a running confined session out, or a refusal that leaves
// nothing behind. Seed 000 and 002, step by step: decideLaunch(), planSession(), the run directory,
// bwrap with sessionEnv() only, the capability on the runner's stdin, the launch recorded; on stop
// SIGTERM to the runner every second until it is gone; at the end the capability voided.
import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gateCompileCacheDir } from "../core/bundle/hook.ts";
import { MosaicError } from "../core/errors.ts";
import { decideLaunch, type LaunchPlan } from "../core/launch/decide-launch.ts";
import type { LaunchSettings, ResolvedInstance } from "../core/launch/instance.ts";
import type { RefusalCode } from "../core/route/refusals.ts";
import { sessionCgroupName } from "../core/sandbox/cgroups.ts";
import { bindNeeds, reachProblem } from "../core/sandbox/reach.ts";
import type { HostFacts } from "../core/sandbox/types.ts";
import { launchEndReason, sessionExit, type SessionEnd } from "../core/session/exit.ts";
import {
  planSession,
  RUNNER_ENTRY,
  sessionCommand,
  type AdapterChoice,
  type SessionPlan,
} from "../core/session/plan-session.ts";
import type { SessionFile } from "../core/runner/session-file.ts";
import { readHostFacts } from "./host-facts.ts";
import { importGraph } from "./import-graph.ts";
import { readLaunchFacts } from "./launch-facts.ts";
import { LaunchRegistry } from "./launch-registry.ts";
import { makeSessionCgroups, removeSessionCgroups } from "./session-cgroups.ts";
import { handOver } from "./handover.ts";
import { statChain } from "./reach.ts";
import { holdToolSocket, type HeldSocket } from "./tool-socket-listen.ts";
import { removeMountStubs } from "./mount-stubs.ts";
import { prepareRunnerNode } from "./runner-node.ts";
import { prepareSeccompFile } from "./sandbox-probe.ts";
import { spawnSandbox } from "./sandbox-spawn.ts";
import { childrenOf, isAlive } from "./session-procs.ts";
import { realFsView } from "./fs-view.ts";
import { writeBundle } from "./write-bundle.ts";
import { warmGateCache } from "./warm-gate-cache.ts";
import { MCP_SERVER_PACKAGES } from "./mcp-packages.ts";
import { egressLogPath, serveModelProxy, type ModelProxy, type ModelProxyOptions } from "./model-proxy.ts";
import { upstreamCredential, upstreamUrl } from "../core/network/placeholder.ts";
import { checkWorkspace } from "./workspace-check.ts";
import type { WorkspaceCheck } from "../core/workspace/remedy.ts";

/** The bus, as the launcher needs it: a capability bound to the run, voided when the run ends. */
export interface Bus {
  issueCapability(binding: { run: string; instance: string }): string;
  endRun(run: string): void;
}

export interface LaunchRequest {
  instance: ResolvedInstance;
  settings: LaunchSettings;
  hostEnv: Readonly<Record<string, string | undefined>>;
  repo: string;
  /** This launch's run directory; it must not exist yet. */
  runDir: string;
  /** The host's own state: launch records, the runner's node, the seccomp program. */
  stateDir: string;
  brokerSocket: string;
  launchSocket: string;
  bus: Bus;
  adapter?: AdapterChoice;
  timings?: Partial<Pick<SessionFile, "turnTimeoutSeconds" | "brokerRetries" | "pollMs" | "brokerTimeoutSeconds">>;
  bwrap?: string;
  /** Where the model proxy sends this session's model calls; the host's ANTHROPIC_BASE_URL, else the public API. */
  modelUpstream?: string;
  /** The model proxy's grants and bounds changed on purpose: a live test's positive control only. */
  modelProxy?: Pick<ModelProxyOptions, "grants" | "limits">;
  /** Called when the session's bwrap has started, before the capability is written: a test's hook for the fork race. */
  onSpawn?: (child: ChildProcess) => void;
}

/** How a session ended; `workspace`: the end-of-session check of its workspace (docs/hardening.md). */
export type LaunchEnd = { end: SessionEnd; reason: string; stderr: string; workspace: WorkspaceCheck };

export interface Session {
  run: string;
  runDir: string;
  /** bwrap's pid. */
  pid: number;
  plan: SessionPlan;
  exited: Promise<LaunchEnd>;
  /** The runner's stderr so far. */
  stderr(): string;
  /** SIGTERM to the runner, again every second, until the session is gone. */
  stop(): Promise<LaunchEnd>;
}

export type LaunchResult =
  | { kind: "refuse"; code: RefusalCode; message: string }
  | { kind: "launched"; session: Session };

/** A launch decided and planned, with nothing yet on disk: what start() carries out. */
export interface PreparedLaunch {
  req: LaunchRequest;
  launch: LaunchPlan;
  facts: HostFacts;
  session: SessionPlan;
}

/** Every repository file the runner and what the harness starts inside the sandbox load. */
export function sessionRunnerFiles(repo: string, harness: "pi" | "claude-code"): string[] {
  const entries = [
    RUNNER_ENTRY,
    ...(harness === "pi" ? ["src/host/pi-extension.ts"] : ["src/host/claude-gate.ts", "src/host/mcp-server.ts"]),
  ];
  return importGraph(entries.map((e) => join(repo, e))).files;
}

const STOP_EVERY_MS = 1000;

/** decideLaunch() and planSession(): a refusal, or the whole plan, and nothing on disk yet. */
export function prepareLaunch(
  req: LaunchRequest,
): { kind: "refuse"; code: RefusalCode; message: string } | { kind: "ready"; prepared: PreparedLaunch } {
  const { instance, repo, runDir } = req;
  // Read once: the decision's preflight and sandbox probe and the session's plan see one machine.
  const facts: HostFacts = readHostFacts({ repo, env: { ...req.hostEnv }, stateDir: req.stateDir });
  const launchFacts = readLaunchFacts(facts, {
    repo,
    runDir,
    ...(req.bwrap !== undefined ? { bwrap: req.bwrap } : {}),
  });
  const decision = decideLaunch(instance, req.settings, launchFacts, req.hostEnv);
  if (decision.kind === "refuse") return decision;
  const plan = decision.plan;
  const adapter = req.adapter ?? { kind: "harness" };
  const session = planSession({
    plan,
    instance,
    facts,
    fs: realFsView(),
    repo,
    runDir,
    brokerSocket: req.brokerSocket,
    launchSocket: req.launchSocket,
    runnerFiles: [...sessionRunnerFiles(repo, plan.harness), ...(adapter.kind === "fake" ? [adapter.script] : [])],
    packages: MCP_SERVER_PACKAGES.map((p) => join(repo, "node_modules", p.name)),
    adapter,
    hostEnv: req.hostEnv,
    ...(req.timings !== undefined ? { timings: req.timings } : {}),
  });
  return { kind: "ready", prepared: { req, launch: plan, facts, session } };
}

/** prepareLaunch(), then start(). */
export async function launch(req: LaunchRequest): Promise<LaunchResult> {
  const p = prepareLaunch(req);
  return p.kind === "refuse" ? p : { kind: "launched", session: start(p.prepared) };
}

/**
 * Carries out a prepared launch: the run directory, the bundle, session.json, bwrap with
 * sessionEnv() only, the capability on the runner's stdin, the launch recorded. The live tier's
 * positive controls change a prepared plan on purpose before this step; a launch never does.
 */
export function start(prepared: PreparedLaunch): Session {
  const { req, facts, session } = prepared;
  const plan = prepared.launch;
  const { instance, repo, runDir } = req;

  // Before anything of the run is on disk: the session's identity can use every bind's source.
  prepareRunnerNode(facts.runnerNode, facts.node.path);
  checkReach(session, facts, [instance.workspace, runDir]);
  // A root caller's session runs as its own unprivileged identity, which must own its workspace.
  const owner = facts.uid === 0 ? facts.session : null;
  if (owner !== null) handOver(instance.workspace, owner);
  // The run directory, from nothing: a refusal above left none behind.
  try {
    mkdirSync(runDir, { mode: 0o700 }); // safety: run-dir-reused
  } catch (e) {
    throw new MosaicError(
      "run-dir-exists",
      runDir,
      `cannot make the run directory: ${(e as NodeJS.ErrnoException).code}; a run directory is made once per launch`,
    );
  }
  const registry = new LaunchRegistry(join(req.stateDir, "launches"));
  let cgroups: string[] = [];
  let proxy: ModelProxy | null = null;
  let tools: HeldSocket | null = null;
  let spawned: ChildProcess | null = null;
  try {
    for (const d of ["turns", "session", join("session", "pi-agent"), "sock"])
      mkdirSync(join(runDir, d), { mode: 0o700 });
    mkdirSync(join(runDir, "home"), { mode: 0o700 });
    chmodSync(join(runDir, "home"), 0o700);
    writeBundle(plan.bundleDir, plan.bundle);
    if (plan.harness === "claude-code") warmGateCache(facts.node.path, repo, gateCompileCacheDir(plan.bundleDir));
    writeFileSync(join(runDir, "session.json"), JSON.stringify(session.sessionFile, null, 2) + "\n", { mode: 0o600 });
    // Pi reads models.json from its agent dir only; the bundle's copy is the one the manifest digests.
    if (plan.bundle["models.json"] !== undefined)
      writeFileSync(join(plan.adapter.env.PI_CODING_AGENT_DIR!, "models.json"), plan.bundle["models.json"], {
        mode: 0o600,
      });
    const model = session.sessionFile.model;
    if (model !== null) {
      proxy = serveModelProxy({
        socket: model.socket,
        upstream: req.modelUpstream ?? upstreamUrl(req.hostEnv),
        credential: upstreamCredential(plan.credentialSet, req.hostEnv),
        mode: instance.network,
        egressLog: egressLogPath(req.stateDir, instance.run), // safety: egress-log-in-run
        grants: instance.modelGrants,
        ...req.modelProxy,
      });
      // node binds a Unix socket's path synchronously in listen(): the file is there for bwrap to bind.
      chmodSync(model.socket, 0o600);
    }
    tools = holdToolSocket(session.sessionFile.toolSocket.path, owner);
    const seccompFile = prepareSeccompFile(req.stateDir, facts.arch);
    // The session owns its run directory; bundle/, session.json and sock/ stay read-only by their binds.
    if (owner !== null) handOver(runDir, owner);
    // A root caller's session is bounded by its own pids and memory cgroups (docs/hardening.md).
    // safety: launcher-no-pids-cgroup
    if (facts.uid === 0)
      cgroups = makeSessionCgroups(facts.cgroups, sessionCgroupName(instance.run, process.pid, Date.now()));

    // A root caller's session drops to its own identity here, whatever a control did to the argv.
    const child = spawnSandbox({
      command: sessionCommand(facts, session.argv),
      env: session.env,
      seccompFile,
      cgroupProcs: cgroups.map((c) => join(c, "cgroup.procs")),
      toolSocketFd: tools.fd,
      stdio: ["pipe", "ignore", "pipe"],
    });
    spawned = child;
    // A command that could not start has no pid and emits "error" later: refused here, not the host's crash.
    child.on("error", () => {});
    if (child.pid === undefined)
      throw new MosaicError("sandbox-spawn", child.spawnfile, "the sandbox's command could not start");
    // The sandbox holds its own copy of the tool socket now; the host never accepts on it.
    tools.release();
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin!.on("error", () => {});
    registry.record({
      run: instance.run,
      instance: instance.instance,
      runDir,
      pid: child.pid!,
      startedAt: new Date().toISOString(),
      mountStubs: session.mountStubs,
      cgroups,
      workspace: instance.workspace,
      quarantine: join(req.stateDir, "quarantine", instance.run),
      end: null,
    });
    req.onSpawn?.(child);
    // The capability goes on the runner's stdin, never to disk, argv or the environment.
    const cap = req.bus.issueCapability({ run: instance.run, instance: instance.instance });
    child.stdin!.end(JSON.stringify({ cap }) + "\n"); // safety: cap-on-disk

    const exited = new Promise<LaunchEnd>((resolve) => {
      // bwrap's exit ends the launch: the run's capabilities are voided at once, so a runner that
      // outlived its bwrap (the fork race of choice 1) stops at its next poll. Its stderr may
      // still be open then, so the end waits for it only briefly.
      child.on("exit", (code, signal) => {
        req.bus.endRun(instance.run); // safety: run-not-ended
        void proxy?.close();
        const end = sessionExit(code, signal);
        const reason = end.kind === "code" ? launchEndReason(end.code) : "killed";
        removeMountStubs(session.mountStubs);
        rmSync(session.sessionFile.toolSocket.path, { force: true });
        const cg = cgroups;
        void (async () => {
          await Promise.race([new Promise((r) => child.once("close", r)), new Promise((r) => setTimeout(r, 500))]);
          await removeSessionCgroups(cg);
          // Nothing of the session runs now: what it left for the host's git to run or write through goes.
          const workspace = checkWorkspace(instance.workspace, join(req.stateDir, "quarantine", instance.run)); // safety: ws-check-at-end
          registry.end(instance.run, reason, end.kind === "code" ? `exit ${end.code}` : end.signal, workspace);
          resolve({ end, reason, stderr, workspace });
        })();
      });
    });
    const stop = async (): Promise<LaunchEnd> => {
      let done = false;
      void exited.then(() => (done = true));
      // Again every second: the runner is pid 1 of its namespace, and a SIGTERM before its handler is lost.
      // safety: stop-signals-once
      while (!done && isAlive(child.pid!)) {
        // The runner is bwrap's child; bwrap itself does not pass signals on.
        for (const pid of childrenOf(child.pid!)) {
          try {
            process.kill(pid, "SIGTERM"); // safety: stop-never-signals
          } catch {
            // gone between the read and the kill
          }
        }
        await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_EVERY_MS))]);
      }
      return exited;
    };
    return { run: instance.run, runDir, pid: child.pid!, plan: session, exited, stderr: () => stderr, stop };
  } catch (e) {
    void proxy?.close();
    tools?.release();
    const cg = cgroups;
    if (spawned?.pid !== undefined) {
      // A failure after the spawn ends the sandbox it started: no session outlives a launch that threw.
      // start() runs in one tick, so the sandbox is not reaped yet and its pid is still its own.
      const sandbox = spawned;
      req.bus.endRun(instance.run);
      for (const pid of [...childrenOf(sandbox.pid!), sandbox.pid!]) {
        try {
          process.kill(pid, "SIGKILL"); // safety: launch-failure-leaves-sandbox
        } catch {
          // gone meanwhile
        }
      }
      sandbox.once("exit", () => {
        removeMountStubs(session.mountStubs);
        void removeSessionCgroups(cg);
        registry.end(instance.run, "launch-failed", String(e));
      });
    } else void removeSessionCgroups(cg);
    rmSync(runDir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Refuses a plan whose bind sources the session's identity cannot use (BIND_NEEDS), naming the
 * path, before bwrap fails on it with "Can't find source path".
 */
function checkReach(session: SessionPlan, facts: HostFacts, owned: readonly string[]): void {
  for (const n of bindNeeds(session.binds, owned)) {
    const why = reachProblem(facts.session, statChain(n.source), n.need);
    if (why !== null)
      throw new MosaicError(
        "bind-unreachable",
        n.source,
        `the session (uid ${facts.session.uid}) cannot use this ${n.row} bind: ${why}`,
      );
  }
}
