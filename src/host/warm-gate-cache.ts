import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { MosaicError } from "../core/errors.ts";

/**
 * Fills the gate's compile cache (gateCompileCacheDir) by running the gate once, as the hook will,
 * on an empty call: it loads every module, blocks for want of a policy, and leaves Node's cache
 * behind. The host does this after writeBundle(); inside the sandbox the cache is read-only.
 */
export function warmGateCache(node: string, repo: string, cacheDir: string): number {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const r = spawnSync(node, [join(repo, "src/host/claude-gate.ts"), join(cacheDir, "no-policy.json")], {
    input: "{}",
    encoding: "utf8",
    env: { NODE_COMPILE_CACHE: cacheDir, PATH: "/usr/bin:/bin" },
    timeout: 15_000,
  });
  if (r.status !== 2)
    throw new MosaicError(
      "gate-cache",
      cacheDir,
      `warming the gate's compile cache: the gate exited ${r.status ?? r.signal}, not 2: ${r.stderr}`,
    );
  const entries = readdirSync(cacheDir, { recursive: true }).length;
  if (entries === 0) throw new MosaicError("gate-cache", cacheDir, "warming the gate's compile cache left it empty");
  return entries;
}
