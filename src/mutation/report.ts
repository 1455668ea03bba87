// What a mutation run hands a reader: the table, the standard mutation-testing report (Stryker's
// schema, so the usual HTML viewer shows it), and a unified diff per mutant. Pure: text in, text out.
import type { RecordedLoads } from "./cache-key.ts";
import type {
  MutantResult as SchemaMutant,
  MutantStatus,
  MutationTestResult,
} from "mutation-testing-report-schema/api";
import { positionAt, type Mutant, type Site } from "./catalog.ts";
import { explainFailure, labelVerdict, listKillingTests, type MutantVerdict } from "./verdict.ts";

export type MutantRecord = {
  mutant: Mutant;
  /** The tagged line, or the find's first line when there is no tag to point at. */
  line: number;
  site: Site;
  verdict: MutantVerdict;
  seconds: number;
  /** Tests that ran against the mutant, for the report's coveredBy. */
  testsRun: string[];
  /** Bless mode: the goldens the mutant's runs rewrote in the tree copy (restored after). */
  goldensBlessed?: string[];
  /** The verdict is a kill reused from the cache under this key (its first 12 hex): nothing ran. */
  cachedFrom?: string;
  /** What the mutant's runs loaded (recorded-loads.ts); absent when reads could not be observed. */
  loads?: RecordedLoads;
};

/** Schema status for each verdict, and why: the viewer only knows Stryker's statuses. */
const STATUS: Record<MutantVerdict["kind"], MutantStatus> = {
  killed: "Killed",
  // A kill is a kill for the viewer; statusReason says it was not the expected test.
  "killed-by-other": "Killed",
  survived: "Survived",
  // Bless mode: only a golden noticed. To the viewer it survived; statusReason names the goldens.
  "golden-only": "Survived",
  // The mutant broke the module before any test ran: Stryker's name for that is a compile error.
  "invalid-load": "CompileError",
  "invalid-crash": "RuntimeError",
  timeout: "Timeout",
  // A find that no longer matches once: nothing was run.
  stale: "Ignored",
};

function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** The table: mutant | file:line | what it undoes | killed by | verdict | seconds, as markdown rows. */
export function renderTable(records: readonly MutantRecord[]): string {
  const rows = [
    "| mutant | file:line | what it undoes | killed by | verdict | seconds |",
    "|---|---|---|---|---|---|",
    ...records.map(
      (r) =>
        `| ${cell(r.mutant.id)} | ${cell(`${r.mutant.file}:${r.line}`)} | ${cell(r.mutant.undoes)} | ${cell(listKillingTests(r.verdict).join("; ") || "-")} | ${cell(labelVerdict(r.verdict))}${r.cachedFrom ? ` (cached from ${r.cachedFrom})` : ""} | ${r.seconds.toFixed(2)} |`,
    ),
  ];
  return rows.join("\n");
}

/** Counts per verdict label, in a fixed order, for the summary line. */
export function summarise(records: readonly MutantRecord[]): string {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(labelVerdict(r.verdict), (counts.get(labelVerdict(r.verdict)) ?? 0) + 1);
  const parts = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([k, n]) => `${n} ${k}`);
  return `${records.length} mutants: ${parts.join(", ") || "none"}`;
}

/** The reasons the run fails, one per mutant that was not killed by an expected test. */
export function listFailures(records: readonly MutantRecord[]): string[] {
  return records.flatMap((r) => {
    const why = explainFailure(r.verdict);
    return why === null ? [] : [`${r.mutant.id} (${r.mutant.file}:${r.line}): ${why}`];
  });
}

/** The golden-only kills: killed, but only a reviewed file noticed, not an assertion about the protection. */
export function listGoldenOnlyKills(records: readonly MutantRecord[]): string[] {
  return records
    .filter((r) => r.verdict.kind === "killed" && r.verdict.evidence === "golden-only")
    .map((r) => r.mutant.id);
}

/** Bless mode: the mutants a golden alone would have guarded (the mode fails on each). */
export function listBlessedAway(records: readonly MutantRecord[]): string[] {
  return records.filter((r) => r.verdict.kind === "golden-only").map((r) => r.mutant.id);
}

/** Lines of a text, without the empty string after a final newline, and whether that newline is there. */
function splitLines(text: string): { lines: string[]; eol: boolean } {
  const eol = text.endsWith("\n");
  const lines = text.split("\n");
  if (eol) lines.pop();
  return { lines, eol };
}

