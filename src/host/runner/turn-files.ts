// A turn's files: its stderr record in turns/ and Pi's turn-end marker, both in the run directory,
// which the session writes too. The runner, pid 1, opens nothing there by a name the session may
// have planted: the directories are held by descriptor from before the first turn, each record is
// a new file the runner creates, and the marker is only unlinked and lstat'ed. A FIFO, a directory
// or a link at one of those names fails that turn with the reason; it never blocks or ends pid 1.
import { closeSync, constants, fstatSync, lstatSync, openSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { turnStderrName } from "../../core/runner/decisions.ts";
import { markerRefusal, recordRefusal, staleTurnRecord } from "../../core/runner/turn-records.ts";

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = constants;

/** A directory held by its descriptor: the one the runner opened, whatever is renamed or linked to its path later. */
interface PinnedDir {
  fd: number;
  /** Where it was when the runner opened it: for messages, never opened again. */
  path: string;
}

/** The directories a turn's files live in, pinned before any turn ran. */
export interface TurnDirs {
  records: PinnedDir;
  marker: { dir: PinnedDir; name: string; file: string } | null;
}

/** The turn's own files, made for it by openTurnFiles(). */
export interface TurnFiles {
  /** Its stderr record: a new regular file only the runner writes. startTurn() closes it. */
  stderrFd: number;
  /** Whether the turn wrote its marker: a regular file at the marker's name, a link not followed. Never throws. */
  markerWritten: () => boolean;
}

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? String(e);

/** A name in a pinned directory, reached through the runner's own descriptor, never through the path. */
const inPinned = (d: PinnedDir, name: string): string => `/proc/self/fd/${d.fd}/${name}`; // safety: turn-records-unpinned

/**
 * turns/ and the marker's directory, opened as directories (a link is refused) before any turn runs,
 * while nothing of the session has run. A directory that is missing or not one: the reason.
 */
export function pinTurnDirs(
  runDir: string,
  marker: string | null,
): { ok: true; dirs: TurnDirs } | { ok: false; why: string } {
  const records = pinDir(join(runDir, "turns"));
  if (typeof records === "string") return { ok: false, why: records };
  if (marker === null) return { ok: true, dirs: { records, marker: null } };
  const dir = pinDir(dirname(marker));
  if (typeof dir === "string") return { ok: false, why: dir };
  return { ok: true, dirs: { records, marker: { dir, name: basename(marker), file: marker } } };
}

/** A directory opened as one: a link, a FIFO or a file there is refused. The pin, or why not. */
function pinDir(path: string): PinnedDir | string {
  try {
    return { fd: openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW), path };
  } catch (e) {
    return `${path}: ${codeOf(e)}`;
  }
}

/**
 * The n-th turn's files: the marker a turn before left removed, the record that falls out of the
 * newest `keep` removed, and the turn's record made. A file that cannot be made: the turn's reason
 * to fail, and it does not run.
 */
export function openTurnFiles(
  dirs: TurnDirs,
  n: number,
  keep: number,
): { ok: true; files: TurnFiles } | { ok: false; why: string } {
  const marker = dirs.marker;
  if (marker !== null) {
    const left = clearName(marker.dir, marker.name); // safety: turn-stale-marker
    if (left !== null) return { ok: false, why: markerRefusal(marker.file, left) };
  }
  const stale = staleTurnRecord(n, keep);
  if (stale !== null) clearName(dirs.records, stale); // safety: turn-records-unbounded
  const name = turnStderrName(n);
  const made = createRecord(dirs.records, name);
  if (typeof made === "string") return { ok: false, why: recordRefusal(name, made) };
  const markerWritten = () => marker !== null && isRegularFile(marker.dir, marker.name);
  return { ok: true, files: { stderrFd: made, markerWritten } };
}

/**
 * Removes a name: unlink takes a file, a FIFO or a link away without opening or following it.
 * Null when the name is free now; the errno when something stays (a directory).
 */
function clearName(d: PinnedDir, name: string): string | null {
  try {
    unlinkSync(inPinned(d, name));
    return null;
  } catch (e) {
    return codeOf(e) === "ENOENT" ? null : codeOf(e); // safety: turn-marker-planted-crashes
  }
}

/**
 * A new regular file at `name`, made here: O_EXCL refuses any name already there (a FIFO, a
 * directory, a link, a file), and O_NOFOLLOW and O_NONBLOCK keep an open from following a link or
 * waiting on a FIFO. The descriptor, or the errno.
 */
function createRecord(d: PinnedDir, name: string): number | string {
  let fd: number;
  try {
    fd = openSync(inPinned(d, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o600); // safety: turn-record-planted
  } catch (e) {
    return codeOf(e);
  }
  // What O_EXCL made is a regular file; the check keeps a later change of the flags from writing into anything else.
  if (fstatSync(fd).isFile()) return fd;
  closeSync(fd);
  return "not a regular file";
}

/** Whether a regular file is at `name`: lstat, so a link or anything else is not one; nothing there, or an lstat that fails, is not. */
function isRegularFile(d: PinnedDir, name: string): boolean {
  try {
    return lstatSync(inPinned(d, name)).isFile();
  } catch {
    return false;
  }
}
