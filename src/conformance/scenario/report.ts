// The verdict as people and CI read it: a table of scenario x assertion, a summary line, JUnit XML.
// Pure over the results; with --repeat each scenario has several runs and the table counts them.
import type { ScenarioResult } from "./run.ts";

/** The runs of one scenario, in order. */
export type ScenarioRuns = { name: string; harness: string; runs: ScenarioResult[] };

const MAX_LABEL = 64;
const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** One row per assertion: its verdict (or, repeated, how many runs passed), and the last run's detail when it did not pass. */
export function renderTable(all: readonly ScenarioRuns[]): string {
  const rows: string[][] = [["scenario", "assertion", "verdict", "detail"]];
  for (const s of all) {
    const last = s.runs.at(-1)!;
    if (last.problem !== null) rows.push([s.name, "(run)", "problem", clip(last.problem, 100)]);
    for (const [i, a] of last.assertions.entries()) {
      const passes = s.runs.filter((r) => r.assertions[i]?.verdict === "pass").length;
      const verdict = s.runs.length === 1 ? a.verdict : `${passes}/${s.runs.length} pass`;
      const worst = s.runs.map((r) => r.assertions[i]!).find((x) => x.verdict !== "pass");
      rows.push([
        s.name,
        clip(a.label, MAX_LABEL),
        verdict,
        worst === undefined ? "" : clip(`${worst.verdict}: ${worst.detail}`, 100),
      ]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

/** The summary line: scenarios passed (a scenario passes when every run of it does), assertions by verdict, and each pass rate when repeated. */
export function renderSummary(all: readonly ScenarioRuns[]): string {
  const runs = all.flatMap((s) => s.runs);
  const count = (v: string) => runs.reduce((n, r) => n + r.assertions.filter((a) => a.verdict === v).length, 0);
  const passed = all.filter((s) => s.runs.every((r) => r.verdict === "pass")).length;
  const repeated = all.some((s) => s.runs.length > 1)
    ? `; pass rate ${all.map((s) => `${s.name} ${s.runs.filter((r) => r.verdict === "pass").length}/${s.runs.length}`).join(", ")}`
    : "";
  const seconds = runs.reduce((t, r) => t + r.seconds, 0);
  return `${passed}/${all.length} scenarios passed; ${count("pass") + count("fail") + count("unobserved")} assertion verdicts: ${count("pass")} pass, ${count("fail")} fail, ${count("unobserved")} unobserved${repeated} (${seconds.toFixed(1)} s)\n`;
}

const xml = (s: string) =>
  s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);

/** JUnit XML: one testsuite per scenario, one testcase per assertion and run; fail and unobserved are failures. */
export function renderJunit(all: readonly ScenarioRuns[]): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="mosaic-harness scenarios">'];
  for (const s of all) {
    const cases = s.runs.flatMap((r, k) =>
      r.assertions.map((a) => ({ a, r, name: s.runs.length > 1 ? `${a.label} (run ${k + 1})` : a.label })),
    );
    const failures = cases.filter((c) => c.a.verdict !== "pass").length;
    const time = s.runs.reduce((t, r) => t + r.seconds, 0);
    out.push(
      `  <testsuite name="${xml(s.name)}" tests="${cases.length}" failures="${failures}" time="${time.toFixed(3)}">`,
    );
    for (const c of cases) {
      const head = `    <testcase classname="${xml(s.name)}" name="${xml(c.name)}"`;
      out.push(
        c.a.verdict === "pass"
          ? `${head}/>`
          : `${head}>\n      <failure message="${xml(`${c.a.verdict}: ${c.a.detail}`)}"/>\n    </testcase>`,
      );
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}
