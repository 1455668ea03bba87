// vitest.sweep.config.ts's global setup. StrykerJS runs the contract tier on a copy of the checkout
// in .stryker-tmp/sandbox-XXXXXX, which mkdtemp makes 0700. Run as root (as CI is), the launcher's
// sessions run as uid 65534, which must reach the runner's files in that copy, as .ci/run makes
// sure for the checkout itself: the copy's directory is opened for it.
import { chmodSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

export default function setup(): void {
  const root = resolve(import.meta.dirname, "../..");
  if (process.getuid?.() !== 0 || !basename(root).startsWith("sandbox-") || basename(dirname(root)) !== ".stryker-tmp")
    return;
  chmodSync(root, statSync(root).mode | 0o055);
}
