// The launcher: one resolved instance in, a running confined session out, or a refusal that leaves
// nothing behind. prepareLaunch() decides everything (decideLaunch(), planSession(): the sandbox
// and the host's side of the launch); start() carries that plan out and decides nothing: each
// resource it acquires is held with its release (launch-resources.ts), so a failure at any step
// releases exactly what was acquired, newest first, and a session's end releases the same way.
import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MosaicError } from "../core/errors.ts";
import { decideLaunch, type LaunchFacts, type LaunchPlan } from "../core/launch/decide-launch.ts";
import type { LaunchSettings, ResolvedInstance } from "../core/launch/instance.ts";
import type { RefusalCode } from "../core/route/refusals.ts";
import { bindNeeds, reachProblem } from "../core/sandbox/reach.ts";
import { seccompProgram } from "../core/sandbox/seccomp.ts";
import type { HostFacts } from "../core/sandbox/types.ts";
import type { FsView } from "../core/gate/fs-view.ts";
import { launchEndReason, sessionExit, type SessionEnd } from "../core/session/exit.ts";
import {
  planSession,
  RUNNER_ENTRY,
  sessionCommand,
  type AdapterChoice,
  type SessionPlan,
} from "../core/session/plan-session.ts";
import type { SessionFile } from "../core/runner/session-file.ts";
import type { WorkspaceCheck } from "../core/workspace/remedy.ts";
import { readHostFacts } from "./host-facts.ts";
import { importGraph } from "./import-graph.ts";
import { readLaunchFacts } from "./launch-facts.ts";
import { LaunchRegistry } from "./launch-registry.ts";
import { LaunchResources, type Ending } from "./launch-resources.ts";
import { killCgroupProcs, makeSessionCgroups, removeSessionCgroups } from "./session-cgroups.ts";
import { handOver } from "./handover.ts";
import { statChain } from "./reach.ts";
import { holdToolSocket } from "./tool-socket-listen.ts";
import { removeMountStubs } from "./mount-stubs.ts";
import { prepareRunnerNode } from "./runner-node.ts";
import { writeSeccompProgram } from "./sandbox-probe.ts";
import { spawnSandbox } from "./sandbox-spawn.ts";
import { childrenOf, isAlive } from "./session-procs.ts";
import { realFsView } from "./fs-view.ts";
import { writeBundle } from "./write-bundle.ts";
import { warmGateCache } from "./warm-gate-cache.ts";
import { MCP_SERVER_PACKAGES } from "./mcp-packages.ts";
import { serveModelProxy } from "./model-proxy.ts";
import { checkWorkspace } from "./workspace-check.ts";
import { releaseWorkspaceLock, takeHostLock, takeWorkspaceLock } from "./workspace-lock.ts";

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
  /** The host's own state: launch records, locks, the runner's node, the seccomp program. */
  stateDir: string;
  brokerSocket: string;
  launchSocket: string;
  bus: Bus;
  adapter?: AdapterChoice;
  timings?: Partial<Pick<SessionFile, "turnTimeoutSeconds" | "brokerRetries" | "pollMs" | "brokerTimeoutSeconds">>;
  bwrap?: string;
  /** Where the model proxy sends this session's model calls; the host's ANTHROPIC_BASE_URL, else the public API. */
  modelUpstream?: string;
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

