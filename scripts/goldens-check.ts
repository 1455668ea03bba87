// After a full contract run: every golden on disk was written by a test, and its header names that
// test's file. Under CI an orphan fails; locally it is reported with the command that removes it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isCi } from "../src/conformance/tiers/ci.ts";
import { REPO_ROOT, findOrphans, findUnnamedWriters, listGoldens } from "../src/conformance/golden/golden.ts";

const log = join(REPO_ROOT, ".scratch", "golden-log.txt");
if (!existsSync(log)) {
  console.error(`goldens-check: ${log} is missing; run the whole contract tier first (npm run test:contract)`);
  process.exit(1);
}
const written = new Set(readFileSync(log, "utf8").split("\n").filter(Boolean));
const onDisk = listGoldens();
const unnamed = findUnnamedWriters(new Map(onDisk.map((g) => [g, readFileSync(join(REPO_ROOT, g), "utf8")])), (f) =>
  existsSync(join(REPO_ROOT, f)),
);
if (unnamed.length > 0) {
  console.error(`goldens-check: ${unnamed.length} golden(s) whose writer cannot be opened:`);
  for (const u of unnamed) console.error(`  ${u}`);
  console.error("Regenerate them: npm run goldens:update");
  process.exit(1);
}
const orphans = findOrphans(onDisk, written);
if (orphans.length === 0) {
  console.log(`goldens-check: ${written.size} goldens written, no orphan`);
  process.exit(0);
}
console.error(`goldens-check: ${orphans.length} golden file(s) that no test wrote:`);
for (const o of orphans) console.error(`  ${o}`);
console.error(`Remove them after review: git rm ${orphans.join(" ")}`);
process.exit(isCi() ? 1 : 0);