/** A unified diff of one mutant, with three lines of context, that `git apply` accepts. */
export function renderDiff(file: string, original: string, mutated: string): string {
  const { lines: a, eol: eolA } = splitLines(original);
  const { lines: b, eol: eolB } = splitLines(mutated);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB] && (endA < a.length - 1 || eolA === eolB)) {
    endA--;
    endB--;
  }
  const from = Math.max(0, start - 3);
  const toA = Math.min(a.length - 1, endA + 3);
  const toB = Math.min(b.length - 1, endB + 3);
  const out = [`--- a/${file}`, `+++ b/${file}`, `@@ -${from + 1},${toA - from + 1} +${from + 1},${toB - from + 1} @@`];
  const noEol = "\\ No newline at end of file";
  const emit = (prefix: string, line: string, lastOfA: boolean, lastOfB: boolean) => {
    out.push(prefix + line);
    if ((lastOfA && !eolA) || (lastOfB && !eolB)) out.push(noEol);
  };
  for (let i = from; i < start; i++) emit(" ", a[i]!, false, false);
  for (let i = start; i <= endA; i++) emit("-", a[i]!, i === a.length - 1, false);
  for (let i = start; i <= endB; i++) emit("+", b[i]!, false, i === b.length - 1);
  for (let i = endA + 1; i <= toA; i++) emit(" ", a[i]!, i === a.length - 1, i - endA + endB === b.length - 1);
  return out.join("\n") + "\n";
}

export type ReportInput = {
  records: readonly MutantRecord[];
  /** Original text of every mutated file, by path. */
  sources: ReadonlyMap<string, string>;
  /** Every test the suite has, by test file: full names. */
  tests: ReadonlyMap<string, string[]>;
  projectRoot: string;
};

/** The mutation-testing-report-schema document (schema version 2). */
export function buildMutationReport(input: ReportInput): MutationTestResult {
  const files: MutationTestResult["files"] = {};
  for (const r of input.records) {
    const source = input.sources.get(r.mutant.file) ?? "";
    const entry = (files[r.mutant.file] ??= { language: "typescript", source, mutants: [] });
    const site = r.site;
    const location =
      site.kind === "found"
        ? { start: positionAt(source, site.offset), end: positionAt(source, site.offset + r.mutant.find.length) }
        : { start: { line: r.line, column: 1 }, end: { line: r.line, column: 2 } };
    const reason = explainFailure(r.verdict);
    const m: SchemaMutant = {
      id: r.mutant.id,
      mutatorName: "safety-line",
      description: r.mutant.undoes,
      replacement: r.mutant.replace,
      location,
      status: STATUS[r.verdict.kind],
      statusReason:
        reason ??
        (r.verdict.kind === "killed"
          ? `${labelVerdict(r.verdict)}${r.cachedFrom ? ` (cached from ${r.cachedFrom})` : ""}: ${r.verdict.message}`
          : undefined),
      killedBy: listKillingTests(r.verdict),
      coveredBy: r.testsRun,
      duration: Math.round(r.seconds * 1000),
      testsCompleted: r.testsRun.length,
    };
    entry.mutants.push(m);
  }
  const testFiles: NonNullable<MutationTestResult["testFiles"]> = {};
  for (const [file, names] of input.tests) {
    testFiles[file] = { tests: names.map((full) => ({ id: full, name: full.slice(file.length + 3) })) };
  }
  return {
    schemaVersion: "2",
    thresholds: { high: 100, low: 100 },
    projectRoot: input.projectRoot,
    files,
    testFiles,
    framework: { name: "mosaic-harness mutants" },
  };
}

/** One HTML file that shows the report from file:// with no server: the viewer's script and the JSON inline. */
export function buildHtml(report: MutationTestResult, viewerScript: string, title: string): string {
  // `<` escaped so no text inside the JSON can close the script element.
  const json = JSON.stringify(report).replace(/</g, "\\u003c");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<title>${title.replace(/[<&]/g, "")}</title>`,
    `<script>${viewerScript}</script>`,
    "</head>",
    "<body>",
    `<mutation-test-report-app title-postfix="${title.replace(/["<&]/g, "")}"></mutation-test-report-app>`,
    `<script>document.querySelector("mutation-test-report-app").report = ${json};</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
