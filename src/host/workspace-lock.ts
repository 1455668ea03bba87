// One launch per workspace at a time. A launch takes its workspace's lock before it touches the
// tree and holds it until its session has ended and the end-of-session check is done; a second
// launch meets the lock and is refused, naming the run that holds it. No launch ever removes
// another's lock: only the holder releases it, and recover() releases those of the runs it ends.
import { closeSync, constants, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { MosaicError } from "../core/errors.ts";

export type LockHolder = { run: string; workspace: string; hostPid: number; at: string };

/** Reads a lock's holder, or null when there is no lock (or it cannot be read as one). */
export function readWorkspaceLock(path: string): LockHolder | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockHolder;
  } catch {
    return null;
  }
}

/** Takes the lock for `holder.run`, or refuses workspace-busy naming the run that holds it. */
export function takeWorkspaceLock(path: string, holder: LockHolder): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    // O_EXCL: of two launches at the same moment exactly one makes the file.
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600); // safety: workspace-lock-shared
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const other = readWorkspaceLock(path);
    throw new MosaicError(
      "workspace-busy",
      holder.workspace,
      `another launch holds this workspace (run ${other?.run ?? "unknown"}, host pid ${other?.hostPid ?? "unknown"}, since ${other?.at ?? "unknown"}); one session per workspace at a time`,
    );
  }
  try {
    writeSync(fd, JSON.stringify(holder) + "\n");
  } finally {
    closeSync(fd);
  }
}

/** Releases the lock if `run` holds it; a lock another run holds stays. */
export function releaseWorkspaceLock(path: string, run: string): void {
  if (readWorkspaceLock(path)?.run === run) rmSync(path, { force: true });
}
