// The attack table's host: the launcher's process for one identity (root, or an unprivileged uid
// under setpriv), run as its own process because a user caller's launcher must really be that user.
// It serves the stand-in broker and launches each arm through the shipped prepareLaunch() and
// start(), with the arm's layers removed on purpose (layers.ts), sends the row's script as one
// message to the fake adapter's turn, stops the session and reports what came back and what its
// end left. `node src/conformance/attacks/host-main.ts <config.json>`; requests and results are JSON
// lines on the test's control socket (`config.ctl`).
import { existsSync, readFileSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { readHostFacts } from "../../host/host-facts.ts";
import {
  prepareLaunch,
  readLaunchInputs,
  start,
  type LaunchInputs,
  type LaunchRequest,
  type PreparedLaunch,
} from "../../host/launcher.ts";
import { isMosaicError } from "../../core/errors.ts";
import { startBroker, type StandInBroker } from "../stand-ins/broker/server.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { makeCanary } from "../traps/canary.ts";
import { exampleInstance, exampleSettings } from "../worlds/examples.ts";
import { launchWithBwrapArgv, launchWithSession } from "../controls/launch.ts";
import { withRunnerCommand } from "../controls/argv.ts";
import { FAKE_ADAPTER } from "../worlds/runtime-world.ts";
import { withoutLayers } from "./layers.ts";
import type { AttackHostConfig, ArmRequest, ArmResult } from "./host-protocol.ts";
import { CAPABILITY_LABEL } from "./host-protocol.ts";

type Host = { cfg: AttackHostConfig; broker: StandInBroker; inputs: LaunchInputs | null; issued: string[] };

const cfg = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as AttackHostConfig;

function request(h: Host, a: ArmRequest): LaunchRequest {
  const workspace = a.plan?.workspace ?? h.cfg.ws;
  const instance = exampleInstance("pi-coder", { workspace, run: a.name, instance: a.name });
  return {
    instance,
    settings: exampleSettings(),
    hostEnv: {
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      HOME: h.cfg.founderHome,
      // One uid for every arm, the neighbour's: the same-uid rows need a neighbour of the session's uid.
      ...(h.cfg.sessionUid !== null ? { MOSAIC_SESSION_UID: String(h.cfg.sessionUid) } : {}),
    },
    repo: REPO_ROOT,
    runDir: join(h.cfg.data, "runs", a.name),
    stateDir: h.cfg.stateDir,
    brokerSocket: h.broker.brokerSocket,
    launchSocket: h.broker.launchSocket,
    bus: {
      issueCapability: (b) => {
        const cap = h.broker.issueCapability(b);
        h.issued.push(cap);
        return cap;
      },
      endRun: (run) => h.broker.endRun(run),
    },
    adapter: { kind: "fake", script: FAKE_ADAPTER },
    timings: { pollMs: 20, brokerRetries: 5, brokerTimeoutSeconds: 5, turnTimeoutSeconds: a.turnTimeoutSeconds },
  };
}

/** A port free on the host now, for a control that shares the host's network. */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The RESULT sent back to `from` for message `id`, or null once the session is over or the time is up. */
async function reply(h: Host, from: string, id: string, over: () => boolean, ms: number): Promise<string | null> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; ) {
    const r = h.broker.sentTo(from).find((m) => m.kind === "result" && m.replyTo === id);
    if (r !== undefined) return r.body;
    if (over()) return null;
    await sleep(20);
  }
  return null;
}

async function claimed(h: Host, run: string, over: () => boolean): Promise<boolean> {
  for (let i = 0; i < 1500 && !over(); i++) {
    if (h.broker.records().some((r) => r.verb === "role.claim" && r.run === run && r.outcome === "ok")) return true;
    await sleep(10);
  }
  return false;
}

/** The machine as read once for this host, with what the arm changes on purpose. */
function inputsOf(h: Host, req: LaunchRequest, a: ArmRequest): LaunchInputs {
  h.inputs ??= readLaunchInputs(req);
  const { home, filesNotLinks = [] } = a.plan ?? {};
  const fs = h.inputs.fs;
  return {
    ...h.inputs,
    host: home === undefined ? h.inputs.host : { ...h.inputs.host, home },
    fs: { ...fs, lstat: (p) => (filesNotLinks.includes(p) ? { kind: "file" } : fs.lstat(p)) },
  };
}

