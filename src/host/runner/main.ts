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
  turnStderrName,
  type BrokerAnswer,
  type Message,
} from "../../core/runner/decisions.ts";
import { parseCapabilityLine, parseSessionFile, type SessionFile } from "../../core/runner/session-file.ts";
import { turnEndKill } from "../../core/runner/bounds.ts";
import { parseToolRoutes } from "../../core/runner/tool-call.ts";
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

async function main(): Promise<void> {
  const runDir = process.argv[2];
  if (runDir === undefined || !runDir.startsWith("/")) return finish(EXIT.badRunDir, "usage: runner <run directory>");
  let text: string;
  try {
    text = readFileSync(join(runDir, "session.json"), "utf8");
  } catch (e) {
    return finish(EXIT.badRunDir, `${runDir}/session.json: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const parsed = parseSessionFile(text);
  if (!parsed.ok) return finish(EXIT.badRunDir, `session.json: ${parsed.field}: ${parsed.why}`);
  const s = parsed.value;
  session = s;
  const line = await readFirstLine();
  const c =
    line === null ? { ok: false as const, field: "stdin", why: "no capability line" } : parseCapabilityLine(line);
  if (!c.ok) return finish(EXIT.badRunDir, `${c.field}: ${c.why}`);
  cap = c.value;
  if (stopping) return;

  // Founder-credential stop (REQ-CRED-2), before the claim.
  const founder = founderVariables(process.env);
  if (founder.length > 0)
    return finish(EXIT.founderCredentials, `founder credentials in the environment: ${founder.join(", ")}`); // safety: runner-founder-stop

  const timeoutMs = s.brokerTimeoutSeconds * 1000;
  const broker = (verb: string, args: Record<string, unknown> = {}): Promise<BrokerAnswer> =>
    callBroker(s.brokerSocket, cap!, verb, args, timeoutMs);
  const claim = claimOutcome(await broker("role.claim"));
  if (claim.kind === "exit") return finish(claim.code, claim.why);
  claimed = true;
  if (stopping) return;

  const routes = (() => {
    try {
      const r = parseToolRoutes(readFileSync(join(runDir, "bundle/tools.json"), "utf8"));
      return r instanceof Map ? r : (log(`tools.json: ${r.problem}; no typed tool is served`), new Map());
    } catch {
      log("no tools.json; no typed tool is served");
      return new Map();
    }
  })();
  servers.push(
    await serveToolSocket(
      s.toolSocket,
      routes,
      s.launchSocket,
      (socket, verb, args) =>
        callBroker(socket === "launch" ? s.launchSocket! : s.brokerSocket, cap!, verb, args, timeoutMs),
      s.bounds.toolSocket,
      (r) => keepReport(reports, r),
    ),
  );
  if (s.model !== null) servers.push(await forwardModelPort(s.model.port, s.model.socket));
  log(`claimed ${s.instance} for run ${s.run}`);

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
      const marker = s.turnEnd.kind === "marker" ? s.turnEnd.file : null;
      reports = [];
      current = startTurn(s.adapter, m.body, {
        timeoutMs: s.turnTimeoutSeconds * 1000,
        stderrFile: join(runDir, "turns", turnStderrName(turns)),
        marker,
        stdoutBytes: s.bounds.turn.stdoutBytes,
        stderrBytes: s.bounds.turn.stderrBytes,
        killNamespace: turnEndKill(process.pid, s.bounds.turn.killNamespace) === "namespace", // safety: runner-turn-leftovers-kept
      });
      const run = await current.done;
      current = null;
      if (stopping) break;
      let outcome = judgeTurn(s.turnEnd, run, s.turnTimeoutSeconds);
      if (s.tripwire !== null) {
        const wire = checkTripwire(s.tripwire, completedCalls(s.tripwire.stream, run.stdout), reports);
        log(tripwireLine(turns, wire));
        // A turn that failed already keeps its own reason; the record line above names the tripwire's.
        if (wire.kind === "tripped" && outcome.kind === "ok") outcome = { kind: "failed", why: wire.reply }; // safety: tripwire-ignored
      }
      log(`turn ${turns}: ${outcome.kind === "ok" ? "ok" : `failed: ${outcome.why}`}`);
      const send = (body: string) => broker("message.send", { to: m.from, kind: "result", replyTo: m.id, body });
      let sent = await send(replyText(outcome));
      // A reply the broker did not take (longer than its line once escaped, say): the sender still hears the turn ended.
      if (sent.kind !== "ok" && !(sent.kind === "error" && SESSION_GONE_CODES.includes(sent.code))) {
        const why = sent.kind === "error" ? `${sent.code}: ${sent.message}` : sent.why;
        sent = await send(replyText({ kind: "failed", why: `its reply was not delivered (${why.slice(0, 200)})` }));
      }
      if (sent.kind === "error" && SESSION_GONE_CODES.includes(sent.code))
        return finish(EXIT.sessionInvalid, `message.send: ${sent.code}`);
    }
    if (!stopping) await new Promise((r) => setTimeout(r, s.pollMs));
  }
}

main().catch((e: unknown) =>
  finish(EXIT.badRunDir, `the runner crashed: ${e instanceof Error ? e.message : String(e)}`),
);
