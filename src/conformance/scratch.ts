import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./golden.ts";

/**
 * A fresh scratch root for one live test, under the repository's ignored .scratch/: never under
 * /tmp, which the session's private /tmp would hide.
 */
export function makeScratch(label: string): { root: string; remove: () => void } {
  const base = scratchBase();
  mkdirSync(base, { recursive: true });
  const root = mkdtempSync(join(base, `${label}-`));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** .scratch/live in the checkout, or /var/tmp when the checkout itself lies under /tmp. */
export function scratchBase(repoRoot = REPO_ROOT): string {
  return repoRoot === "/tmp" || repoRoot.startsWith("/tmp/") ? "/var/tmp/mosaic-harness-scratch" : join(repoRoot, ".scratch", "live");
}
