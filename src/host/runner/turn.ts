import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, writeSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import type { TurnRun } from "../../core/runner/decisions.ts";

export interface RunningTurn {
  done: Promise<TurnRun>;
  /** Kills everything the turn started: its process group, and the namespace when the runner heads one. */
  kill(): void;
}

export interface TurnOptions {
  timeoutMs: number;
  stderrFile: string;
  marker: string | null;
  stdoutBytes: number;
  stderrBytes: number;
  /** turnEndKill() said "namespace": the runner is pid 1 of its own PID namespace and the plan asks for it. */
  killNamespace: boolean;
}

/** After the turn's process exits, how long its pipes may stay open (held by something it left) when nothing killed that. */
const CLOSE_GRACE_MS = 1000;

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

/**
 * One harness turn: the adapter's argv with the message appended, in its own process group, stdin
 * closed, stdout read up to its cap, stderr written through to turns/NNNN.stderr (0600) up to its
 * cap. Past a cap, or at the wall clock, or when its process exits, everything the turn started is
 * killed.
 */
export function startTurn(
  adapter: { argv: string[]; env: Record<string, string>; cwd: string },
  message: string,
  opts: TurnOptions,
): RunningTurn {
  if (opts.marker !== null) rmSync(opts.marker, { force: true }); // safety: turn-stale-marker
  const err = openSync(opts.stderrFile, "w", 0o600);
  const [cmd, ...args] = adapter.argv;
  const child = spawn(cmd!, [...args, message], {
    cwd: adapter.cwd,
    env: adapter.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const kill = () => {
    try {
      process.kill(-child.pid!, "SIGKILL"); // safety: turn-group-survives
    } catch {
      // already gone
    }
    if (opts.killNamespace) killNamespace();
  };
  let timedOut = false;
  let overCap: TurnRun["overCap"] = null;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs);
  /** Past a cap: stop reading, kill the turn; the turn fails naming the stream and the cap. */
  const capped = (stream: "stdout" | "stderr", cap: number) => {
    if (overCap === null) overCap = { stream, cap };
    child[stream]!.destroy();
    kill();
  };

  let stdout = "";
  let stdoutBytes = 0;
  const decoder = new StringDecoder("utf8");
  child.stdout!.on("error", () => {});
  child.stdout!.on("data", (d: Buffer) => {
    if (overCap !== null) return;
    stdoutBytes += d.length;
    if (stdoutBytes > opts.stdoutBytes) return capped("stdout", opts.stdoutBytes); // safety: turn-stdout-unbounded
    stdout += decoder.write(d);
  });

  let errFd: number | null = err;
  let stderrBytes = 0;
  const closeErr = () => {
    if (errFd !== null) closeSync(errFd);
    errFd = null;
  };
  child.stderr!.on("error", () => {});
  child.stderr!.on("data", (d: Buffer) => {
    if (overCap !== null) return;
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

  const done = new Promise<TurnRun>((resolve) => {
    child.on("error", (e) => {
      clearTimeout(timer);
      closeErr();
      resolve({ code: 127, signal: null, timedOut, stdout: `${e.message}\n`, marker: false, overCap: null });
    });
    // The turn ends when its process exits: whatever it left running goes with it, and its pipes
    // close. A leftover that nothing killed may hold them open: they are closed after a grace.
    child.on("exit", () => {
      clearTimeout(timer);
      kill();
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, CLOSE_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      closeErr();
      stdout += decoder.end();
      resolve({ code, signal, timedOut, stdout, marker: opts.marker !== null && existsSync(opts.marker), overCap });
    });
  });
  return { done, kill };
}
