import { readFileSync, readdirSync } from "node:fs";

/** A process's argv from /proc, or null when it is gone. */
export function cmdlineOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .filter((t, i, a) => i < a.length - 1 || t !== "");
  } catch {
    return null;
  }
}

/** The direct children of a process: for bwrap, the sandbox's pid 1 (the runner). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process still runs: a zombie (dead, not yet reaped by its parent) does not. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state follows the command's closing parenthesis, which may itself hold spaces or parentheses.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/**
 * The bwrap processes whose command line runs a session in `runDir` (its `--chdir` and the
 * runner's last argument): how recover() finds a session by its command line, as seed 002 says.
 */
export function findSessionBwraps(runDir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const argv = cmdlineOf(Number(name));
    if (argv === null || argv.length === 0 || !/(^|\/)bwrap$/.test(argv[0]!)) continue;
    const chdir = argv.indexOf("--chdir");
    if (chdir !== -1 && argv[chdir + 1] === runDir && argv.at(-1) === runDir) out.push(Number(name)); // safety: recover-matches-unshare
  }
  return out;
}
