// What live/runner-plants.test.ts and its second identity (runner-plants-as.ts) share: one session
// through the real launcher and runner (pid 1 of a real bwrap sandbox, the fake adapter) whose first
// turn plants a name where the runner keeps its turn files, the turns after it, a bounded stop, and
// the positive control: the runner's old call on the same planted name, in a child process of the
// caller's uid, bounded and killed.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { planRunnerBounds } from "../../src/core/runner/bounds.ts";
import type { RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start, type LaunchEnd, type Session } from "../../src/host/launcher.ts";
import { childrenOf, isAlive } from "../../src/host/session-procs.ts";

/** What turn 1 plants: at the next turn's stderr record, at Pi's turn-end marker, or turns/ itself swapped for a link. */
export type Plant = "fifo" | "directory" | "link" | "marker-directory" | "turns-link";
export const PLANTS: readonly Plant[] = ["fifo", "directory", "link", "marker-directory", "turns-link"];

/** How long stop() may take before the session is taken as stuck, and its processes killed. */
export const STOP_BOUND_MS = 10_000;
/** How long the control's old call may take before it is taken as blocked, and killed. */
export const CONTROL_BOUND_MS = 3000;
export const HOST_TEXT = "the host's own file\n";

export interface PlantObserved {
  /** The session's run directory. */
  run: string;
  replies: string[];
  /** How long stop() took, or null: past STOP_BOUND_MS, and the session's processes were killed. */
  stopMs: number | null;
  end: string | null;
  released: boolean;
  /** The host file the link points at, after the session. */
  hostFile: string;
  /** The names in the workspace (the link's other end) after the session. */
  workspaceHasRecord: boolean;
  /** turns.moved/0002.stderr after the turns-link plant, or null. */
  movedRecord: string | null;
  /** The runner's old call on the planted name, in a child: "blocked" when it was killed at the bound, else what it did. */
  control: string;
  /** The host file after the control. */
  hostFileAfterControl: string;
  /** Whether the control's record landed in the workspace, through the swapped turns/. */
  controlThroughLink: boolean;
}

/** The turns of a case: turn 1 plants, the rest would run next. */
function turnsOf(plant: Plant, run: string, ws: string, host: string): string[] {
  const record = `${run}/turns/0002.stderr`;
  const made: Record<Plant, string> = {
    fifo: `mkfifo "${record}"`,
    directory: `mkdir "${record}"`,
    link: `ln -s "${host}" "${record}"`,
    "marker-directory": `mkdir -p "${run}/turn.done/inside"`,
    "turns-link": `mv "${run}/turns" "${run}/turns.moved" && ln -s "${ws}" "${run}/turns"`,
  };
  if (plant === "turns-link") return [`${made[plant]} && echo planted`, "echo two >&2; echo two"];
  return [`${made[plant]} && echo planted`, "echo two", "echo three"];
}

/**
 * The runner's old call on what was planted, in a child process: its open(…, "w") of the record
 * (of a record under the swapped turns/ for turns-link), or its rmSync of the marker.
 */
function oldCall(plant: Plant, run: string): string {
  const code =
    plant === "marker-directory"
      ? `require("fs").rmSync(${JSON.stringify(`${run}/turn.done`)}, { force: true })`
      : `const fs = require("fs"); const fd = fs.openSync(${JSON.stringify(`${run}/turns/${plant === "turns-link" ? "0009" : "0002"}.stderr`)}, "w", 0o600); fs.writeSync(fd, "the old open wrote this\\n")`;
  const r = spawnSync(
    process.execPath,
    ["-e", `try { ${code}; console.log("done") } catch (e) { console.log(e.code) }`],
    {
      encoding: "utf8",
      timeout: CONTROL_BOUND_MS,
      killSignal: "SIGKILL",
    },
  );
  return r.signal === "SIGKILL" ? "blocked" : r.stdout.trim();
}

