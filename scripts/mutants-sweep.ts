// npm run mutants:sweep [-- stryker options, e.g. --mutate src/core/runner/tripwire.ts]:
// StrykerJS over the modules stryker.config.mjs names, then the triage of every survivor
// (scripts/sweep-triage.ts). Exit 0 only when both pass.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const stryker = spawnSync(join(root, "node_modules/.bin/stryker"), ["run", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
});
if (stryker.status !== 0) {
  console.error(`mutants:sweep: stryker run exited ${stryker.status ?? stryker.signal}`);
  process.exit(stryker.status ?? 1);
}
const triage = spawnSync(process.execPath, [join(root, "scripts/sweep-triage.ts")], { cwd: root, stdio: "inherit" });
process.exit(triage.status ?? 1);
