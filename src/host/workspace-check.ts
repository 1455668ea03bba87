// The end-of-session check's shell: walks the real workspace (never following a link), applies the
// remedies src/core/workspace decides, looks again, and returns the report. Called when a session
// ends (the launcher's exit handler) and by recover() for a session a dead host left behind.
//
// Another process of the session's uid may still be writing the workspace (the uid owns it), so
// nothing here goes through a name that could be swapped between a look and an act: directories
// are reached by descriptor (dir-fd.ts), a setid file's bits are cleared on the descriptor of the
// inode that was examined, and a move renames a name within a directory held open.
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { bytesOf } from "../core/workspace/bytes.ts";
import { inspectWorkspace, WALK_BOUNDS, type WalkBounds } from "../core/workspace/inspect.ts";
import {
  planRemedies,
  reportOf,
  shownRelative,
  type Done,
  type Failed,
  type Remedy,
  type WorkspaceCheck,
} from "../core/workspace/remedy.ts";
import type { TreeStat, WorkspaceView } from "../core/workspace/tree-view.ts";
import { DirChain, type EntryKind, O_PATH, at, hostPath, listEntries, splitPath, viaFd } from "./dir-fd.ts";
import { moveAcross } from "./move-across.ts";

/** A regular file read for its first bytes, never through a link and never blocking on a fifo. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CHUNK = 64 * 1024;

/** The real workspace as a view: every path a byte string under `root`. */
export interface RealView extends WorkspaceView {
  /** The workspace's path as bytes: the prefix of every path the view answers for. */
  root: string;
}

function kindOf(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }): TreeStat["kind"] {
  return st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
}

function lstatAt(path: string): TreeStat | null {
  try {
    const st = lstatSync(hostPath(path)); // safety: ws-view-no-follow
    return { kind: kindOf(st), mode: st.mode & 0o7777 };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    return { kind: "unreadable", mode: 0 }; // safety: ws-view-eacces
  }
}

/** Opens a regular file for reading, or null; the caller closes it. */
function openFile(path: string): number | null {
  let fd: number | null = null;
  try {
    fd = openSync(hostPath(path), READ_FLAGS); // safety: ws-view-nonblock
    if (fstatSync(fd).isFile()) return fd;
  } catch {}
  if (fd !== null) closeSync(fd);
  return null;
}

