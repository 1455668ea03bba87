// What the launcher does on the host for one session, decided here so that start() only carries it
// out: who the session runs as and which trees it is handed, the runner's node, the seccomp rules,
// the cgroups and their settings, where each bound is enforced, the run directory's tree and files,
// the model proxy, the tool socket, the end-of-session check and where the launch is recorded.
import { sha256 } from "../bundle/digest.ts";
import { gateCompileCacheDir } from "../bundle/hook.ts";
import { MosaicError } from "../errors.ts";
import type { NetworkMode, UpstreamCredential } from "../network/egress.ts";
import type { ModelGrant } from "../network/grants.ts";
import type { ProxyLimits } from "../network/proxy-limits.ts";
import { upstreamCredential, upstreamUrl } from "../network/placeholder.ts";
import { runSockets } from "../runner/run-paths.ts";
import { planCgroups, sessionCgroupName, type CgroupPlan } from "../sandbox/cgroups.ts";
import { planIdentity, planIdentityFiles, type IdentityPlan } from "../sandbox/identity.ts";
import { SESSION_LIMITS } from "../sandbox/limits.ts";
import { RUNNER_NODE_MODE } from "../sandbox/runner-node.ts";
import { SECCOMP_RULES, seccompArchOf, type SeccompArch, type SeccompRules } from "../sandbox/seccomp.ts";
import type { Bind, HostFacts } from "../sandbox/types.ts";

/** The runner's node: an execute-only copy of the host's node, so no process in the sandbox can trace or read pid 1. */
export type RunnerNodePlan = { path: string; copyOf: string; mode: number };

/** One directory of the run, made by the host before the spawn. */
export type RunDirPlan = { path: string; mode: number };

/** The host's proxy for the session's one way out (src/host/model-proxy.ts); null: no model. */
export interface ModelProxyPlan {
  socket: string;
  upstream: string;
  /** The real credential the proxy adds; never inside the sandbox. Goldens show `<set>`. */
  credential: UpstreamCredential | null;
  mode: NetworkMode;
  egressLog: string;
  grants: readonly ModelGrant[];
  /** PROXY_LIMITS unless set: only a positive control raises one on purpose. */
  limits?: Partial<ProxyLimits>;
}

/** Where one of SESSION_LIMITS is enforced for this session; `by` is empty where nothing enforces it. */
export type BoundPlan = { name: keyof typeof SESSION_LIMITS; value: number; by: string[] };

/** The host's side of one launch: everything start() does besides running the argv. */
export interface HostPlan {
  identity: IdentityPlan;
  /**
   * The sandbox starts in a session of its own (setsid before bwrap), so no terminal of the host's
   * is its controlling terminal and TIOCSTI has nothing to push into, even before --new-session.
   */
  ownSession: boolean;
  runnerNode: RunnerNodePlan;
  seccomp: { arch: SeccompArch; rules: SeccompRules };
  cgroups: CgroupPlan;
  bounds: BoundPlan[];
  /** Made in this order, each with its mode, after the run directory itself (0700). */
  runTree: RunDirPlan[];
  /** Pi reads models.json from its agent dir only: where the bundle's copy goes too (0600), or null. */
  piModels: string | null;
  /** Claude Code's gate compile cache, warmed on the host with this node (warmGateCache). */
  gateCache: { dir: string; node: string } | null;
  modelProxy: ModelProxyPlan | null;
  toolSocket: { path: string; owner: { uid: number; gid: number } | null };
  /** The host's check of the workspace once every process of the session is gone. */
  endCheck: { workspace: string; quarantine: string } | null;
  /** The launch records' directory (LaunchRegistry). */
  records: string;
  /** The workspace's lock: one launch per workspace, held for the session's life. */
  lock: string;
  /** A root caller's session uid's lock: no two live sessions share a uid. Null for a user caller. */
  uidLock: string | null;
  /** The session's own /etc/passwd and /etc/group, written before the spawn and bound read-only. */
  identityFiles: { dir: string; passwd: string; group: string };
  /** Where the seccomp program is written, named by its bytes. */
  seccompDir: string;
}

export interface HostPlanInputs {
  facts: HostFacts;
  stateDir: string;
  runDir: string;
  run: string;
  workspace: string;
  network: NetworkMode;
  grants: readonly ModelGrant[];
  credentialSet: string | null;
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** Where the proxy sends the model calls; the host's ANTHROPIC_BASE_URL, else the public API. */
  modelUpstream?: string;
  bundleDir: string;
  /** Pi reads models.json from its agent dir only: the bundle's copy goes there too. */
  piAgentDir: string | null;
  hasModelsFile: boolean;
  harness: "pi" | "claude-code";
  /** Makes the cgroup name unique per launch. */
  launchedAt: { hostPid: number; now: number };
  argv: readonly string[];
  binds: readonly Bind[];
}

/** The run's own directories; HOME's tmpfs lands on home/, the sockets' read-only bind on sock/. */
const RUN_TREE = ["turns", "session", "session/pi-agent", "sock", "home"] as const;

/**
 * The lock file of a workspace: one per workspace path, so a second launch on a workspace whose
 * session still runs is refused before anything touches the tree the session still writes.
 */
export function workspaceLockPath(stateDir: string, workspace: string): string {
  return `${stateDir}/locks/${sha256(workspace)}.lock`;
}