/** What a launch reads from the machine before it decides: the host's facts, the launch's own, the workspace as it is. */
export interface LaunchInputs {
  host: HostFacts;
  launch: LaunchFacts;
  fs: FsView;
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

/** Reads the machine once for a launch: its decision's preflight and probe and its plan see one machine. */
export function readLaunchInputs(req: LaunchRequest): LaunchInputs {
  const host = readHostFacts({ repo: req.repo, env: { ...req.hostEnv }, stateDir: req.stateDir });
  const launch = readLaunchFacts(host, {
    repo: req.repo,
    runDir: req.runDir,
    ...(req.bwrap !== undefined ? { bwrap: req.bwrap } : {}),
  });
  return { host, launch, fs: realFsView() };
}

/**
 * decideLaunch() and planSession(): a refusal, or the whole plan, and nothing on disk yet. The
 * machine is read here unless `inputs` were read already (readLaunchInputs) by a caller launching
 * many sessions on one host.
 */
export function prepareLaunch(
  req: LaunchRequest,
  inputs: LaunchInputs = readLaunchInputs(req),
): { kind: "refuse"; code: RefusalCode; message: string } | { kind: "ready"; prepared: PreparedLaunch } {
  const { instance, repo, runDir } = req;
  const facts = inputs.host;
  const decision = decideLaunch(instance, req.settings, { ...inputs.launch, repo, runDir }, req.hostEnv);
  if (decision.kind === "refuse") return decision;
  const plan = decision.plan;
  const adapter = req.adapter ?? { kind: "harness" };
  const session = planSession({
    plan,
    instance,
    facts,
    fs: inputs.fs,
    repo,
    runDir,
    brokerSocket: req.brokerSocket,
    launchSocket: req.launchSocket,
    runnerFiles: [...sessionRunnerFiles(repo, plan.harness), ...(adapter.kind === "fake" ? [adapter.script] : [])],
    packages: MCP_SERVER_PACKAGES.map((p) => join(repo, "node_modules", p.name)),
    adapter,
    hostEnv: req.hostEnv,
    stateDir: req.stateDir,
    launchedAt: { hostPid: process.pid, now: Date.now() },
    ...(req.modelUpstream !== undefined ? { modelUpstream: req.modelUpstream } : {}),
    ...(req.timings !== undefined ? { timings: req.timings } : {}),
  });
  return { kind: "ready", prepared: { req, launch: plan, facts, session } };
}

/** prepareLaunch(), then start(). */
export async function launch(req: LaunchRequest): Promise<LaunchResult> {
  const p = prepareLaunch(req);
  return p.kind === "refuse" ? p : { kind: "launched", session: await start(p.prepared) };
}

/**
 * Carries out a prepared launch, step by step, each resource held with its release: the
 * workspace's lock, the runner's node, the handover, the run directory and its files, the model
 * proxy, the tool socket, the cgroups, bwrap with the plan's environment only, the launch record,
 * the capability on the runner's stdin. A failure at any step releases what was acquired and
 * rejects with it. The live tier's positive controls change a prepared plan on purpose before this
 * step; a launch never does.
 */
export async function start(prepared: PreparedLaunch): Promise<Session> {
  const plan = prepared.session;
  const res = new LaunchResources();
  const end: EndRecord = { check: null, how: null };
  try {
    holdLock(res, prepared, end);
    holdIdentity(res, prepared);
    prepareRunnerNode(plan.runnerNode.path, plan.runnerNode.copyOf, plan.runnerNode.mode); // safety: start-skips-runner-node
    checkReach(plan);
    if (plan.identity.handOver !== null) handOver(plan.identity.handOver.workspace, plan.identity.runAs);
    makeRun(res, prepared);
    const proxy = startModelProxy(res, plan);
    const sandbox = spawnSession(res, prepared);
    const s = sessionOf(res, prepared, sandbox, end);
    // The proxy's process and the sandbox start side by side; the runner claims only once it has
    // its capability, and it gets that only from a launch whose proxy listens. A session that has
    // ended already ended its proxy with it: its end has released everything.
    await proxy.catch((e: unknown) => {
      if (sandbox.child.exitCode === null && sandbox.child.signalCode === null) throw e;
    });
    // A sandbox that ended meanwhile ended its run, whose capabilities stay void: the session is
    // returned ended, for its caller to read how, rather than the broker's refusal of its run.
    if (sandbox.child.exitCode !== null || sandbox.child.signalCode !== null) return s;
    // The capability goes on the runner's stdin, never to disk, argv or the environment.
    const cap = prepared.req.bus.issueCapability({ run: plan.sessionFile.run, instance: plan.sessionFile.instance });
    sandbox.child.stdin!.end(JSON.stringify({ cap }) + "\n"); // safety: cap-on-disk
    return s;
  } catch (e) {
    await res.release({ kind: "failed", error: e });
    throw e;
  }
}

/** What the session's end hands to the end-of-session step: how it ended, and what the check found. */
type EndRecord = { how: { reason: string; detail: string } | null; check: WorkspaceCheck | null };

/**
 * The workspace's lock, first: no step below runs on a tree a live session still writes. Its
 * release is the launch's last, after the end-of-session check and the launch's end recorded.
 */
function holdLock(res: LaunchResources, p: PreparedLaunch, end: EndRecord): void {
  const plan = p.session;
  const { run, workspace } = plan.sessionFile;
  takeWorkspaceLock(plan.lock, { run, workspace, hostPid: process.pid, at: new Date().toISOString() }); // safety: start-skips-lock
  res.hold("workspace lock", plan.lock, (lock) => releaseWorkspaceLock(lock, run));
  res.hold("end of session", null, (_, ending) => {
    const registry = new LaunchRegistry(plan.records);
    if (ending.kind === "failed") return void registry.end(run, "launch-failed", String(ending.error));
    // Nothing of the session runs now: what it left for the host's git to run or write through goes.
    // safety: ws-check-at-end
    end.check =
      plan.endCheck !== null ? checkWorkspace(plan.endCheck.workspace, plan.endCheck.quarantine) : unchecked(plan);
    registry.end(run, end.how?.reason ?? "ended", end.how?.detail ?? "", end.check);
  });
}

/**
 * A root caller's session uid, held for the session's life so no other live session runs as it,
 * and the session's own passwd and group files, written where the session cannot change them.
 */
function holdIdentity(res: LaunchResources, p: PreparedLaunch): void {
  const plan = p.session;
  const { run, workspace } = plan.sessionFile;
  const uid = plan.identity.runAs.uid;
  // safety: session-uid-unlocked-start
  if (plan.uidLock !== null) {
    const holder = { run, workspace, hostPid: process.pid, at: new Date().toISOString() };
    takeHostLock(
      plan.uidLock,
      holder,
      (line) => new MosaicError("session-uid-busy", plan.uidLock!, `uid ${uid} runs another session (${line})`),
    );
    res.hold("session uid", plan.uidLock, (lock) => releaseWorkspaceLock(lock, run));
  }
  const f = plan.identityFiles;
  mkdirSync(f.dir, { recursive: true, mode: 0o755 });
  res.hold("identity files", f.dir, (dir) => rmSync(dir, { recursive: true, force: true }));
  chmodSync(f.dir, 0o755);
  for (const [name, text] of [
    ["passwd", f.passwd],
    ["group", f.group],
  ] as const) {
    writeFileSync(join(f.dir, name), text, { mode: 0o644 });
    chmodSync(join(f.dir, name), 0o644);
  }
}

/**
 * Refuses a plan whose bind sources the session's identity cannot use (BIND_NEEDS), naming the
 * path, before bwrap fails on it with "Can't find source path".
 */
function checkReach(plan: SessionPlan): void {
  const owned = [plan.sessionFile.workspace, plan.sessionFile.runDir];
  for (const n of bindNeeds(plan.binds, owned)) {
    const why = reachProblem(plan.identity.runAs, statChain(n.source), n.need);
    if (why !== null)
      throw new MosaicError(
        "bind-unreachable",
        n.source,
        `the session (uid ${plan.identity.runAs.uid}) cannot use this ${n.row} bind: ${why}`,
      );
  }
}

/** The run directory, from nothing, with its tree, bundle and files; removed again if the launch fails. */
function makeRun(res: LaunchResources, p: PreparedLaunch): void {
  const plan = p.session;
  const runDir = plan.sessionFile.runDir;
  try {
    mkdirSync(runDir, { mode: 0o700 }); // safety: run-dir-reused
  } catch (e) {
    throw new MosaicError(
      "run-dir-exists",
      runDir,
      `cannot make the run directory: ${(e as NodeJS.ErrnoException).code}; a run directory is made once per launch`,
    );
  }
  res.hold("run directory", runDir, (dir, ending) => {
    if (ending.kind === "failed") rmSync(dir, { recursive: true, force: true });
  });
  for (const d of plan.runTree) {
    mkdirSync(d.path, { mode: d.mode });
    // The umask may have taken bits from the mode mkdir was given.
    chmodSync(d.path, d.mode);
  }
  writeBundle(p.launch.bundleDir, p.launch.bundle);
  if (plan.gateCache !== null) warmGateCache(plan.gateCache.node, plan.spec.repo, plan.gateCache.dir);
  writeFileSync(join(runDir, "session.json"), JSON.stringify(plan.sessionFile, null, 2) + "\n", { mode: 0o600 });
  // Pi reads models.json from its agent dir only; the bundle's copy is the one the manifest digests.
  if (plan.piModels !== null) writeFileSync(plan.piModels, p.launch.bundle["models.json"] ?? "", { mode: 0o600 });
}

/**
 * The host's end of the session's model port: its socket made here, before the sandbox binds it
 * (serveModelProxy() binds it in this process), its own process serving it; closed when the launch
 * ends. Resolves once that process serves.
 */
function startModelProxy(res: LaunchResources, plan: SessionPlan): Promise<void> {
  const m = plan.modelProxy;
  if (m === null) return Promise.resolve();
  const proxy = res.hold(
    "model proxy",
    serveModelProxy({
      socket: m.socket,
      upstream: m.upstream,
      credential: m.credential,
      mode: m.mode,
      egressLog: m.egressLog,
      grants: m.grants,
      ...(m.limits !== undefined ? { limits: m.limits } : {}),
    }),
    (p) => p.close(),
  );
  // Awaited once the sandbox is spawned; a launch that fails before that must not leave it unhandled.
  proxy.listening.catch(() => {});
  return proxy.listening;
}

type Sandbox = { child: ChildProcess; stderr: () => string; exited: Promise<void>; voidRun: () => void };

/** f, called at most once. */
function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (!done) f();
    done = true;
  };
}

