import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { at, openDirAt, openDirPath } from "../../host/dir-fd.ts";
import { REPO_ROOT } from "../golden/golden.ts";

// Races for the host's acts on a workspace its session's uid still writes: a racer swapping names
// (swap-racer.ts) and the shipped code's loop (check-loop.ts), each a process of its own, so a
// synchronous loop of the host's code races a writer it cannot starve.
const SUPPORT = join(REPO_ROOT, "contract/support");
const RACER = join(SUPPORT, "swap-racer.ts");
export const LOOP = join(SUPPORT, "check-loop.ts");
/** The end-of-session check in a process of its own: `node CHECK_AS <workspace> <quarantine>` prints its report. */
export const CHECK_AS = join(SUPPORT, "check-as.ts");

/** Starts the racer and waits for it to say it races; stop() ends it by closing its stdin. */
export async function race(...args: string[]): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [RACER, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((ok, fail) => {
    child.stdout!.once("data", () => ok());
    child.once("exit", (code) => fail(new Error(`the racer exited ${code} before racing`)));
  });
  return {
    child,
    stop: () =>
      new Promise<void>((ok) => {
        child.once("exit", () => ok());
        child.stdin!.end();
      }),
  };
}

/** check-loop.ts's tally: what the shipped code did, and how often the watched path changed. */
export function loop(mode: string, ws: string, arg: string, n: number, watched: string): Record<string, number> {
  const r = spawnSync(process.execPath, [LOOP, mode, ws, arg, String(n), watched], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.status, `the loop ran to its end: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}

/**
 * Whether a thread of pid sleeps in a fifo's open, waiting for the other end: Linux names that sleep
 * `wait_for_partner` in /proc. A read-only open with O_NONBLOCK never sleeps there, whatever the
 * load; a plain open of a fifo with no writer sleeps there until one comes. Null when /proc hides it.
 */
export function sleepsInFifoOpen(pid: number): boolean | null {
  let seen: boolean | null = null;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const wchan = readFileSync(`/proc/${pid}/task/${tid}/wchan`, "utf8").trim();
      if (wchan === "wait_for_partner") return true;
      if (wchan !== "0" && wchan !== "") seen = false;
    }
  } catch {
    // exited meanwhile
  }
  return seen;
}

/** How check-loop.ts ended: its exit and output, or the fifo open it slept in (then it was killed). */
export type Watched = { inFifoOpen: boolean; status: number | null; stdout: string; stderr: string };

/**
 * Runs check-loop.ts, looking at its threads every 50 ms: one seen asleep in a fifo's open ends the
 * run there, so a hang is told by what the process does, not by how long it took. limitMs only
 * bounds a host whose /proc hides it.
 */
export function watchLoop(args: readonly string[], limitMs: number): Promise<Watched> {
  const child = spawn(process.execPath, [LOOP, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  let inFifoOpen = false;
  const look = setInterval(() => {
    if (child.pid !== undefined && sleepsInFifoOpen(child.pid) === true) {
      inFifoOpen = true;
      child.kill("SIGKILL");
    }
  }, 50);
  const limit = setTimeout(() => child.kill("SIGKILL"), limitMs);
  return new Promise((ok) =>
    child.once("close", (status) => {
      clearInterval(look);
      clearTimeout(limit);
      ok({ inFifoOpen, status, stdout, stderr });
    }),
  );
}

/** Yields to the event loop now and then, so the racer's pipes stay served while a synchronous loop runs. */
export const tick = () => new Promise((ok) => setImmediate(ok));

/** A chain of `levels` directories named d below root, made by descriptor (no path that long can be named), a setuid file at the bottom. */
export function makeDeep(root: string, levels: number): void {
  let fd = openDirPath(root);
  for (let i = 0; i < levels; i++) {
    mkdirSync(at(fd, "d"));
    const next = openDirAt(fd, "d");
    closeSync(fd);
    fd = next;
  }
  writeFileSync(at(fd, "rootshell"), "x");
  chmodSync(at(fd, "rootshell"), 0o4755);
  closeSync(fd);
}

/**
 * A positive control's by-path act, tried against a running racer until it is fooled or `budgetMs`
 * passes. Bounded by time, not by a count: how many tries the window takes varies with the
 * machine's cores and load (tens of thousands on an idle two-core machine, seen here).
 * Returns the tries it took, or 0 when the budget ran out unfooled.
 */
export async function untilFooled(attempt: () => boolean, budgetMs = 60_000): Promise<number> {
  const end = Date.now() + budgetMs;
  for (let i = 1; Date.now() < end; i++) {
    if (attempt()) return i;
    if (i % 500 === 0) await tick();
  }
  return 0;
}
