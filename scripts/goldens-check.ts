// After a full contract run: every golden on disk was written by a test, and its header names that
// test's file. Under CI an orphan fails; locally it is reported with the command that removes it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isCi } from "../src/conformance/tiers/ci.ts";
import { REPO_ROOT, findUnnamedWriters, goldensCheckOutcome, listGoldens } from "../src/conformance/golden/golden.ts";

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
const outcome = goldensCheckOutcome(onDisk, written, unnamed, isCi());
for (const line of outcome.out) console.log(line);
for (const line of outcome.err) console.error(line);
process.exit(outcome.code);
