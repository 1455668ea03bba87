import { closeSync, lstatSync, mkdirSync, openSync, rmSync, rmdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { MosaicError } from "../core/errors.ts";
import type { BundleFiles } from "../core/bundle/plan-bundle.ts";

/** Bundle directory: only the session's user may list it. */
export const BUNDLE_DIR_MODE = 0o700; // safety: bundle-dir-mode
/** Bundle files: only the session's user may read them. */
export const BUNDLE_FILE_MODE = 0o600; // safety: bundle-file-mode

function errnoOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null ? ((e as { code?: unknown }).code as string | undefined) : undefined;
}

/**
 * Creates dir 0700, or accepts an existing one only when it is a real directory of this user that
 * no one else can enter. Its owner could replace policy.json after the write. Returns whether it made it.
 */
function ensureDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: BUNDLE_DIR_MODE });
    return true;
  } catch (e) {
    if (errnoOf(e) !== "EEXIST") throw e;
  }
  const st = lstatSync(dir); // safety: bundle-dir-symlink-followed
  if (!st.isDirectory())
    throw new MosaicError("bundle-dir", dir, "exists and is not a directory (a symlink is refused too)");
  if ((st.mode & 0o077) !== 0)
    throw new MosaicError(
      "bundle-dir",
      dir,
      `has mode ${(st.mode & 0o777).toString(8)}; a bundle directory must be 700`,
    ); // safety: bundle-dir-open-accepted
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new MosaicError(
      "bundle-dir",
      dir,
      `is owned by uid ${st.uid}, not this user (uid ${uid}), who could replace its files after the write`,
    ); // safety: bundle-dir-foreign-owner
  return false;
}

/**
 * Writes a planned bundle once. Every file is created exclusively, so an existing bundle is never
 * overwritten: the call fails with bundle-exists and leaves everything as it was. A failure
 * halfway removes what this call wrote (and the directory, if it made it), then throws.
 */
export function writeBundle(dir: string, files: BundleFiles): void {
  for (const name of Object.keys(files)) {
    if (name === "" || name.includes("/") || name === "." || name === "..")
      throw new MosaicError("bad-bundle-file", name, "a bundle file name is one plain path segment");
  }
  const madeDir = ensureDir(dir);
  const written: string[] = [];
  try {
    for (const [name, body] of Object.entries(files)) {
      const path = join(dir, name);
      let fd: number;
      try {
        fd = openSync(path, "wx", BUNDLE_FILE_MODE); // safety: bundle-overwrite
      } catch (e) {
        if (errnoOf(e) === "EEXIST")
          throw new MosaicError(
            "bundle-exists",
            path,
            "a bundle file already exists; a run's bundle is written once and never replaced",
          );
        throw e;
      }
      written.push(path);
      try {
        writeSync(fd, body);
      } finally {
        closeSync(fd);
      }
    }
  } catch (e) {
    for (const path of written) rmSync(path, { force: true });
    if (madeDir) rmdirSync(dir);
    throw e;
  }
}
