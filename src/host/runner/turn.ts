import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import type { TurnRun } from "../../core/runner/decisions.ts";

export interface RunningTurn {
  done: Promise<TurnRun>;
  /** Kills the turn's whole process group. */
  kill(): void;
}

/**
 * One harness turn: the adapter's argv with the message appended, in its own process group, stdin
 * closed, stderr to turns/NNNN.stderr (0600), killed with its group at the wall clock.
 */
export function startTurn(adapter: { argv: string[]; env: Record<string, string>; cwd: string }, message: string, opts: { timeoutMs: number; stderrFile: string; marker: string | null }): RunningTurn {
  if (opts.marker !== null) rmSync(opts.marker, { force: true });
  const err = openSync(opts.stderrFile, "w", 0o600);
  const [cmd, ...args] = adapter.argv;
  const child = spawn(cmd!, [...args, message], { cwd: adapter.cwd, env: adapter.env, stdio: ["ignore", "pipe", err], detached: true });
  closeSync(err);
  const kill = () => {
    try {
      process.kill(-child.pid!, "SIGKILL"); // safety: turn-group-survives
    } catch {
      // already gone
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs);
  let stdout = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  const done = new Promise<TurnRun>((resolve) => {
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: 127, signal: null, timedOut, stdout: `${e.message}\n`, marker: false });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Whatever the harness left running in its group goes with it.
      kill();
      resolve({ code, signal, timedOut, stdout, marker: opts.marker !== null && existsSync(opts.marker) });
    });
  });
  return { done, kill };
}
