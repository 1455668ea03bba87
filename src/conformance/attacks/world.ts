// The attack table's world: one scratch root per identity (root, or an unprivileged uid) holding a
// git workspace every arm's session works in, another workspace, the founder's stand-in secrets,
// network traps that count who connects, a neighbour process outside any sandbox, and the attack
// host: the launcher's own process for that identity (host-main.ts), which serves the stand-in
// broker and launches each arm through prepareLaunch() and start(). Everything a session binds lives
// under the root, so an unprivileged uid can reach it wherever the checkout is.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, lchownSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { sessionIdentity } from "../../core/sandbox/identity.ts";
import type { SessionIdentity } from "../../core/sandbox/types.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import type { StandIns } from "../stand-ins/secrets.ts";
import { makeCanary } from "../traps/canary.ts";
import { startTrap } from "../traps/listener.ts";
import { makeWorld, type World } from "../worlds/world.ts";
import type { ArmRequest, ArmResult, AttackHostConfig } from "./host-protocol.ts";

export { CAPABILITY_LABEL } from "./host-protocol.ts";

export type Identity = "root" | "user";

/** The unprivileged uid the user arm runs as when the tests run as root. */
export const USER_UID = 65534;

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
  /** This arm's run directory (runAttack sets it per arm). */
  run: string;
  stand: StandIns;
  /** The capability this arm's runner held (runAttack sets it once the arm has run). */
  capability: string;
  /** A canary in pid 1's environment. */
  envCanary: string;
  neighbor: { pid: number; canary: string };
  launchSocket: string;
  brokerSocket: string;
  /** Network traps on the host: a TCP listener on 127.0.0.1 and an abstract Unix socket. */
  traps: { tcpPort: number; abstract: string };
  connections: { launch: number; tcpTrap: number; abstractTrap: number };
  readableNode: string;
  /**
   * Runs one arm on the attack host, or on one started under a terminal (`terminal`); with
   * `req.pause`, `paused` runs after the turn, while the session still runs.
   */
  arm(req: ArmRequest, opts?: { terminal?: boolean; paused?: () => Promise<void> | void }): Promise<ArmResult>;
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

type Caller = { world: World; uid: number; self: number; session: SessionIdentity; asIdentity: string[] };

/** A fresh world every identity can reach, and who the caller and its session are. */
function makeRoot(identity: Identity): Caller {
  mkdirSync(ATTACK_BASE, { recursive: true, mode: 0o755 });
  chmodSync(ATTACK_BASE, 0o755);
  const world = makeWorld(identity, { base: ATTACK_BASE });
  const self = process.getuid?.() ?? -1;
  const uid = identity === "root" ? 0 : self === 0 ? USER_UID : self;
  const asIdentity = self === uid ? [] : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--"];
  return { world, uid, self, session: sessionIdentity({ uid, gid: uid }, {}), asIdentity };
}

/** A real repository, as a coder's workspace is: hooks and config as git init makes them. */
function initWorkspace(ws: string): void {
  mkdirSync(ws, { recursive: true });
  sh(["git", "init", "-q", ws]);
  writeFileSync(join(ws, "inside.txt"), "a file inside the workspace\n");
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode/settings.json"), "{}\n");
  sh(["git", "-c", "user.name=host", "-c", "user.email=host@invalid", "add", "."], ws);
  sh(["git", "-c", "user.name=host", "-c", "user.email=host@invalid", "commit", "-qm", "host"], ws);
}

