// Host locks a launch holds for its session's whole life. The workspace's: one launch per workspace,
// taken before anything touches the tree and released once the session has ended and the
// end-of-session check is done, so a second launch meets it and is refused, naming the run that
// holds it. A root caller's session uid's: no two live sessions share a uid. No launch ever removes
// another's lock: only the holder releases it, and recover() releases those of the runs it ends.
import { closeSync, constants, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeSync } from "node:fs";
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

const holderLine = (other: LockHolder | null) =>
  `run ${other?.run ?? "unknown"}, host pid ${other?.hostPid ?? "unknown"}, since ${other?.at ?? "unknown"}`;

/**
 * Takes the lock at `path` for `holder.run`: made with O_EXCL, so of two launches at the same
 * moment exactly one makes it. A lock already there is `busy(holder of it)`'s refusal.
 */
export function takeHostLock(path: string, holder: LockHolder, busy: (line: string) => MosaicError): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600); // safety: workspace-lock-shared
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    throw busy(holderLine(readWorkspaceLock(path)));
  }
  try {
    writeSync(fd, JSON.stringify(holder) + "\n");
  } finally {
    closeSync(fd);
  }
}

/** Takes the workspace's lock, or refuses workspace-busy naming the run that holds it. */
export function takeWorkspaceLock(path: string, holder: LockHolder): void {
  takeHostLock(
    path,
    holder,
    (line) =>
      new MosaicError(
        "workspace-busy",
        holder.workspace,
        `another launch holds this workspace (${line}); one session per workspace at a time`,
      ),
  );
}

/** Releases the lock if `run` holds it; a lock another run holds stays. */
export function releaseWorkspaceLock(path: string, run: string): void {
  if (readWorkspaceLock(path)?.run === run) rmSync(path, { force: true });
}

/** The uids the locks in `dir` hold (`<uid>.lock`): what live sessions run as now. */
export function heldUids(dir: string): number[] {
  try {
    return readdirSync(dir)
      .map((n) => /^([0-9]+)\.lock$/.exec(n)?.[1])
      .filter((u): u is string => u !== undefined)
      .map(Number);
  } catch {
    return [];
  }
}