/** Where a root caller's sessions' uid locks live: `<uid>.lock`, one per live session. */
export const uidLocksDir = (stateDir: string): string => `${stateDir}/uids`;

/** Where the session's own /etc/passwd and /etc/group are written, outside the run the session can write. */
export const identityFilesDir = (stateDir: string, run: string): string => `${stateDir}/identity/${run}`;

/** The host's per-run state paths: the quarantine and the egress log sit outside every sandbox. */
export function runStatePaths(stateDir: string, run: string): { quarantine: string; egressLog: string } {
  return { quarantine: `${stateDir}/quarantine/${run}`, egressLog: `${stateDir}/egress/${run}.jsonl` };
}

function seccompPlan(facts: HostFacts): HostPlan["seccomp"] {
  const arch = seccompArchOf(facts.arch);
  if (arch === undefined)
    throw new MosaicError("seccomp-arch", "hostFacts.arch", `no seccomp filter is written for ${facts.arch}`);
  return { arch, rules: SECCOMP_RULES }; // safety: plan-seccomp-rules
}

function modelProxyPlan(inp: HostPlanInputs): ModelProxyPlan | null {
  if (inp.network === "none") return null;
  return {
    socket: runSockets(inp.runDir).model,
    upstream: inp.modelUpstream ?? upstreamUrl(inp.hostEnv),
    credential: upstreamCredential(inp.credentialSet, inp.hostEnv),
    mode: inp.network,
    egressLog: runStatePaths(inp.stateDir, inp.run).egressLog, // safety: egress-log-in-run
    grants: [...inp.grants],
  };
}

/** Where each bound is enforced, read off the planned argv, binds and cgroups. */
export function planBounds(argv: readonly string[], binds: readonly Bind[], cgroups: CgroupPlan): BoundPlan[] {
  const has = (t: string) => argv.includes(t);
  const tmpfs = (row: Bind["row"], v: number) => binds.some((b) => b.row === row && b.size === v);
  const cg = (file: RegExp, v: number) =>
    cgroups.dirs.some((d) => d.settings.some((s) => file.test(s.file) && s.value === v));
  const L = SESSION_LIMITS;
  const row = (name: keyof typeof L, by: Array<[boolean, string]>): BoundPlan => ({
    name,
    value: L[name].value,
    by: by.filter(([on]) => on).map(([, what]) => what),
  });
  return [
    row("tasks", [
      [has(`--nproc=${L.tasks.value}`), "prlimit --nproc"],
      [cg(/^pids\.max$/, L.tasks.value), "pids cgroup"],
    ]),
    row("dataBytes", [[has(`--data=${L.dataBytes.value}`), "prlimit --data"]]),
    row("memoryBytes", [[cg(/^memory\.(max|limit_in_bytes)$/, L.memoryBytes.value), "memory cgroup"]]),
    row("tmpBytes", [[tmpfs("tmp", L.tmpBytes.value), "/tmp tmpfs --size"]]),
    row("homeBytes", [[tmpfs("home", L.homeBytes.value), "HOME tmpfs --size"]]),
    row("shmBytes", [[tmpfs("shm", L.shmBytes.value), "/dev/shm tmpfs --size"]]),
  ];
}

/** The host's side of one launch, from the host's facts and what the session plan decided. */
export function planHostSide(inp: HostPlanInputs): HostPlan {
  const { facts, runDir } = inp;
  const identity = planIdentity(facts, { workspace: inp.workspace, runDir }, inp.run);
  // A root caller's session is bounded by its own pids and memory cgroups (docs/hardening.md).
  const name = sessionCgroupName(inp.run, inp.launchedAt.hostPid, inp.launchedAt.now);
  const cgroups = facts.uid === 0 ? planCgroups(facts.cgroups, name) : { name: "", dirs: [] }; // safety: launcher-no-pids-cgroup
  return {
    identity,
    ownSession: true, // safety: sandbox-own-session
    runnerNode: { path: facts.runnerNode, copyOf: facts.node.path, mode: RUNNER_NODE_MODE },
    seccomp: seccompPlan(facts),
    cgroups,
    bounds: planBounds(inp.argv, inp.binds, cgroups),
    runTree: RUN_TREE.map((d) => ({ path: `${runDir}/${d}`, mode: 0o700 })),
    piModels: inp.hasModelsFile && inp.piAgentDir !== null ? `${inp.piAgentDir}/models.json` : null,
    gateCache:
      inp.harness === "claude-code" ? { dir: gateCompileCacheDir(inp.bundleDir), node: facts.node.path } : null,
    modelProxy: modelProxyPlan(inp),
    toolSocket: { path: runSockets(runDir).tools, owner: identity.handOver !== null ? identity.runAs : null },
    endCheck: { workspace: inp.workspace, quarantine: runStatePaths(inp.stateDir, inp.run).quarantine }, // safety: plan-no-end-check
    records: `${inp.stateDir}/launches`,
    lock: workspaceLockPath(inp.stateDir, inp.workspace),
    uidLock: facts.uid === 0 ? `${uidLocksDir(inp.stateDir)}/${identity.runAs.uid}.lock` : null, // safety: session-uid-unlocked
    identityFiles: {
      dir: identityFilesDir(inp.stateDir, inp.run),
      ...planIdentityFiles(identity.runAs, `${runDir}/home`),
    },
    seccompDir: `${inp.stateDir}/seccomp`,
  };
}