/** Stops the session within the bound; past it, kills every process under its bwrap and waits for the end. */
async function boundedStop(s: Session): Promise<{ ms: number | null; end: LaunchEnd }> {
  const t0 = Date.now();
  const end = await Promise.race([s.stop(), new Promise<null>((r) => setTimeout(() => r(null), STOP_BOUND_MS))]);
  if (end !== null) return { ms: Date.now() - t0, end };
  const all = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(all)];
  for (const pid of all(s.pid).reverse().filter(isAlive)) process.kill(pid, "SIGKILL");
  return { ms: null, end: await s.exited };
}

/** The reply to one message, or "(no reply)" after ms. */
async function replyTo(w: RuntimeWorld, instance: string, body: string, ms: number): Promise<string> {
  const id = w.broker.deliver(instance, { from: "pm-plants", body });
  for (const t0 = Date.now(); Date.now() - t0 < ms; await new Promise((r) => setTimeout(r, 25))) {
    const m = w.broker.sentTo("pm-plants").find((x) => x.kind === "result" && x.replyTo === id);
    if (m !== undefined) return m.body;
  }
  return "(no reply)";
}

/** One plant's session, start to stop, and its control. `hostEnv` is the world's unless the caller's identity needs its own. */
export async function plantCase(
  w: RuntimeWorld,
  plant: Plant,
  name: string,
  hostEnv = w.hostEnv,
): Promise<PlantObserved> {
  const p = prepareLaunch(
    w.request(w.instance("pi-coder", name), {
      hostEnv,
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 20 },
    }),
  );
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  const run = p.prepared.req.runDir;
  const ws = p.prepared.session.spec.workspace;
  // A file of the host's the session's uid may write, as any file in its workspace: the old open wrote through a link to it.
  const host = join(ws, "host-file");
  writeFileSync(host, HOST_TEXT);
  chmodSync(host, 0o666);
  let sessionFile = p.prepared.session.sessionFile;
  if (plant === "marker-directory") {
    const turnEnd = { kind: "marker" as const, file: `${run}/turn.done`, writtenAt: "agent_end", why: "a stand-in" };
    sessionFile = { ...sessionFile, turnEnd, bounds: planRunnerBounds(turnEnd) };
  }
  const s = await start({ ...p.prepared, session: { ...p.prepared.session, sessionFile } });
  const replies: string[] = [];
  let stopped: { ms: number | null; end: LaunchEnd };
  try {
    await waitForClaim(w, name, s);
    for (const body of turnsOf(plant, run, ws, host)) {
      replies.push(await replyTo(w, name, body, 15_000));
      if (replies.at(-1) === "(no reply)") break;
    }
  } finally {
    stopped = await boundedStop(s);
  }
  const hostFile = readFileSync(host, "utf8");
  const moved = join(run, "turns.moved/0002.stderr");
  return {
    run,
    replies,
    stopMs: stopped.ms,
    end: stopped.end.reason,
    released: w.broker.records().some((r) => r.run === name && r.verb === "role.release" && r.outcome === "ok"),
    hostFile,
    workspaceHasRecord: existsSync(join(ws, "0002.stderr")),
    movedRecord: existsSync(moved) ? readFileSync(moved, "utf8") : null,
    control: oldCall(plant, run),
    hostFileAfterControl: readFileSync(host, "utf8"),
    controlThroughLink: existsSync(join(ws, "0009.stderr")),
  };
}

async function waitForClaim(w: RuntimeWorld, run: string, s: Session): Promise<void> {
  let over = false;
  void s.exited.then(() => (over = true));
  for (const t0 = Date.now(); !over && Date.now() - t0 < 15_000; await new Promise((r) => setTimeout(r, 20)))
    if (w.broker.records().some((r) => r.verb === "role.claim" && r.run === run && r.outcome === "ok")) return;
  throw new Error(`no claim: ${s.stderr()}`);
}
