// After a tier: node scripts/skips-check.ts reports/junit/<tier>.xml ... Under CI=true any skipped
// or todo test fails the run (CI never passes on a test that did not run), and so does a missing
// or empty report. Locally it lists them and exits 0.
import { existsSync, readFileSync } from "node:fs";
import { isCi } from "../src/conformance/tiers/ci.ts";
import { findSkipProblems } from "../src/mutation/junit.ts";

const reports = process.argv.slice(2);
if (reports.length === 0) {
  console.error("usage: node scripts/skips-check.ts <junit.xml>...");
  process.exit(2);
}
const problems = reports.flatMap((r) => findSkipProblems(r, existsSync(r) ? readFileSync(r, "utf8") : null));
if (problems.length === 0) {
  console.log(`skips-check: ${reports.join(", ")}: every test ran`);
  process.exit(0);
}
const ci = isCi();
for (const p of problems) console.error(`skips-check: ${p}`);
console.error(
  ci ? "skips-check: FAILED: under CI=true every test must run" : "skips-check: (not CI: reported, not failed)",
);
process.exit(ci ? 1 : 0);
