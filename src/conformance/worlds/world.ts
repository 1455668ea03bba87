// The one scratch world every live test, attack and scenario starts from: a root a session's uid can
// reach, the founder's stand-in secrets, a data tree of workspaces and runs, a socket directory and a
// state directory. The worlds that need more build on it: the runtime world adds a stand-in broker,
// the attack world counting traps and a neighbour; a planned session lays out its run with
// layOutSession(), as the host does before a launch.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { plantStandIns, type StandIns } from "../stand-ins/secrets.ts";
import { startTrap } from "../traps/listener.ts";
import { makeScratch } from "./scratch.ts";

export interface World {
  root: string;
  /** The data root: `workspaces/acme/<name>` and `runs/<name>`. */
  data: string;
  /** Host sockets a spec names (the broker's, the launch socket). */
  sockDir: string;
  /** The launcher's state directory (its seccomp program, the runner's node). */
  stateDir: string;
  stand: StandIns;
  /** Removes the root; a live test that failed keeps it for inspection. */
  remove(): void;
}

/**
 * A fresh world under the scratch base, or under `base` (the attack table's, reachable by any uid),
 * or in `root`: a directory another process made and removes (a test's helper run as another uid).
 */
export function makeWorld(label: string, opts: { base?: string; root?: string } = {}): World {
  const scratch = opts.root !== undefined ? { root: opts.root, remove: () => {} } : makeScratch(label, opts.base);
  const root = scratch.root;
  const stand = plantStandIns(root);
  const w = { root, data: join(root, "data"), sockDir: join(root, "sock"), stateDir: join(root, "state") };
  for (const d of [w.data, w.sockDir, w.stateDir]) mkdirSync(d, { recursive: true });
  return { ...w, stand, remove: scratch.remove };
}

export interface SessionDirs {
  ws: string;
  run: string;
}

/**
 * A session's workspace and run directory, with what the host makes in a run before a launch: the
 * HOME tmpfs's mount point and the socket directory (both 0700), the turns directory, and
 * session.json, which the sandbox binds read-only and so must exist.
 */
export function layOutSession(w: Pick<World, "data">, name: string, sessionFile?: string): SessionDirs {
  const ws = join(w.data, "workspaces/acme", name);
  const run = join(w.data, "runs", name);
  for (const d of [ws, join(run, "home"), join(run, "turns"), join(run, "sock")]) mkdirSync(d, { recursive: true });
  chmodSync(join(run, "home"), 0o700);
  chmodSync(join(run, "sock"), 0o700);
  writeFileSync(join(run, "session.json"), sessionFile ?? JSON.stringify({ run: name }) + "\n");
  return { ws, run };
}

/** A world whose broker socket listens and answers nothing: the spec names a broker, no session calls it. */
export interface QuietBrokerWorld extends World {
  brokerSocket: string;
  close(): Promise<void>;
}

export async function makeQuietBrokerWorld(label: string, answer = ""): Promise<QuietBrokerWorld> {
  const w = makeWorld(label);
  const brokerSocket = join(w.sockDir, "bus.sock");
  const broker = await startTrap({ path: brokerSocket }, { answer });
  return {
    ...w,
    brokerSocket,
    async close() {
      await broker.close();
      w.remove();
    },
  };
}
