// A scratch world for live sessions through the real launcher and runner: a data root with
// workspaces and runs, the founder's stand-ins, a stand-in broker, and the shipped example
// instances with their paths moved into the world. Tests launch, send a message, read the reply.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LaunchSettings, ResolvedInstance } from "../../core/launch/instance.ts";
import { exampleInstance, exampleSettings } from "./examples.ts";
import { prepareLaunch, start, type LaunchRequest, type PreparedLaunch, type Session } from "../../host/launcher.ts";
import { readHostFacts } from "../../host/host-facts.ts";
import { startBroker, type StandInBroker } from "../stand-ins/broker/server.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import type { StandIns } from "../stand-ins/secrets.ts";
import { makeWorld } from "./world.ts";

export const FAKE_ADAPTER = join(REPO_ROOT, "src/conformance/worlds/fake-adapter.sh");

export interface RuntimeWorld {
  root: string;
  data: string;
  stand: StandIns;
  broker: StandInBroker;
  stateDir: string;
  settings: LaunchSettings;
  hostEnv: Record<string, string>;
  /** A shipped example instance (scenarios/instances/<name>.yaml), its workspace and run in this world. */
  instance(example: string, name: string, patch?: Partial<ResolvedInstance>): ResolvedInstance;
  request(instance: ResolvedInstance, extra?: Partial<LaunchRequest>): LaunchRequest;
  close(): Promise<void>;
}

/** A runtime world; `root` puts it in a directory its caller made (see makeWorld). */
export async function makeRuntimeWorld(label: string, opts: { root?: string } = {}): Promise<RuntimeWorld> {
  const world = makeWorld(label, opts);
  const { root, data, stand, stateDir } = world;
  for (const d of ["workspaces/acme", "runs", "bus"]) mkdirSync(join(data, d), { recursive: true });
  writeFileSync(join(data, "bus/store.json"), `{"bus":"${stand.secret}"}\n`);
  mkdirSync(join(data, "runs/other-run"), { recursive: true });
  writeFileSync(join(data, "runs/other-run/session.json"), `{"other":"${stand.secret}"}\n`);
  mkdirSync(join(root, "b"));
  // A root host's sessions run as their own uid: the broker's sockets are theirs to connect to.
  const facts = readHostFacts({ repo: REPO_ROOT });
  const broker = await startBroker({ dir: join(root, "b"), sessions: facts.uid === 0 ? facts.session : null });
  const settings = exampleSettings();
  const hostEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: stand.founderHome,
  };
  return {
    root,
    data,
    stand,
    broker,
    stateDir,
    settings,
    hostEnv,
    instance(example, name, patch = {}) {
      const ws = join(data, "workspaces/acme", name);
      mkdirSync(ws, { recursive: true });
      chmodSync(ws, 0o755);
      return exampleInstance(example, { workspace: ws, run: name, instance: name, ...patch });
    },
    request(instance, extra = {}) {
      return {
        instance,
        settings,
        hostEnv,
        repo: REPO_ROOT,
        runDir: join(data, "runs", instance.run),
        stateDir,
        brokerSocket: broker.brokerSocket,
        launchSocket: broker.launchSocket,
        bus: broker,
        adapter: { kind: "fake", script: FAKE_ADAPTER },
        timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 20 },
        ...extra,
      };
    },
    async close() {
      await broker.stop();
      world.remove();
    },
  };
}

/**
 * Launches through prepareLaunch() and start(), the prepared launch changed on purpose by `edit`
 * where a positive control needs it, and waits for the runner's claim (or its exit).
 */
export async function launchAndClaim(
  w: RuntimeWorld,
  req: LaunchRequest,
  edit: (p: PreparedLaunch) => PreparedLaunch = (p) => p,
): Promise<Session> {
  const p = prepareLaunch(req);
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  const s = await start(edit(p.prepared));
  await waitClaimed(w, s, req.instance.run);
  return s;
}

export async function waitClaimed(w: RuntimeWorld, s: Session, run: string, timeoutMs = 10_000): Promise<void> {
  let over = false;
  void s.exited.then(() => (over = true));
  for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; ) {
    if (w.broker.records().some((r) => r.verb === "role.claim" && r.run === run && r.outcome === "ok")) return;
    if (over) throw new Error(`the runner exited before its claim: ${s.stderr()}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
  throw new Error(`no claim within ${timeoutMs} ms: ${s.stderr()}`);
}

/** Sends one message to the session's instance and waits for the RESULT it sends back. */
export async function ask(
  w: RuntimeWorld,
  instance: string,
  body: string,
  from = "pm-test",
  timeoutMs = 30_000,
): Promise<string> {
  const id = w.broker.deliver(instance, { from, body });
  for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; ) {
    const reply = w.broker.sentTo(from).find((m) => m.kind === "result" && m.replyTo === id);
    if (reply !== undefined) return reply.body;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error(`no reply to ${id} within ${timeoutMs} ms`);
}
