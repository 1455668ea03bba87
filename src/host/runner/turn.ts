import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, writeSync } from "node:fs";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { TurnRun } from "../../core/runner/decisions.ts";

export interface RunningTurn {
  done: Promise<TurnRun>;
  /** Kills everything the turn started: its process group, and the namespace when the runner heads one. */
  kill(): void;
}

export interface TurnOptions {
  timeoutMs: number;
  /** The turn's stderr record, a new file openTurnFiles() made (turn-files.ts); the turn closes it. */
  stderrFd: number;
  /** Whether the turn wrote its turn-end marker (Pi's agent_end), asked once its process is done. */
  markerWritten: () => boolean;
  stdoutBytes: number;
  stderrBytes: number;
  /** turnEndKill() said "namespace": the runner is pid 1 of its own PID namespace and the plan asks for it. */
  killNamespace: boolean;
}

/** After the turn's process exits, how long its pipes may stay open (held by something it left) when nothing killed that. */
const CLOSE_GRACE_MS = 1000;

/** What the turn's readers, its timer and its end share. */
interface TurnState {
  timedOut: boolean;
  overCap: TurnRun["overCap"];
}

/** Past a cap: stop reading that stream, kill the turn; the turn fails naming the stream and the cap. */
type Capped = (stream: "stdout" | "stderr", cap: number) => void;

/**
 * Every process in the runner's PID namespace but the runner: what a turn left behind, `setsid`
 * or not. The caller decided with turnEndKill(); the pid check again here keeps a runner that is
 * not pid 1 from signalling anything it does not head, whatever it was told.
 */
function killNamespace(): void {
  if (process.pid !== 1) return;
  try {
    process.kill(-1, "SIGKILL"); // safety: turn-leftovers-survive
  } catch {
    // nothing else left
  }
}

/** The turn's process group, and with `namespace` every other process of the runner's namespace. */
function killTurn(child: ChildProcess, namespace: boolean): void {
  try {
    process.kill(-child.pid!, "SIGKILL"); // safety: turn-group-survives
  } catch {
    // already gone
  }
  if (namespace) killNamespace();
}

/**
 * One harness turn: the adapter's argv with the message appended, in its own process group, stdin
 * closed, stdout read up to its cap, stderr written through to its record (turns/NNNN.stderr, 0600)
 * up to its cap. Past a cap, or at the wall clock, or when its process exits, everything the turn
 * started is killed.
 */
export function startTurn(
  adapter: { argv: string[]; env: Record<string, string>; cwd: string },
  message: string,
  opts: TurnOptions,
): RunningTurn {
  const [cmd, ...args] = adapter.argv;
  const child = spawn(cmd!, [...args, message], {
    cwd: adapter.cwd,
    env: adapter.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const kill = () => killTurn(child, opts.killNamespace);
  const state: TurnState = { timedOut: false, overCap: null };
  const timer = setTimeout(() => {
    state.timedOut = true;
    kill();
  }, opts.timeoutMs);
  const capped: Capped = (stream, cap) => {
    if (state.overCap === null) state.overCap = { stream, cap };
    child[stream]!.destroy();
    kill();
  };
  const stdout = readStdout(child.stdout!, opts, state, capped);
  const record = recordStderr(child.stderr!, opts, state, capped);
  const done = turnEnd(child, { state, timer, kill, stdout, record, markerWritten: opts.markerWritten });
  return { done, kill };
}

/** stdout read up to its cap, decoded across chunks: the text so far, once the turn is done. */
function readStdout(out: Readable, opts: TurnOptions, state: TurnState, capped: Capped): () => string {
  let stdout = "";
  let stdoutBytes = 0;
  const decoder = new StringDecoder("utf8");
  out.on("error", () => {});
  out.on("data", (d: Buffer) => {
    if (state.overCap !== null) return;
    stdoutBytes += d.length;
    if (stdoutBytes > opts.stdoutBytes) return capped("stdout", opts.stdoutBytes); // safety: turn-stdout-unbounded
    stdout += decoder.write(d);
  });
  return () => stdout + decoder.end();
}

/** stderr written through to the turn's record up to its cap; the returned close() closes the record once. */
function recordStderr(err: Readable, opts: TurnOptions, state: TurnState, capped: Capped): () => void {
  let errFd: number | null = opts.stderrFd;
  let stderrBytes = 0;
  const closeErr = () => {
    if (errFd !== null) closeSync(errFd);
    errFd = null;
  };
  err.on("error", () => {});
  err.on("data", (d: Buffer) => {
    if (state.overCap !== null) return;
    const room = opts.stderrBytes - stderrBytes;
    stderrBytes += d.length;
    if (errFd !== null) {
      try {
        writeSync(errFd, d, 0, Math.max(0, Math.min(room, d.length)));
      } catch {
        closeErr(); // a full disk ends the record, not the turn
      }
    }
    if (stderrBytes > opts.stderrBytes) capped("stderr", opts.stderrBytes); // safety: turn-stderr-unbounded
  });
  return closeErr;
}

/**
 * How the turn ends. It ends when its process exits: whatever it left running goes with it, and its
 * pipes close. A leftover that nothing killed may hold them open: they are closed after a grace.
 */
function turnEnd(
  child: ChildProcess,
  t: {
    state: TurnState;
    timer: NodeJS.Timeout;
    kill: () => void;
    stdout: () => string;
    record: () => void;
    markerWritten: () => boolean;
  },
): Promise<TurnRun> {
  return new Promise<TurnRun>((resolve) => {
    child.on("error", (e) => {
      clearTimeout(t.timer);
      t.record();
      resolve({
        code: 127,
        signal: null,
        timedOut: t.state.timedOut,
        stdout: `${e.message}\n`,
        marker: false,
        overCap: null,
      });
    });
    child.on("exit", () => {
      clearTimeout(t.timer);
      t.kill();
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, CLOSE_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => {
      clearTimeout(t.timer);
      t.record();
      const stdout = t.stdout();
      resolve({
        code,
        signal,
        timedOut: t.state.timedOut,
        stdout,
        marker: t.markerWritten(),
        overCap: t.state.overCap,
      });
    });
  });
}
