// The session runner: pid 1 of the sandbox's PID namespace, on the execute-only node.
// `node src/host/runner/main.ts <run>`, with `{"cap": "..."}` and a newline on stdin. It claims the
// role, serves the tool socket, forwards the model port, and runs one harness turn per message.
// It loads node's own modules and src/core only: no package (contract/runtime.test.ts checks).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "node:net";
import {
  EXIT,
  claimOutcome,
  judgeTurn,
  messageAction,
  pollStep,
  replyText,
  type BrokerAnswer,
  type Message,
  type TurnOutcome,
  type TurnRun,
} from "../../core/runner/decisions.ts";
import { parseCapabilityLine, parseSessionFile, type SessionFile } from "../../core/runner/session-file.ts";
import { turnEndKill } from "../../core/runner/bounds.ts";
import { parseToolRoutes, type ToolRoute } from "../../core/runner/tool-call.ts";
import {
  checkTripwire,
  keepReport,
  completedCalls,
  tripwireLine,
  type GateReport,
} from "../../core/runner/tripwire.ts";
import { founderVariables } from "../../core/session/env.ts";
import { callBroker } from "./broker-client.ts";
import { forwardModelPort } from "./model-forward.ts";
import { serveToolSocket } from "./tool-server.ts";
import { startTurn, type RunningTurn } from "./turn.ts";
import { openTurnFiles, pinTurnDirs, type TurnDirs } from "./turn-files.ts";

let stopping = false;
let claimed = false;
let current: RunningTurn | null = null;
let session: SessionFile | null = null;
let cap: string | null = null;
const servers: Server[] = [];
/** The gate's reports since the current turn started, for its tripwire. */
let reports: GateReport[] = [];
const SESSION_GONE_CODES = ["unauthenticated", "claim-revoked", "not-claimed"];

// A host that died leaves stderr a broken pipe: the runner keeps going, and ends at its next poll.
process.stderr.on("error", () => {});
const log = (line: string) => process.stderr.write(`mosaic runner: ${line}\n`);

let ending: Promise<never> | null = null;
/**
 * Ends the runner: the turn's group killed, the role released if it was claimed, the sockets closed.
 * Once only: a signal that lands while the runner releases on its own end keeps that end's code.
 */
function finish(code: number, why: string): Promise<never> {
  ending ??= end(code, why);
  return ending;
}

async function end(code: number, why: string): Promise<never> {
  log(`exit ${code}: ${why}`);
  current?.kill();
  if (claimed && session !== null && cap !== null) {
    await callBroker(session.brokerSocket, cap, "role.release", {}, 2000); // safety: runner-no-release
  }
  for (const s of servers) s.close();
  process.exit(code);
}

// Before anything else: pid 1 of a PID namespace never sees a signal it has no handler for.
// A stop before the claim exits 0 without claiming.
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  // safety: runner-no-signal-handlers
  process.on(sig, () => {
    stopping = true;
    void finish(EXIT.stopped, `${sig}`);
  });
}

function readFirstLine(): Promise<string | null> {
  return new Promise((resolve) => {
    let buf = "";
    process.stdin.setEncoding("utf8");
    const done = (v: string | null) => {
      process.stdin.removeAllListeners("data");
      process.stdin.pause();
      resolve(v);
    };
    process.stdin.on("data", (d: string) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl !== -1) done(buf.slice(0, nl));
      else if (buf.length > 64 * 1024) done(null);
    });
    process.stdin.on("end", () => done(buf === "" ? null : buf));
    process.stdin.on("error", () => done(null));
  });
}

/** A step that went well, or the runner's exit code and why. */
type Step<T> = { ok: true; value: T } | { ok: false; code: number; why: string };
type Broker = (verb: string, args?: Record<string, unknown>) => Promise<BrokerAnswer>;

/** session.json from the run directory, checked, and the turns' directories pinned before any turn runs. */
function loadRun(runDir: string | undefined): Step<{ runDir: string; s: SessionFile; dirs: TurnDirs }> {
  if (runDir === undefined || !runDir.startsWith("/"))
    return { ok: false, code: EXIT.badRunDir, why: "usage: runner <run directory>" };
  let text: string;
  try {
    text = readFileSync(join(runDir, "session.json"), "utf8");
  } catch (e) {
    const why = `${runDir}/session.json: ${(e as NodeJS.ErrnoException).code ?? String(e)}`;
    return { ok: false, code: EXIT.badRunDir, why };
  }
  const parsed = parseSessionFile(text);
  if (!parsed.ok) return { ok: false, code: EXIT.badRunDir, why: `session.json: ${parsed.field}: ${parsed.why}` };
  const s = parsed.value;
  const pinned = pinTurnDirs(runDir, s.turnEnd.kind === "marker" ? s.turnEnd.file : null);
  if (!pinned.ok) return { ok: false, code: EXIT.badRunDir, why: pinned.why };
  return { ok: true, value: { runDir, s, dirs: pinned.dirs } };
}

/** The capability, from the first line on stdin. */
async function readCapability(): Promise<Step<string>> {
  const line = await readFirstLine();
  const c =
    line === null ? { ok: false as const, field: "stdin", why: "no capability line" } : parseCapabilityLine(line);
  return c.ok ? c : { ok: false, code: EXIT.badRunDir, why: `${c.field}: ${c.why}` };
}

/** The typed tools tools.json lists; none when it is missing or bad. */
function readRoutes(runDir: string): Map<string, ToolRoute> {
  try {
    const r = parseToolRoutes(readFileSync(join(runDir, "bundle/tools.json"), "utf8"));
    return r instanceof Map ? r : (log(`tools.json: ${r.problem}; no typed tool is served`), new Map());
  } catch {
    log("no tools.json; no typed tool is served");
    return new Map();
  }
}

