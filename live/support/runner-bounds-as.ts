// One runner-bounds case through the real launcher and runner, run by live/runner-bounds.test.ts as
// another identity (an unprivileged uid, under setpriv): the launcher, the stand-in broker and the
// session are that uid's, in a world under <root> that it owns. Prints one JSON line (AsObserved)
// with what the case saw. `node live/support/runner-bounds-as.ts <root> <case>`
import { existsSync } from "node:fs";
import type { RunnerBounds } from "../../src/core/runner/bounds.ts";
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../src/host/launcher.ts";
import {
  LEFTOVERS_COUNT,
  LEFTOVERS_TURN,
  LIFTED,
  STDOUT_FLOOD,
  attackTurn,
  peakMiB,
  runnerPid,
  survivorMarker,
} from "./runner-bounds-cases.ts";

export type AsCase = "garbage" | "garbage-control" | "stdout" | "stdout-control" | "leftovers" | "leftovers-control";

export interface AsObserved {
  uid: number;
  replies: string[];
  /** The session's end reason when it ended by itself, else null. */
  ended: string | null;
  stderr: string;
  survivor: boolean;
  /** The runner's VmHWM in MiB before the first turn and after the last. */
  peak: { before: number; after: number };
  deepReachedBroker: boolean;
  released: boolean;
  toolCallOk: boolean;
  bounds: RunnerBounds;
}

const [root, which] = process.argv.slice(2) as [string, AsCase];
const lift = (edit: (b: RunnerBounds) => void) => edit;
const EDITS: Record<AsCase, (b: RunnerBounds) => void> = {
  garbage: () => {},
  "garbage-control": lift((b) =>
    Object.assign(b.toolSocket, { depth: LIFTED, lineBytes: LIFTED, argsBytes: LIFTED, connections: LIFTED }),
  ),
  stdout: () => {},
  "stdout-control": lift((b) => void (b.turn.stdoutBytes = LIFTED)),
  leftovers: () => {},
  "leftovers-control": lift((b) => void (b.turn.killNamespace = false)),
};

const w = await makeRuntimeWorld("bounds", { root });
const broker = w.broker;
const instance = w.instance("pi-coder", "bounds");
const ws = instance.workspace;
// The host's state (the probe's seccomp program, the runner's node) is this uid's too.
const p = prepareLaunch(
  w.request(instance, {
    hostEnv: { ...w.hostEnv, MOSAIC_STATE_DIR: w.stateDir },
    timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 30 },
  }),
);
if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
const bounds = structuredClone(p.prepared.session.sessionFile.bounds);
EDITS[which](bounds);
const s = await start({
  ...p.prepared,
  session: { ...p.prepared.session, sessionFile: { ...p.prepared.session.sessionFile, bounds } },
});
const toolSocket = p.prepared.session.sessionFile.toolSocket.path;
const node = p.prepared.facts.node.path;
const toolCall = `"${node}" -e 'const c=require("net").connect(${JSON.stringify(toolSocket)});c.on("connect",()=>c.write(JSON.stringify({id:1,tool:"send_message",args:{to:"pm-after",body:"after the garbage"}})+"\\n"));c.on("data",d=>{process.stdout.write(String(d));c.end()})'`;
const TURNS: Record<AsCase, () => string[]> = {
  garbage: () => [attackTurn(node, ws, toolSocket), "echo alive after the garbage", toolCall],
  "garbage-control": () => [attackTurn(node, ws, toolSocket)],
  stdout: () => [STDOUT_FLOOD, "echo next"],
  "stdout-control": () => [STDOUT_FLOOD],
  leftovers: () => [LEFTOVERS_TURN, LEFTOVERS_COUNT],
  "leftovers-control": () => [LEFTOVERS_TURN, LEFTOVERS_COUNT],
};

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
let ended: string | null = null;
void s.exited.then((e) => (ended = e.reason));
for (
  let t0 = Date.now();
  !broker.records().some((r) => r.verb === "role.claim" && r.outcome === "ok");
  await wait(20)
) {
  if (ended !== null || Date.now() - t0 > 15_000) throw new Error(`no claim: ${s.stderr()}`);
}
const pid = runnerPid(s.pid);
const before = peakMiB(pid);
let after = before;
const replies: string[] = [];
for (const body of TURNS[which]()) {
  const id = broker.deliver("bounds", { from: "pm-as", body });
  let reply: string | undefined;
  for (let t0 = Date.now(); reply === undefined && ended === null && Date.now() - t0 < 90_000; await wait(25)) {
    reply = broker.sentTo("pm-as").find((m) => m.kind === "result" && m.replyTo === id)?.body;
  }
  replies.push(reply ?? (ended !== null ? `(the session ended: ${ended})` : "(no reply)"));
  if (ended !== null) break;
  after = peakMiB(pid);
}
if (which.startsWith("leftovers")) await wait(3000);
const records = broker.records();
const observed: AsObserved = {
  uid: process.getuid?.() ?? -1,
  replies,
  ended,
  stderr: s.stderr().slice(-600),
  survivor: existsSync(survivorMarker(ws)),
  peak: { before, after },
  deepReachedBroker: records.some(
    (r) => r.verb === "message.send" && Array.isArray((r.args as { body?: unknown } | null)?.body),
  ),
  released: records.some((r) => r.verb === "role.release"),
  toolCallOk: records.some(
    (r) =>
      r.verb === "message.send" &&
      r.capValid &&
      r.outcome === "ok" &&
      JSON.stringify(r.args).includes("after the garbage"),
  ),
  bounds,
};
if (ended === null) await s.stop();
await w.close();
process.stdout.write(JSON.stringify(observed) + "\n");
process.exit(0);
