// After `stryker run` (npm run mutants:sweep): every survivor of the generated sweep is triaged,
// or this exits 1 naming each one in the form a row of mutants/equivalent.md takes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { catalogTaggedLines } from "../src/mutation/sweep-tags.ts";
import {
  readEquivalents,
  readSweepSurvivors,
  renderScores,
  matchRows,
  sweepScores,
  triageVerdict,
} from "../src/mutation/sweep-triage.ts";

const root = join(import.meta.dirname, "..");
const reportFile = process.argv[2] ?? join(root, "reports/mutation/sweep/mutation.json");
const survivors = readSweepSurvivors(readFileSync(reportFile, "utf8"));
const rows = readEquivalents(readFileSync(join(root, "mutants/equivalent.md"), "utf8"));
for (const r of [survivors, rows])
  if ("problem" in r) {
    console.error(`sweep-triage: ${r.problem}`);
    process.exit(2);
  }
const text = readFileSync(reportFile, "utf8");
const tagged = catalogTaggedLines(root, text);
const scores = sweepScores(text, rows as never, tagged);
if ("problem" in scores) {
  console.error(`sweep-triage: ${scores.problem}`);
  process.exit(2);
}
console.log(renderScores(scores));
const verdict = triageVerdict(
  (survivors as unknown[]).length,
  matchRows(survivors as never, rows as never, tagged),
  process.env.CI === "true",
);
for (const line of verdict.out) console.log(line);
for (const line of verdict.err) console.error(line);
process.exit(verdict.exit);
