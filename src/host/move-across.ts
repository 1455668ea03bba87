// A move into the quarantine when it lies on another filesystem than the workspace (rename says
// EXDEV): copy, then remove the original, both by descriptor, so neither the copy nor the removal
// goes through a link a racer swaps in (a path-based recursive remove would delete what lies
// beyond one). Bounded like the walk: a tree past its depth or entries is not copied, and then
// nothing is removed.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readlinkSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import type { WalkBounds } from "../core/workspace/inspect.ts";
import { at, listNames, openDirAt } from "./dir-fd.ts";

const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

interface Budget {
  entries: number;
  depth: number;
}

function copyFile(from: number, name: string, to: number, toName: string): void {
  const src = openSync(at(from, name), READ);
  let dst: number | null = null;
  try {
    const st = fstatSync(src);
    if (!st.isFile()) throw new Error(`${name}: no longer a regular file`);
    dst = openSync(at(to, toName), CREATE, 0o600);
    const buf = Buffer.alloc(64 * 1024);
    for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) writeSync(dst, buf, 0, n);
    // No setid bit survives into the quarantine.
    fchmodSync(dst, st.mode & 0o777);
  } finally {
    closeSync(src);
    if (dst !== null) closeSync(dst);
  }
}

function copyDir(from: number, name: string, to: number, toName: string, budget: Budget, depth: number): void {
  if (depth > budget.depth) throw new Error("too deep to copy across filesystems");
  mkdirSync(at(to, toName), { mode: 0o700 });
  const src = openDirAt(from, name);
  const dst = openDirAt(to, toName);
  try {
    for (const n of listNames(src)) copyEntry(src, n, dst, n, budget, depth + 1);
  } finally {
    closeSync(src);
    closeSync(dst);
  }
}

/** Copies one entry: a link as a link, a directory by descriptor, a file's bytes; a fifo, socket or device has none to copy. */
function copyEntry(from: number, name: string, to: number, toName: string, budget: Budget, depth: number): void {
  if (--budget.entries < 0) throw new Error("too many entries to copy across filesystems");
  const st = lstatSync(at(from, name));
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(at(from, name), { encoding: "buffer" }), at(to, toName));
  else if (st.isDirectory()) copyDir(from, name, to, toName, budget, depth);
  else if (st.isFile()) copyFile(from, name, to, toName);
}

/** Removes an entry and, for a directory, everything in it, each by its name in a directory held open. */
function removeEntry(dirFd: number, name: string, depth: number, bound: number): void {
  if (depth > bound) throw new Error("too deep to remove after its copy");
  const st = lstatSync(at(dirFd, name));
  if (!st.isDirectory()) {
    unlinkSync(at(dirFd, name));
    return;
  }
  const fd = openDirAt(dirFd, name);
  try {
    for (const n of listNames(fd)) removeEntry(fd, n, depth + 1, bound);
  } finally {
    closeSync(fd);
  }
  rmdirSync(at(dirFd, name));
}

/** Moves `name` from the directory held as `from` to `toName` in `to`, across filesystems. */
export function moveAcross(from: number, name: string, to: number, toName: string, bounds: Readonly<WalkBounds>): void {
  copyEntry(from, name, to, toName, { entries: bounds.entries, depth: bounds.depth }, 0);
  removeEntry(from, name, 0, bounds.depth);
}
