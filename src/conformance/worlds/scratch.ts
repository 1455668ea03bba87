import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../golden/golden.ts";

/**
 * The longest scratch base kept in the checkout. It leaves 75 of a socket path's 107 bytes for a
 * world's `<label>-XXXXXX/data/runs/<run>/sock/tools.sock`, with run names of up to 20 bytes.
 */
const MAX_SCRATCH_BASE = 32;

let failed = false;

/**
 * Inside a mutation run's test host (the runner sets this variable) a failed test is a mutant doing
 * its job: nobody reads its roots, and keeping them filled 78 GB of disk over a few catalog runs.
 */
const IN_MUTATION_HOST = process.env.MOSAIC_MUTATION_HOST === "1";

/** Set by the live tier's setup file when a test of this file failed: its scratch roots stay for CI to upload. */
export function markTestFailed(): void {
  if (!IN_MUTATION_HOST) failed = true;
}

/**
 * A fresh scratch root for one live test, under the repository's ignored .scratch/: never under
 * /tmp, which the session's private /tmp would hide. remove() keeps it when a test of this file
 * failed, so its logs can be read (CI uploads them).
 */
export function makeScratch(label: string, base = scratchBase()): { root: string; remove: () => void } {
  mkdirSync(base, { recursive: true, mode: 0o755 });
  const root = mkdtempSync(join(base, `${label}-`));
  // A root caller's sessions run as their own uid, which must reach what the world binds.
  chmodSync(root, 0o755);
  return {
    root,
    remove: () => {
      if (failed) process.stderr.write(`a test failed: its scratch root is kept for inspection: ${root}\n`);
      else rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The scratch base outside the checkout: one per uid, since a base another uid made (root's, before
 * a user's run on the same machine) is not this one's to write.
 */
export const SHARED_SCRATCH_BASE = `/var/tmp/mosaic-harness-scratch${process.getuid?.() === 0 ? "" : `-${process.getuid?.()}`}`;

/**
 * .scratch/live in the checkout; /var/tmp when the checkout lies under /tmp (the private /tmp would
 * hide it) or deep enough that a test's Unix socket path would pass the kernel's 107-byte limit.
 */
export function scratchBase(repoRoot = REPO_ROOT): string {
  const inRepo = join(repoRoot, ".scratch", "live");
  const underTmp = repoRoot === "/tmp" || repoRoot.startsWith("/tmp/");
  return underTmp || inRepo.length > MAX_SCRATCH_BASE ? SHARED_SCRATCH_BASE : inRepo;
}
