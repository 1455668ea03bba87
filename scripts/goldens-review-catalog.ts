// `npm run goldens:review:catalog [-- --only id,... --keep]`: every mutant of the catalog, applied on
// a tree copy with its goldens updated, must show at least one weakens line in the golden review.
// Exit 0 when none is a finding; 1 on a finding or a broken run; 2 for a bad command line.
import { runCatalogReview } from "../src/review/catalog-run.ts";
import { renderFindingLine, renderText } from "../src/review/render.ts";
import { isFailure, labelOutcome, renderCatalogTable, summariseCatalog } from "../src/review/catalog-verdict.ts";

const USAGE = "usage: npm run goldens:review:catalog -- [--only id,...] [--workers n] [--keep] [--verbose]";
const argv = process.argv.slice(2);
let only: string[] | undefined;
let keep = false;
let verbose = false;
let workers: number | undefined;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--keep") keep = true;
  else if (argv[i] === "--verbose") verbose = true;
  else if (argv[i] === "--workers" && /^[1-9]\d*$/.test(argv[i + 1] ?? "")) workers = Number(argv[++i]);
  else if (argv[i] === "--only" && argv[i + 1] !== undefined)
    only = argv[++i]!.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  else {
    console.error(`goldens:review:catalog: unknown argument ${JSON.stringify(argv[i])}\n${USAGE}`);
    process.exit(2);
  }
}

const started = performance.now();
const { rows, fatal } = await runCatalogReview({
  root: process.cwd(),
  only,
  keep,
  workers,
  log: (l) => console.log(l),
});
// --verbose: each mutant's whole review, as a pull request making that change would get it.
if (verbose)
  for (const r of rows) if (r.report.findings.length > 0) console.log(`\n=== ${r.id}\n${renderText(r.report)}`);
if (rows.length > 0) console.log(`\n${renderCatalogTable(rows)}\n\n${summariseCatalog(rows)}`);
for (const r of rows.filter((r) => isFailure(r.outcome))) {
  console.log(`FINDING: ${r.id}: ${labelOutcome(r.outcome)}`);
  for (const f of r.report.findings) for (const l of renderFindingLine(f)) console.log(`  ${f.verdict}: ${l}`);
}
for (const f of fatal) console.log(`RUN FAILED: ${f}`);
console.log(`took ${((performance.now() - started) / 1000).toFixed(1)}s`);
process.exitCode = fatal.length > 0 || rows.some((r) => isFailure(r.outcome)) ? 1 : 0;