function headAt(path: string, bytes: number): string | null {
  const fd = openFile(path);
  if (fd === null) return null;
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0)).toString("latin1");
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Whether the file holds needle, read in chunks that overlap by the needle's length less one. */
function holdsAt(path: string, needle: string): boolean | null {
  const fd = openFile(path);
  if (fd === null) return null;
  try {
    const buf = Buffer.alloc(CHUNK);
    let carry = "";
    for (let pos = 0; ; ) {
      const n = readSync(fd, buf, 0, CHUNK, pos);
      if (n === 0) return false;
      const text = carry + buf.subarray(0, n).toString("latin1");
      if (text.includes(needle)) return true;
      carry = text.slice(Math.max(0, text.length - needle.length + 1));
      pos += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

type Listing = { dir: string; kinds: Map<string, EntryKind> };

/** What the last listing's d_type says an entry is, where that is all the walk needs (not a file's mode, not unknown). */
function listedKind(listed: Listing | null, path: string): TreeStat | null {
  if (listed === null) return null;
  const { dir, name } = splitPath(path);
  if (dir !== listed.dir) return null;
  const kind = listed.kinds.get(name);
  return kind === "dir" || kind === "link" || kind === "other" ? { kind, mode: 0 } : null;
}

/**
 * The workspace as the check sees it: lstat, listings and reads by path (names as bytes), never
 * following a link at the end of a path and never blocking on a fifo. A racer who swaps a directory
 * on the path for a link can make a read look elsewhere, but never an act: every remedy reaches its
 * target by descriptor (DirChain) and refuses a link there. An entry the listing says is a
 * directory, link or special file is taken as that (one lstat fewer each); a regular file, or one
 * the filesystem does not type, is lstat()ed for its mode.
 */
export function openWorkspaceView(workspace: string): RealView {
  let listed: Listing | null = null;
  return {
    root: bytesOf(workspace),
    lstat: (path) => listedKind(listed, path) ?? lstatAt(path),
    readdir(path, max) {
      listed = null;
      try {
        const entries = listEntries(hostPath(path), max);
        listed = { dir: path, kinds: new Map(entries.map((e) => [e.name, e.kind])) };
        return entries.map((e) => e.name);
      } catch (e) {
        // Gone since it was listed, or no longer a directory: nothing to list, as lstat says nothing is there.
        const code = (e as NodeJS.ErrnoException).code;
        return code === "ENOENT" || code === "ENOTDIR" ? [] : null;
      }
    },
    head: headAt,
    holds: holdsAt,
  };
}

/** An entry's directory held open, or why not: gone, or not reachable as a directory (a link or a file swapped in). */
function parentOf(chain: DirChain, path: string): { fd: number; name: string } | "gone" | "unreadable" {
  const { dir, name } = splitPath(path);
  try {
    return { fd: chain.fd(dir), name };
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : "unreadable";
  }
}

/** A free name in the directory held as dirFd: `name` itself, or with `~1`, `~2`... so an earlier move is never overwritten. */
function freeName(dirFd: number, name: string): string {
  const taken = (n: string) => lstatSync(at(dirFd, n), { throwIfNoEntry: false }) !== undefined;
  if (!taken(name)) return name;
  for (let i = 1; ; i++) if (!taken(`${name}~${i}`)) return `${name}~${i}`;
}

/** Moves a name of the workspace into the quarantine, both directories held open: the rename never follows a link. */
function move(ws: DirChain, files: DirChain, r: Extract<Remedy, { op: "move" }>): string {
  const from = parentOf(ws, r.from);
  if (typeof from === "string")
    throw new Error(from === "gone" ? "no longer there" : "its directory cannot be reached");
  const to = splitPath(r.to);
  const qfd = files.fd(to.dir);
  const free = freeName(qfd, to.name);
  try {
    renameSync(at(from.fd, from.name), at(qfd, free)); // safety: ws-move
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
    moveAcross(from.fd, from.name, qfd, free, WALK_BOUNDS);
  }
  return `${to.dir}/${free}`;
}

/**
 * Clears the setid bits of the inode at path on its own descriptor (O_PATH: opened without being
 * read, so a file its owner may not read is cleared too): a link swapped in is never followed.
 * The mode it gets, or why it got none.
 */
function clearSetid(ws: DirChain, path: string): number | string {
  const p = parentOf(ws, path);
  if (typeof p === "string") return "its directory cannot be reached";
  const fd = openSync(at(p.fd, p.name), O_PATH | constants.O_NOFOLLOW); // safety: ws-clear-setid-fd
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return "no longer a regular file";
    const mode = st.mode & 0o7777 & ~0o6000;
    chmodSync(viaFd(fd), mode); // safety: ws-clear-setid
    return mode;
  } finally {
    closeSync(fd);
  }
}

/** Where the remedies act: the workspace and the quarantine's files/, each reached by descriptor. */
interface Sides {
  ws: DirChain;
  files: DirChain;
  /** The workspace and the quarantine as bytes, for the report's relative paths. */
  root: string;
  q: string;
}

function apply(s: Sides, r: Remedy): Done | Failed {
  const path = shownRelative(s.root, r.op === "move" ? r.from : r.path);
  try {
    if (r.op === "none") return { kind: r.kind, path, error: r.detail };
    if (r.op === "move") {
      const to = move(s.ws, s.files, r);
      return { kind: r.kind, path, did: "moved", to: shownRelative(s.q, to), detail: r.detail };
    }
    const mode = clearSetid(s.ws, r.path);
    if (typeof mode === "string") return { kind: r.kind, path, error: mode };
    return { kind: r.kind, path, did: "cleared-setid", detail: `${r.detail} → ${mode.toString(8)}` };
  } catch (e) {
    return { kind: r.kind, path, error: (e as Error).message };
  }
}

/** The quarantine directory, 0700 and its parent too (the founder's to read, nobody else's), and its files/ to move into. */
function openQuarantine(quarantine: string): DirChain {
  mkdirSync(quarantine, { recursive: true, mode: 0o700 });
  chmodSync(dirname(quarantine), 0o700);
  chmodSync(quarantine, 0o700);
  mkdirSync(`${quarantine}/files`, { recursive: true, mode: 0o700 });
  return new DirChain(`${quarantine}/files`, `${bytesOf(quarantine)}/files`, (dirFd, name) =>
    mkdirSync(at(dirFd, name), { mode: 0o700 }),
  );
}

/**
 * Applies remedies to the workspace as it is now, which may no longer be as it was planned on (a
 * racer): each reaches its target by descriptor, and one whose path now runs through a link, or
 * whose setid file is now a link, fails rather than act beyond it.
 */
export function applyRemedies(
  workspace: string,
  quarantine: string,
  remedies: readonly Remedy[],
): { done: Done[]; failed: Failed[] } {
  const s: Sides = {
    ws: new DirChain(workspace, bytesOf(workspace)),
    files: openQuarantine(quarantine),
    root: bytesOf(workspace),
    q: bytesOf(quarantine),
  };
  const done: Done[] = [];
  const failed: Failed[] = [];
  try {
    for (const r of remedies) {
      const x = apply(s, r);
      if ("did" in x) done.push(x);
      else failed.push(x);
    }
  } finally {
    s.ws.close();
    s.files.close();
  }
  return { done, failed };
}

/**
 * Checks a workspace whose session has ended, quarantines what the host's git would run or write
 * through under `quarantine` (made 0700; the founder's to read, nobody else's), clears setuid and
 * setgid bits, and looks again. Never throws: a check that cannot run reports `unsafe`. Its work is
 * bounded (`bounds`, WALK_BOUNDS by default) and its report lists at most REPORT_LISTS of each.
 */
export function checkWorkspace(
  workspace: string,
  quarantine: string,
  bounds: Readonly<WalkBounds> = WALK_BOUNDS,
): WorkspaceCheck {
  try {
    const view = openWorkspaceView(workspace);
    const q = bytesOf(quarantine);
    const remedies = planRemedies(view.root, q, inspectWorkspace(view.root, view, bounds));
    if (remedies.length === 0) return { verdict: "clean", workspace };
    const { done, failed } = applyRemedies(workspace, quarantine, remedies);
    const report = { ...reportOf(view.root, q, done, failed, inspectWorkspace(view.root, view, bounds)), workspace };
    if (report.verdict === "clean") return report;
    const shown = { ...report, quarantine };
    writeFileSync(`${quarantine}/report.json`, JSON.stringify(shown, null, 2) + "\n", { mode: 0o600 });
    return shown;
  } catch (e) {
    return {
      verdict: "unsafe",
      workspace,
      quarantine,
      done: [],
      failed: [{ kind: "check", path: ".", error: (e as Error).message }],
    };
  }
}