/**
 * The tool socket, the seccomp program, the run handed over, the cgroups, then bwrap behind the
 * identity's drop, with the plan's environment only; recorded for recover().
 */
function spawnSession(res: LaunchResources, p: PreparedLaunch): Sandbox {
  const plan = p.session;
  const tools = res.hold("tool socket", holdToolSocket(plan.toolSocket.path, plan.toolSocket.owner), (t) => {
    t.release();
    rmSync(plan.toolSocket.path, { force: true });
  });
  const seccompFile = writeSeccompProgram(
    plan.seccompDir,
    plan.seccomp.arch,
    seccompProgram(plan.seccomp.arch, plan.seccomp.rules).bytes, // safety: start-skips-seccomp-plan
  );
  // The session owns its run directory; bundle/, session.json and sock/ stay read-only by their binds.
  if (plan.identity.handOver !== null) handOver(plan.identity.handOver.runDir, plan.identity.runAs);
  const cgroups = res.hold("cgroups", makeSessionCgroups(plan.cgroups), (dirs) => removeSessionCgroups(dirs)); // safety: start-skips-cgroups
  const child = spawnSandbox({
    command: sessionCommand(plan),
    env: plan.env,
    seccompFile,
    cgroupProcs: cgroups.map((c) => join(c, "cgroup.procs")),
    toolSocketFd: tools.fd,
    stdio: ["pipe", "ignore", "pipe"],
    ownSession: plan.ownSession,
  });
  // A command that could not start has no pid and emits "error" later: refused here, not the host's crash.
  child.on("error", () => {});
  if (child.pid === undefined)
    throw new MosaicError("sandbox-spawn", child.spawnfile, "the sandbox's command could not start");
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  res.hold("sandbox", child, (c, ending) => endSandbox(c, exited, ending, plan));
  // The run's capabilities are voided whenever a launch that spawned ends, failed or not.
  const voidRun = once(() => p.req.bus.endRun(plan.sessionFile.run)); // safety: run-not-ended
  res.hold("capabilities", voidRun, (v) => v());
  // The sandbox holds its own copy of the tool socket now; the host never accepts on it.
  tools.release();
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin!.on("error", () => {});
  recordLaunch(p, child.pid, cgroups);
  p.req.onSpawn?.(child);
  return { child, stderr: () => stderr, exited, voidRun };
}

