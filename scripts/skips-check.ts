// After a tier: node scripts/skips-check.ts reports/junit/<tier>.xml ... Under CI=true any skipped
// or todo test fails the run (CI never passes on a test that did not run), and so does a missing
// or empty report. Locally it lists them and exits 0. The verdict is skipsCheckOutcome's.
import { existsSync, readFileSync } from "node:fs";
import { isCi } from "../src/conformance/tiers/ci.ts";
import { skipsCheckOutcome } from "../src/mutation/junit.ts";

const outcome = skipsCheckOutcome(
  process.argv.slice(2),
  (r) => (existsSync(r) ? readFileSync(r, "utf8") : null),
  isCi(),
);
for (const line of outcome.out) console.log(line);
for (const line of outcome.err) console.error(line);
process.exit(outcome.code);