/** The launch planned, or the refusal: prepareLaunch()'s, or the planner's MosaicError. */
function planArm(h: Host, a: ArmRequest): PreparedLaunch | { code: string; message: string } {
  const req = request(h, a);
  try {
    const ready = prepareLaunch(req, inputsOf(h, req, a));
    return ready.kind === "ready" ? ready.prepared : { code: ready.code, message: ready.message };
  } catch (e) {
    if (isMosaicError(e)) return { code: e.code, message: e.message };
    throw e;
  }
}

const refusedArm = (a: ArmRequest, refused: { code: string; message: string }): ArmResult => ({
  name: a.name,
  out: "",
  replied: false,
  exit: { kind: "code", code: 0 },
  stderr: "",
  turnStderr: "",
  check: { verdict: "clean", workspace: a.plan?.workspace ?? "" },
  stubsLeft: [],
  capability: "",
  launchConnects: 0,
  refused,
});

async function runArm(h: Host, a: ArmRequest, hold: () => Promise<void>): Promise<ArmResult> {
  const planned = planArm(h, a);
  if (!("req" in planned)) return refusedArm(a, planned);
  const ready = { prepared: planned };
  const ctx = { readableNode: h.cfg.readableNode, founderHome: h.cfg.founderHome, freePort: await freePort() };
  // The runner holds a canary in its environment as it holds its capability in memory.
  let p = withoutLayers(
    launchWithSession(ready.prepared, (s) => ({ ...s, env: { ...s.env, ATTACK_ENV_CANARY: h.cfg.envCanary } })),
    a.removed,
    ctx,
  );
  if (a.asRunner) p = launchWithBwrapArgv(p, (argv) => withRunnerCommand(argv, ["/bin/sh", "-c", a.script]));
  const launchBefore = h.broker.connectionCounts().launch;
  const issued = h.issued.length;
  const s = await start(p);
  let over = false;
  void s.exited.then(() => (over = true));
  const budget = a.turnTimeoutSeconds * 1000 + 15_000;
  let answer: string | null = null;
  if (!a.asRunner && (await claimed(h, a.name, () => over))) {
    const id = h.broker.deliver(a.name, { from: "attack-host", body: a.script });
    answer = await reply(h, "attack-host", id, () => over, budget);
  } else if (a.asRunner) await Promise.race([s.exited, sleep(budget)]);
  if (a.pause === true) await hold();
  const end = await s.stop();
  return {
    name: a.name,
    out: a.asRunner ? end.stderr : (answer ?? ""),
    replied: answer !== null,
    exit: end.end,
    stderr: end.stderr,
    turnStderr: readTurnStderr(p.session.sessionFile.runDir),
    check: end.workspace,
    stubsLeft: s.plan.mountStubs.map((m) => m.path).filter((f) => existsSync(f)),
    capability: h.issued[issued] ?? "",
    launchConnects: h.broker.connectionCounts().launch - launchBefore,
  };
}

function readTurnStderr(run: string): string {
  try {
    return readFileSync(join(run, "turns", "0001.stderr"), "utf8").slice(0, 4000);
  } catch {
    return "";
  }
}

async function serve(h: Host, ctl: Socket): Promise<void> {
  const lines = createInterface({ input: ctl })[Symbol.asyncIterator]();
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const a = JSON.parse(next.value) as ArmRequest;
    // A pause: the test looks at the host while the session still runs, then says to go on.
    const hold = async () => {
      ctl.write(JSON.stringify({ paused: a.name }) + "\n");
      await lines.next();
    };
    const r = await runArm(h, a, hold).catch(
      (e: unknown): ArmResult => ({ name: a.name, error: String(e) }) as ArmResult,
    );
    ctl.write(JSON.stringify(r) + "\n");
  }
}

const facts = readHostFacts({ repo: REPO_ROOT, stateDir: cfg.stateDir });
const broker = await startBroker({
  dir: cfg.brokerDir,
  sessions: facts.uid === 0 ? facts.session : null,
  mintCapability: () => makeCanary(CAPABILITY_LABEL),
});
const ctl = connect(cfg.ctl);
await new Promise<void>((ok, fail) => ctl.once("connect", ok).once("error", fail));
ctl.write(JSON.stringify({ ready: true, brokerSocket: broker.brokerSocket, launchSocket: broker.launchSocket }) + "\n");
try {
  await serve({ cfg, broker, inputs: null, issued: [] }, ctl);
} finally {
  await broker.stop();
  ctl.end();
}
