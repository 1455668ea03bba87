import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { GOLDEN_LOG_ENV, REPO_ROOT } from "../../src/conformance/golden/golden.ts";

/** vitest globalSetup: a fresh log of the goldens this run writes, for scripts/goldens-check.ts. */
export default function setup(): void {
  const dir = join(REPO_ROOT, ".scratch");
  mkdirSync(dir, { recursive: true });
  const log = join(dir, "golden-log.txt");
  rmSync(log, { force: true });
  process.env[GOLDEN_LOG_ENV] = log;
}