/**
 * A failed launch kills the sandbox it started (no session outlives a launch that threw) and waits
 * for it; either way the mount stubs bwrap made in the workspace go once it is gone.
 */
async function endSandbox(
  child: ChildProcess,
  exited: Promise<void>,
  ending: Ending,
  plan: SessionPlan,
): Promise<void> {
  if (ending.kind === "failed" && child.exitCode === null && child.signalCode === null) {
    // The sandbox is not reaped yet, so its pid is still its own.
    for (const pid of [...childrenOf(child.pid!), child.pid!]) {
      try {
        process.kill(pid, "SIGKILL"); // safety: launch-failure-leaves-sandbox
      } catch {
        // gone meanwhile
      }
    }
    await exited;
  }
  // What the sandbox forked past that kill (or left when it ended by itself) its cgroups still hold.
  if (ending.kind === "failed") await killCgroupProcs(plan.cgroups.dirs.map((d) => d.dir)); // safety: launch-failure-leaves-cgroup-procs
  removeMountStubs(plan.mountStubs);
}

/** The launch's record, for recover() on the next host; the end-of-session step ends it. */
function recordLaunch(p: PreparedLaunch, pid: number, cgroups: string[]): void {
  const plan = p.session;
  new LaunchRegistry(plan.records).record({
    run: plan.sessionFile.run,
    instance: plan.sessionFile.instance,
    runDir: plan.sessionFile.runDir,
    pid,
    startedAt: new Date().toISOString(),
    mountStubs: plan.mountStubs,
    cgroups,
    workspace: plan.sessionFile.workspace,
    ...(plan.endCheck !== null ? { quarantine: plan.endCheck.quarantine } : {}),
    lock: plan.lock,
    ...(plan.uidLock !== null ? { uidLock: plan.uidLock } : {}),
    identityDir: plan.identityFiles.dir,
    end: null,
  });
}