/** The tool socket, and the model port when the session has a model. */
async function serveSockets(s: SessionFile, runDir: string, timeoutMs: number): Promise<void> {
  servers.push(
    await serveToolSocket(
      s.toolSocket,
      readRoutes(runDir),
      s.launchSocket,
      (socket, verb, args) =>
        callBroker(socket === "launch" ? s.launchSocket! : s.brokerSocket, cap!, verb, args, timeoutMs),
      s.bounds.toolSocket,
      (r) => keepReport(reports, r),
    ),
  );
  if (s.model !== null) servers.push(await forwardModelPort(s.model.port, s.model.socket));
}

async function main(): Promise<void> {
  const run = loadRun(process.argv[2]);
  if (!run.ok) return finish(run.code, run.why);
  const { runDir, s, dirs } = run.value;
  session = s;
  const c = await readCapability();
  if (!c.ok) return finish(c.code, c.why);
  cap = c.value;
  if (stopping) return;

  // Founder-credential stop (REQ-CRED-2), before the claim.
  const founder = founderVariables(process.env);
  if (founder.length > 0)
    return finish(EXIT.founderCredentials, `founder credentials in the environment: ${founder.join(", ")}`); // safety: runner-founder-stop

  const timeoutMs = s.brokerTimeoutSeconds * 1000;
  const broker: Broker = (verb, args = {}) => callBroker(s.brokerSocket, cap!, verb, args, timeoutMs);
  const claim = claimOutcome(await broker("role.claim"));
  if (claim.kind === "exit") return finish(claim.code, claim.why);
  claimed = true;
  if (stopping) return;
  await serveSockets(s, runDir, timeoutMs);
  log(`claimed ${s.instance} for run ${s.run}`);
  return pollMessages(s, broker, dirs);
}

/** Polls the broker and runs a turn per message until a stop, or until the broker or the session is gone. */
async function pollMessages(s: SessionFile, broker: Broker, dirs: TurnDirs): Promise<void> {
  let failed = 0;
  let turns = 0;
  while (!stopping) {
    const a = await broker("message.read");
    const step = pollStep(failed, a, s.brokerRetries);
    failed = step.failed;
    if (step.stop !== null) return finish(step.stop.code, step.stop.why);
    const messages = a.kind === "ok" ? ((a.result as { messages?: Message[] } | null)?.messages ?? []) : [];
    for (const m of messages) {
      if (stopping) break;
      const action = messageAction(m);
      if (action.kind === "ignore") continue;
      turns += 1;
      const outcome = await takeTurn(s, m, turns, dirs);
      if (outcome === null) break;
      const gone = await reply(broker, m, outcome);
      if (gone !== null) return finish(EXIT.sessionInvalid, gone);
    }
    if (!stopping) await new Promise((r) => setTimeout(r, s.pollMs));
  }
}

/** The n-th turn, for message m: its files made, the turn run and judged. Null when a stop came during it. */
async function takeTurn(s: SessionFile, m: Message, n: number, dirs: TurnDirs): Promise<TurnOutcome | null> {
  const files = openTurnFiles(dirs, n, s.bounds.turn.stderrFiles);
  let outcome: TurnOutcome;
  if (!files.ok) outcome = { kind: "failed", why: files.why };
  else {
    reports = [];
    current = startTurn(s.adapter, m.body, {
      timeoutMs: s.turnTimeoutSeconds * 1000,
      ...files.files,
      stdoutBytes: s.bounds.turn.stdoutBytes,
      stderrBytes: s.bounds.turn.stderrBytes,
      killNamespace: turnEndKill(process.pid, s.bounds.turn.killNamespace) === "namespace", // safety: runner-turn-leftovers-kept
    });
    const run = await current.done;
    current = null;
    if (stopping) return null;
    outcome = judged(s, run, n);
  }
  log(`turn ${n}: ${outcome.kind === "ok" ? "ok" : `failed: ${outcome.why}`}`);
  return outcome;
}

/** Whether the turn counts: its harness's turn-end check, then the tripwire over what it did. */
function judged(s: SessionFile, run: TurnRun, n: number): TurnOutcome {
  const outcome = judgeTurn(s.turnEnd, run, s.turnTimeoutSeconds);
  if (s.tripwire === null) return outcome;
  const wire = checkTripwire(s.tripwire, completedCalls(s.tripwire.stream, run.stdout), reports);
  log(tripwireLine(n, wire));
  // A turn that failed already keeps its own reason; the record line above names the tripwire's.
  if (wire.kind === "tripped" && outcome.kind === "ok") return { kind: "failed", why: wire.reply }; // safety: tripwire-ignored
  return outcome;
}

/** Sends the turn's RESULT to the message's sender. Why the runner must stop (the session is gone), or null. */
async function reply(broker: Broker, m: Message, outcome: TurnOutcome): Promise<string | null> {
  const send = (body: string) => broker("message.send", { to: m.from, kind: "result", replyTo: m.id, body });
  let sent = await send(replyText(outcome));
  // A reply the broker did not take (longer than its line once escaped, say): the sender still hears the turn ended.
  if (sent.kind !== "ok" && !(sent.kind === "error" && SESSION_GONE_CODES.includes(sent.code))) {
    const why = sent.kind === "error" ? `${sent.code}: ${sent.message}` : sent.why;
    sent = await send(replyText({ kind: "failed", why: `its reply was not delivered (${why.slice(0, 200)})` }));
  }
  if (sent.kind === "error" && SESSION_GONE_CODES.includes(sent.code)) return `message.send: ${sent.code}`;
  return null;
}

main().catch((e: unknown) =>
  finish(EXIT.badRunDir, `the runner crashed: ${e instanceof Error ? e.message : String(e)}`),
);
