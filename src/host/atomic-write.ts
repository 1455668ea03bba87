// Files under the launcher's state dir that many launches share: written whole to a file of their
// own, then renamed into place. A reader (bwrap opening the seccomp program, recover() reading a
// launch record) sees the old bytes or the new ones, never a file another launch is half-way
// through writing, because rename(2) swaps the name and never touches an open file.
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";

/** Writes data to path by a temporary file in the same folder and a rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, data, { mode, flag: "wx" });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** True when path holds exactly these bytes (a file written once, by content, is not rewritten). */
export function holdsBytes(path: string, data: Uint8Array): boolean {
  try {
    return Buffer.from(readFileSync(path)).equals(Buffer.from(data));
  } catch {
    return false;
  }
}
