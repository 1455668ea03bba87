// The attack table's world: one scratch root per identity (root, or an unprivileged uid) holding a
// git workspace, another workspace, a run directory, the founder's stand-in secrets, a broker and a
// launch socket that count connections, and a neighbour process outside the sandbox. Everything
// the sandbox binds lives under the root, so an unprivileged uid can reach it wherever the checkout is.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, lchownSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionIdentity } from "../../core/sandbox/identity.ts";
import type { HostFacts, SandboxSpec, SessionIdentity } from "../../core/sandbox/types.ts";
import { findSessionCgroupBases } from "../../host/session-cgroups.ts";
import { readHostFacts } from "../../host/host-facts.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import type { StandIns } from "../stand-ins/secrets.ts";
import { makeCanary } from "../traps/canary.ts";
import { startTrap } from "../traps/listener.ts";
import { layOutSession, makeWorld, type World } from "../worlds/world.ts";

export type Identity = "root" | "user";

/** The unprivileged uid the user arm runs as when the tests run as root. */
export const USER_UID = 65534;
/** The label of the capability canary pid 1 holds; a memory-reading attack searches for it by canaryPattern. */
export const CAPABILITY_LABEL = "mosaic-cap";

/** Short (socket paths), outside /tmp and any home; one per caller uid, since each chmods its own. */
export const ATTACK_BASE = `/var/tmp/mosaic-attacks${process.getuid?.() === 0 ? "" : `-${process.getuid?.()}`}`;

export interface AttackWorld {
  identity: Identity;
  /** The caller's uid: 0, or the unprivileged uid the user arm runs as. */
  uid: number;
  /** Who the session runs as: the user caller itself, or a root caller's dedicated uid. */
  session: SessionIdentity;
  /** The session's own trees (workspaces and runs), which the launcher hands to its identity. */
  data: string;
  root: string;
  ws: string;
  otherWs: string;
  run: string;
  stand: StandIns;
  /** The capability canary pid 1 holds in memory; no script is ever told it (scripts search by CAPABILITY_LABEL). */
  capability: string;
  /** A canary in pid 1's environment. */
  envCanary: string;
  neighbor: { pid: number; canary: string };
  launchSocket: string;
  brokerSocket: string;
  /** Network traps on the host: a TCP listener on 127.0.0.1 and an abstract Unix socket. */
  traps: { tcpPort: number; abstract: string };
  connections: { broker: number; launch: number; tcpTrap: number; abstractTrap: number; tools: number };
  spec: SandboxSpec;
  facts: HostFacts;
  /** A readable copy of node, for the control that runs the runner on it. */
  readableNode: string;
  env: Record<string, string>;
  /** Commands run as this identity (empty for the identity the tests already have). */
  asIdentity: string[];
  close(): Promise<void>;
}

/** Why an identity cannot be tried here, or null. */
export function identityProblem(identity: Identity): string | null {
  const uid = process.getuid?.() ?? -1;
  if (identity === "root" && uid !== 0) return "the root arm needs the tests to run as root (CI does)";
  return null;
}

