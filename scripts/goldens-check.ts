// After a full contract run: every golden on disk was written by a test, and its header names that
// test's file. Under CI an orphan fails; locally it is reported with the command that removes it.
// The verdict is checkGoldens'.
import { join } from "node:path";
import { isCi } from "../src/conformance/tiers/ci.ts";
import { GOLDEN_ROOT, REPO_ROOT, checkGoldens } from "../src/conformance/golden/golden.ts";

const outcome = checkGoldens(join(REPO_ROOT, ".scratch", "golden-log.txt"), GOLDEN_ROOT, isCi());
for (const line of outcome.out) console.log(line);
for (const line of outcome.err) console.error(line);
process.exit(outcome.code);