/**
 * The running session: bwrap's exit ends the launch. The run's capabilities are voided at once, so
 * a runner that outlived its bwrap (the fork race of choice 1) stops at its next poll; its stderr
 * may still be open then, so the end waits for it only briefly. Then everything held is released,
 * newest first: the end-of-session check and the record's end come last but the lock.
 */
function sessionOf(res: LaunchResources, p: PreparedLaunch, sandbox: Sandbox, end: EndRecord): Session {
  const plan = p.session;
  const { child } = sandbox;
  const run = plan.sessionFile.run;
  const exited = new Promise<LaunchEnd>((resolve) => {
    child.once("exit", (code, signal) => {
      sandbox.voidRun();
      const how = sessionExit(code, signal);
      const reason = how.kind === "code" ? launchEndReason(how.code) : "killed";
      end.how = { reason, detail: how.kind === "code" ? `exit ${how.code}` : how.signal };
      void (async () => {
        await Promise.race([new Promise((r) => child.once("close", r)), new Promise((r) => setTimeout(r, 500))]);
        await res.release({ kind: "ended" });
        resolve({ end: how, reason, stderr: sandbox.stderr(), workspace: end.check ?? unchecked(plan) });
      })();
    });
  });
  return {
    run,
    runDir: plan.sessionFile.runDir,
    pid: child.pid!,
    plan,
    exited,
    stderr: sandbox.stderr,
    stop: () => stopSession(child, exited),
  };
}

/** The report when a plan has no end check (a positive control removed it on purpose). */
function unchecked(plan: SessionPlan): WorkspaceCheck {
  return {
    verdict: "unsafe",
    workspace: plan.sessionFile.workspace,
    quarantine: "",
    done: [],
    failed: [{ kind: "check", path: ".", error: "the plan has no end-of-session check" }],
  };
}

/** SIGTERM to the runner again every second: it is pid 1 of its namespace, and a SIGTERM before its handler is lost. */
async function stopSession(child: ChildProcess, exited: Promise<LaunchEnd>): Promise<LaunchEnd> {
  let done = false;
  void exited.then(() => (done = true));
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
}
