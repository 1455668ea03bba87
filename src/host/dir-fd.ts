// Reaching into a tree another uid can write, without ever going through a name it could swap:
// every directory is opened one level at a time with O_NOFOLLOW from its parent's descriptor, and
// every entry is named as /proc/self/fd/<parent>/<name>, which the kernel resolves through the
// pinned parent (openat() by another name: node has no *at calls). Paths are byte strings
// (src/core/workspace/bytes.ts) and each becomes exactly its bytes at the system call.
import { closeSync, constants, type Dirent, opendirSync, openSync, readdirSync, statSync } from "node:fs";

/** open(2)'s O_PATH on x86_64 and aarch64 (asm-generic): a descriptor to the inode itself, opened without reading it. */
export const O_PATH = 0o10000000;

/** A directory, never through a link, never blocking (a fifo swapped in fails O_DIRECTORY at once). */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The bytes of a byte string. */
export const raw = (bytes: string): Buffer => Buffer.from(bytes, "latin1");

/** The descriptor's own inode, as a path the kernel resolves through the descriptor: chmod and chown act on exactly it. */
export const viaFd = (fd: number): string => `/proc/self/fd/${fd}`;

const ASCII = /^[\x00-\x7f]*$/;

/** A byte string as a path for a system call: as text when it is ASCII (the same bytes, and cheaper), else its bytes. */
export function hostPath(bytes: string): string | Buffer {
  return ASCII.test(bytes) ? bytes : raw(bytes);
}

/** `name` (a byte string, one level) in the directory held open as dirFd. */
export function at(dirFd: number, name: string): string | Buffer {
  return hostPath(`/proc/self/fd/${dirFd}/${name}`);
}

/** Opens the directory `name` in dirFd; a link, or anything but a directory, is refused (ELOOP, ENOTDIR). */
export function openDirAt(dirFd: number, name: string): number {
  return openSync(at(dirFd, name), DIR_FLAGS); // safety: fd-dir-no-follow
}

/** Opens a directory by its host path; its last name is not followed either. */
export function openDirPath(path: string): number {
  return openSync(path, DIR_FLAGS);
}

/** What a directory entry says it is (its d_type): "unknown" where the filesystem does not say, so only lstat can. */
export type EntryKind = "file" | "dir" | "link" | "other" | "unknown";

function kindOf(e: Dirent): EntryKind {
  if (e.isFile()) return "file";
  if (e.isDirectory()) return "dir";
  if (e.isSymbolicLink()) return "link";
  return e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice() ? "other" : "unknown";
}

/**
 * A directory larger than this (its st_size: about 100,000 entries on ext4, 200,000 on tmpfs) is
 * read a few entries at a time, so a directory of millions never sits in memory whole; smaller ones
 * are read at once, which costs a tenth as much an entry.
 */
const READ_AT_ONCE_BYTES = 4 * 1024 * 1024;

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
// safety: names-as-bytes
const entryOf = (e: Dirent) => ({ name: (e.name as unknown as Buffer).toString("latin1"), kind: kindOf(e) });

/** The entries of the directory at path (a host path, or `viaFd` of one held open): names (byte strings) sorted by byte, each with its d_type; at most `max`. */
export function listEntries(
  path: string | Buffer,
  max = Number.POSITIVE_INFINITY,
): Array<{ name: string; kind: EntryKind }> {
  // Node reads names as Buffers here (its types list only text encodings for these calls).
  const buffer = "buffer" as BufferEncoding;
  if (statSync(path).size <= READ_AT_ONCE_BYTES)
    return readdirSync(path, { encoding: buffer, withFileTypes: true }).slice(0, max).map(entryOf).sort(byName);
  const dir = opendirSync(path, { encoding: buffer, bufferSize: 1024 });
  const out: Array<{ name: string; kind: EntryKind }> = [];
  try {
    for (let e = dir.readSync(); e !== null && out.length < max; e = dir.readSync()) out.push(entryOf(e));
  } finally {
    dir.closeSync();
  }
  return out.sort(byName);
}

/** The names in the directory held open as fd (byte strings), sorted by byte; at most `max` of them. */
export function listNames(fd: number, max = Number.POSITIVE_INFINITY): string[] {
  return listEntries(viaFd(fd), max).map((e) => e.name);
}

/** `path` split at its last slash: its directory and its own name (byte strings). */
export function splitPath(path: string): { dir: string; name: string } {
  const i = path.lastIndexOf("/");
  return { dir: path.slice(0, i), name: path.slice(i + 1) };
}

/**
 * The descriptors of the directories on one path below a root, reused from one call to the next:
 * a walk in depth-first order opens each directory once. Holds one descriptor a level (the check
 * bounds its depth); `make` creates a missing directory (0700) instead of failing.
 */
export class DirChain {
  private rootFd: number | null = null;
  private readonly open: Array<{ name: string; fd: number }> = [];
  /** The last directory asked for and its descriptor: a walk asks for one directory many times in a row. */
  private last: { dir: string; fd: number } | null = null;
  /** The root's host path, as the host was given it. */
  private readonly rootPath: string;
  /** The same root as a byte string: the prefix of every path asked for. */
  readonly root: string;
  private readonly make: ((dirFd: number, name: string) => void) | null;

  constructor(rootPath: string, root: string, make: ((dirFd: number, name: string) => void) | null = null) {
    this.rootPath = rootPath;
    this.root = root;
    this.make = make;
  }

  /** The root's descriptor, opened on first use. */
  top(): number {
    if (this.rootFd === null) this.rootFd = openDirPath(this.rootPath);
    return this.rootFd;
  }

  /** The descriptor of the directory at `dir` (the root or below it); throws the errno of the level that failed. */
  fd(dir: string): number {
    if (this.last !== null && this.last.dir === dir) return this.last.fd;
    this.last = null;
    const fd = this.resolve(dir);
    this.last = { dir, fd };
    return fd;
  }

  private resolve(dir: string): number {
    if (dir !== this.root && !dir.startsWith(this.root + "/")) throw new Error(`${dir} is not below ${this.root}`);
    const names = dir === this.root ? [] : dir.slice(this.root.length + 1).split("/");
    let k = 0;
    while (k < this.open.length && k < names.length && this.open[k]!.name === names[k]) k++;
    while (this.open.length > k) closeSync(this.open.pop()!.fd);
    for (; k < names.length; k++) {
      const parent = k === 0 ? this.top() : this.open[k - 1]!.fd;
      this.open.push({ name: names[k]!, fd: this.openLevel(parent, names[k]!) });
    }
    return k === 0 ? this.top() : this.open[k - 1]!.fd;
  }

  private openLevel(parent: number, name: string): number {
    try {
      return openDirAt(parent, name);
    } catch (e) {
      if (this.make === null || (e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      this.make(parent, name);
      return openDirAt(parent, name);
    }
  }

  close(): void {
    this.last = null;
    while (this.open.length > 0) closeSync(this.open.pop()!.fd);
    if (this.rootFd !== null) closeSync(this.rootFd);
    this.rootFd = null;
  }
}
