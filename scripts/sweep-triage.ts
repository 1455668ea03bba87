// After `stryker run` (npm run mutants:sweep): every survivor of the generated sweep is triaged,
// or this exits 1 naming each one in the form a row of mutants/equivalent.md takes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { catalogTaggedLines } from "../src/mutation/sweep-tags.ts";
import {
  describeSurvivor,
  readEquivalents,
  readSweepSurvivors,
  renderScores,
  sweepScores,
  untriaged,
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
const left = untriaged(survivors as never, rows as never, tagged);
if (left.length === 0) {
  console.log(
    `sweep-triage: ${(survivors as unknown[]).length} survivors, each argued equivalent in mutants/equivalent.md or on a catalog-tagged line`,
  );
  process.exit(0);
}
console.error(`sweep-triage: ${left.length} survivors without a test or an equivalent.md row:`);
for (const m of left) console.error(`  ${describeSurvivor(m)}`);
process.exit(1);
