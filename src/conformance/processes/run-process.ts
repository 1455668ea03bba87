import { spawn, type ChildProcess } from "node:child_process";

export interface ProcessResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a process without blocking the event loop (a scripted server in this process must keep
 * answering), stdin closed, killed with its whole group after timeoutMs.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ProcessResult> {
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  return collectProcess(child, opts.timeoutMs);
}

/** A spawned process's output and end; the process and its group are killed after timeoutMs. */
export function collectProcess(child: ChildProcess, timeoutMs: number): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
  });
}