function copyReadableNode(root: string): string {
  mkdirSync(join(root, "node"), { recursive: true });
  const readableNode = join(root, "node/node");
  copyFileSync(process.execPath, readableNode);
  chmodSync(readableNode, 0o755);
  return readableNode;
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

/** One attack host on the control socket: arms go to it one at a time, in order. */
type HostLink = {
  child: ChildProcess;
  ask(req: ArmRequest, paused?: () => Promise<void> | void): Promise<ArmResult>;
  close(): Promise<void>;
};

/** Accepts the next host's connection and reads its ready line. */
function acceptHost(server: Server, child: ChildProcess): Promise<HostLink> {
  return new Promise((ok, fail) => {
    const early = () => fail(new Error("the attack host exited before it was ready"));
    child.once("exit", early);
    server.once("connection", (sock: Socket) => {
      const lines = createInterface({ input: sock })[Symbol.asyncIterator]();
      void lines.next().then(() => {
        child.off("exit", early);
        let queue: Promise<unknown> = Promise.resolve();
        const read = async (name: string) => {
          const r = await lines.next();
          if (r.done) throw new Error(`the attack host went away during arm ${name}`);
          return JSON.parse(r.value) as ArmResult & { paused?: string };
        };
        const ask = (req: ArmRequest, paused?: () => Promise<void> | void) => {
          const next = queue.then(async () => {
            sock.write(JSON.stringify(req) + "\n");
            let r = await read(req.name);
            if (r.paused !== undefined) {
              await paused?.();
              sock.write(JSON.stringify({ resume: req.name }) + "\n");
              r = await read(req.name);
            }
            return r as ArmResult;
          });
          queue = next.catch(() => {});
          return next;
        };
        // The host ends when its control socket does; one that does not is killed.
        const close = async () => {
          sock.end();
          const exited = new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
          const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(t);
        };
        ok({ child, ask, close });
      });
    });
  });
}

/** Starts an attack host as the world's caller, under a terminal of its own when asked. */
async function startHost(c: Caller, cfg: AttackHostConfig, server: Server, terminal: boolean): Promise<HostLink> {
  const file = join(c.world.root, terminal ? "host-tty.json" : "host.json");
  // Each host serves a broker of its own.
  writeFileSync(file, JSON.stringify({ ...cfg, brokerDir: join(c.world.root, terminal ? "bt" : "b") }));
  const node = [process.execPath, join(REPO_ROOT, "src/conformance/attacks/host-main.ts"), file];
  const quoted = node.map((t) => `'${t.replaceAll("'", "'\\''")}'`).join(" ");
  const argv = [...c.asIdentity, ...(terminal ? ["script", "-qfec", quoted, "/dev/null"] : node)];
  // Pi's preflight runs `pi --version`, which needs the pinned node first on PATH.
  const env = { PATH: `${join(REPO_ROOT, "node_modules/.bin")}:/usr/bin:/bin`, HOME: "/nonexistent", LANG: "C.UTF-8" };
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "ignore", "inherit"] });
  return acceptHost(server, child);
}

export async function makeAttackWorld(identity: Identity): Promise<AttackWorld> {
  const c = makeRoot(identity);
  const { root, stand, data } = c.world;
  const ws = join(data, "workspaces/acme/coder");
  const otherWs = join(data, "workspaces/acme/other");
  mkdirSync(otherWs, { recursive: true });
  mkdirSync(join(data, "runs"), { recursive: true });
  for (const d of ["b", "bt"]) mkdirSync(join(root, d));
  initWorkspace(ws);
  const readableNode = copyReadableNode(root);
  // A user caller's whole world is its own; a root caller keeps its files, and its launcher hands
  // the session its workspace and runs.
  chownTree(identity === "user" ? root : data, c.session);
  const connections = { launch: 0, tcpTrap: 0, abstractTrap: 0 };
  const tcpTrap = await startTrap({ tcp: "127.0.0.1" }, { onHit: () => connections.tcpTrap++ });
  const abstract = makeCanary(`mosaic-trap-${identity}`);
  const abstractTrap = await startTrap({ abstract }, { onHit: () => connections.abstractTrap++ });
  const neighbour = startNeighbour(c.session, c.self, stand.founderHome);
  const envCanary = makeCanary("env-canary");
  const ctl = join(root, "ctl.sock");
  const server = createServer();
  await new Promise<void>((ok) => server.listen(ctl, ok));
  if (c.uid !== c.self) chownSync(ctl, c.uid, c.uid);
  const cfg: AttackHostConfig = {
    ctl,
    root,
    data,
    ws,
    stateDir: c.world.stateDir,
    brokerDir: join(root, "b"),
    founderHome: stand.founderHome,
    readableNode,
    envCanary,
    sessionUid: c.uid === 0 ? c.session.uid : null,
  };
  const hosts: HostLink[] = [await startHost(c, cfg, server, false)];
  let terminalHost: Promise<HostLink> | null = null;
  return {
    identity,
    uid: c.uid,
    session: c.session,
    data,
    root,
    ws,
    otherWs,
    run: "",
    stand,
    capability: "",
    envCanary,
    neighbor: { pid: neighbour.process.pid!, canary: neighbour.canary },
    launchSocket: join(root, "b", "launch.sock"),
    brokerSocket: join(root, "b", "broker.sock"),
    traps: { tcpPort: tcpTrap.port!, abstract },
    connections,
    readableNode,
    async arm(req, opts = {}) {
      if (!opts.terminal) return hosts[0]!.ask(req, opts.paused);
      terminalHost ??= startHost(c, cfg, server, true).then((h) => (hosts.push(h), h));
      return (await terminalHost).ask(req, opts.paused);
    },
    async close() {
      await Promise.all(hosts.map((h) => h.close()));
      try {
        process.kill(-neighbour.process.pid!, "SIGKILL");
      } catch {
        neighbour.process.kill("SIGKILL");
      }
      await Promise.all([tcpTrap.close(), abstractTrap.close()]);
      await new Promise<void>((ok) => server.close(() => ok()));
      c.world.remove();
    },
  };
}