function sh(cmd: string[], cwd?: string): void {
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd,
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr}`);
}

/** chown -R, never following a link; sockets and placeholders included. */
export function chownTree(p: string, id: SessionIdentity): void {
  lchownSync(p, id.uid, id.gid);
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const q = join(p, e.name);
    if (e.isDirectory()) chownTree(q, id);
    else lchownSync(q, id.uid, id.gid);
  }
}

type Paths = { root: string; repo: string; data: string; sockDir: string; ws: string; otherWs: string; run: string };
type Counts = AttackWorld["connections"];

export async function makeAttackWorld(identity: Identity): Promise<AttackWorld> {
  const { world, uid, self, session, asIdentity } = makeRoot(identity);
  const { root, stand } = world;
  const paths = layOutTrees(world);
  initWorkspace(paths.ws);
  const readableNode = copyReadableNode(root);
  // A user caller's whole world is its own; a root caller keeps its files and hands the session its
  // workspaces and runs, as the launcher does.
  chownTree(identity === "user" ? root : paths.data, session);
  const net = await startWorldTraps(identity, paths, session);
  const neighbour = startNeighbour(session, self, stand.founderHome);
  const facts = worldFacts(paths, readableNode, stand, uid, session);
  const spec = worldSpec(paths, net.brokerSocket, net.launchSocket);
  const envCanary = makeCanary("env-canary");
  return {
    identity,
    uid,
    session,
    data: paths.data,
    root,
    ws: paths.ws,
    otherWs: paths.otherWs,
    run: paths.run,
    stand,
    capability: makeCanary(CAPABILITY_LABEL),
    envCanary,
    neighbor: { pid: neighbour.process.pid!, canary: neighbour.canary },
    launchSocket: net.launchSocket,
    brokerSocket: net.brokerSocket,
    connections: net.connections,
    spec,
    facts,
    readableNode,
    traps: { tcpPort: net.tcpPort, abstract: net.abstract },
    env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", ATTACK_ENV_CANARY: envCanary },
    asIdentity,
    async close() {
      try {
        process.kill(-neighbour.process.pid!, "SIGKILL");
      } catch {
        neighbour.process.kill("SIGKILL");
      }
      await Promise.all(net.traps.map((t) => t.close()));
      world.remove();
    },
  };
}

/** A fresh world every identity can reach, and who the caller and its session are. */
function makeRoot(identity: Identity): {
  world: World;
  uid: number;
  self: number;
  session: SessionIdentity;
  asIdentity: string[];
} {
  mkdirSync(ATTACK_BASE, { recursive: true, mode: 0o755 });
  chmodSync(ATTACK_BASE, 0o755);
  const world = makeWorld(identity, { base: ATTACK_BASE });
  const self = process.getuid?.() ?? -1;
  const uid = identity === "root" ? 0 : self === 0 ? USER_UID : self;
  const asIdentity = self === uid ? [] : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--"];
  return { world, uid, self, session: sessionIdentity({ uid, gid: uid }, {}), asIdentity };
}

/** The repository, two workspaces and a run directory with the files the host writes into it. */
function layOutTrees(world: World): Paths {
  const { root, data, sockDir } = world;
  const repo = join(root, "repo");
  const { ws, run } = layOutSession(world, "coder", '{"session":"as the host wrote it"}\n');
  const otherWs = join(data, "workspaces/acme/other");
  for (const d of [join(repo, "src"), join(run, "bundle"), join(root, "node")]) mkdirSync(d, { recursive: true });
  copyFileSync(join(REPO_ROOT, "src/conformance/attacks/pid1.ts"), join(repo, "src/pid1.ts"));
  writeFileSync(join(repo, "adapter.sh"), "exit 0\n");
  writeFileSync(join(run, "bundle/policy.json"), '{"policy":"as the host wrote it"}\n');
  return { root, repo, data, sockDir, ws, otherWs, run };
}

/** A real repository, as a coder's workspace is: hooks and config as git init makes them. */
function initWorkspace(ws: string): void {
  sh(["git", "init", "-q", ws]);
  writeFileSync(join(ws, "inside.txt"), "a file inside the workspace\n");
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode/settings.json"), "{}\n");
  sh(["git", "-c", "user.name=host", "-c", "user.email=host@invalid", "add", "."], ws);
  sh(["git", "-c", "user.name=host", "-c", "user.email=host@invalid", "commit", "-qm", "host"], ws);
}

function copyReadableNode(root: string): string {
  const readableNode = join(root, "node/node");
  copyFileSync(process.execPath, readableNode);
  chmodSync(readableNode, 0o755);
  return readableNode;
}

/** The broker, launch and tool sockets, a TCP listener and an abstract socket: each counts who connects. */
async function startWorldTraps(identity: Identity, paths: Paths, session: SessionIdentity) {
  const connections: Counts = { broker: 0, launch: 0, tcpTrap: 0, abstractTrap: 0, tools: 0 };
  const brokerSocket = join(paths.sockDir, "bus.sock");
  const launchSocket = join(paths.sockDir, "launch.sock");
  const toolSocket = join(paths.run, "sock/tools.sock");
  const count = (k: keyof Counts) => ({ answer: "stand-in\n", onHit: () => connections[k]++ });
  const traps = [
    await startTrap({ path: brokerSocket }, count("broker")),
    await startTrap({ path: launchSocket }, count("launch")),
    await startTrap({ path: toolSocket }, count("tools")),
  ];
  chmodSync(toolSocket, 0o600);
  for (const p of [brokerSocket, launchSocket, toolSocket]) chownSync(p, session.uid, session.gid);
  const tcpTrap = await startTrap({ tcp: "127.0.0.1" }, { onHit: () => connections.tcpTrap++ });
  const abstract = makeCanary(`mosaic-trap-${identity}`);
  traps.push(tcpTrap, await startTrap({ abstract }, { onHit: () => connections.abstractTrap++ }));
  return { connections, brokerSocket, launchSocket, traps, tcpPort: tcpTrap.port!, abstract };
}

/** The neighbour: an ordinary process of the session's uid, with no capabilities, outside the sandbox. */
function startNeighbour(
  session: SessionIdentity,
  self: number,
  cwd: string,
): { process: ChildProcess; canary: string } {
  const canary = makeCanary("neighbour-canary");
  const child = spawn(
    "setpriv",
    [
      ...(session.uid !== self ? [`--reuid=${session.uid}`, `--regid=${session.gid}`, "--clear-groups"] : []),
      "--bounding-set=-all",
      "--inh-caps=-all",
      "--",
      "sleep",
      "600",
    ],
    { cwd, env: { PATH: "/usr/bin:/bin", NEIGHBOR_CANARY: canary }, stdio: "ignore", detached: true },
  );
  return { process: child, canary };
}

/** This host's facts, with node, HOME, the caller and the runner's node moved into the world. */
function worldFacts(
  paths: Paths,
  readableNode: string,
  stand: StandIns,
  uid: number,
  session: SessionIdentity,
): HostFacts {
  const host = readHostFacts({ repo: REPO_ROOT, stateDir: join(paths.root, "state") });
  return {
    ...host,
    node: { path: readableNode, realPath: readableNode },
    home: stand.founderHome,
    uid,
    session,
    cgroups: uid === 0 ? findSessionCgroupBases() : { pids: null, memory: null },
    runnerNode: join(paths.root, "state/runner-node/node-xo"),
  };
}

function worldSpec(paths: Paths, brokerSocket: string, launchSocket: string): SandboxSpec {
  return {
    harness: "claude-code",
    repo: paths.repo,
    runnerFiles: [join(paths.repo, "src/pid1.ts")],
    runner: join(paths.repo, "src/pid1.ts"),
    adapter: join(paths.repo, "adapter.sh"),
    brokerSocket,
    launchSocket,
    mayLaunch: false,
    workspace: paths.ws,
    runDir: paths.run,
  };
}
