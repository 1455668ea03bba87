// The review's three faces: text for a terminal, Markdown for a CI job summary and a pull-request
// comment, JSON for scripts. Weakens first, then unknown, strengthens, neutral.
import { VERDICT_ORDER, type Finding, type ReviewVerdict } from "./model.ts";
import type { Report } from "./classify.ts";
import type { CheckedFinding } from "./approvals.ts";

/** Marks the pull-request comment the workflow updates in place. */
export const COMMENT_MARKER = "<!-- mosaic-harness golden review -->";

export function summarise(r: Report): string {
  const c = r.counts;
  const n = r.goldens.length;
  return `golden review: ${c.weakens} weakens · ${c.unknown} unknown · ${c.strengthens} strengthens · ${c.neutral} neutral · ${n} golden${n === 1 ? "" : "s"} changed`;
}

const isLong = (v: string) => v.includes("\n");
const lineCount = (v: string) => v.replace(/\n$/, "").split("\n").length;
const inline = (v: string) => (isLong(v) ? `(${lineCount(v)} line${lineCount(v) === 1 ? "" : "s"}, below)` : v);
const ruleOf = (f: Finding) => f.rule ?? "(no rule)";

function fullText(f: Finding): string[] {
  const out: string[] = [];
  for (const [mark, v] of [
    ["-", f.before],
    ["+", f.after],
  ] as const)
    if (isLong(v)) for (const l of v.replace(/\n$/, "").split("\n")) out.push(`    ${mark} ${l}`);
  return out;
}

/** `<golden file> · <case> · <before> → <after> · <rule id>: <why>`, and a long value's lines below it. */
export function renderFindingLine(f: Finding): string[] {
  return [`${f.file} · ${f.case} · ${inline(f.before)} → ${inline(f.after)} · ${ruleOf(f)}: ${f.why}`, ...fullText(f)];
}

const bySection = (r: Report) =>
  VERDICT_ORDER.map((v) => [v, r.findings.filter((f) => f.verdict === v)] as [ReviewVerdict, Finding[]]).filter(
    ([, fs]) => fs.length > 0,
  );

/** `<golden> ← <test file> > <test>`, for each changed golden whose header names its writer. */
const writerLines = (r: Report): string[] => Object.entries(r.writtenBy).map(([g, w]) => `${g} ← ${w}`);

export function renderText(r: Report, base?: string): string {
  const out = [summarise(r)];
  if (base) out.push(`base: ${base}`);
  for (const [v, fs] of bySection(r)) {
    out.push("", `## ${v}`);
    for (const f of fs) out.push(...renderFindingLine(f));
  }
  const writers = writerLines(r);
  if (writers.length > 0) out.push("", "## the test that wrote each changed golden", ...writers);
  return out.join("\n") + "\n";
}

/** A Markdown code span that survives a table cell: pipes escaped, backticks fenced. */
function code(v: string): string {
  const t = inline(v).replace(/\|/g, "\\|");
  return t.includes("`") ? `\`\` ${t} \`\`` : `\`${t}\``;
}

const VERDICT_HEADINGS: Record<ReviewVerdict, string> = {
  weakens: "weakens: each needs a reviewer's approval",
  unknown: "unknown: no rule classifies these; read each whole",
  strengthens: "strengthens",
  neutral: "neutral",
};

export function renderMarkdown(r: Report, base?: string): string {
  const out = [COMMENT_MARKER, `### ${summarise(r)}`];
  if (base) out.push("", `Base: ${base}. Rules: \`src/review/rules.ts\`, reading: \`docs/review.md\`.`);
  if (r.findings.length === 0) out.push("", r.goldens.length === 0 ? "No golden changed." : "Nothing to classify.");
  for (const [v, fs] of bySection(r)) {
    const table = [
      "| golden | case | before | after | rule | why |",
      "|---|---|---|---|---|---|",
      ...fs.map(
        (f) =>
          `| ${code(f.file)} | ${code(f.case)} | ${code(f.before)} | ${code(f.after)} | ${code(ruleOf(f))} | ${f.why.replace(/\|/g, "\\|")} |`,
      ),
    ];
    const long = fs.filter((f) => isLong(f.before) || isLong(f.after));
    const texts = long.flatMap((f) => [
      "",
      `<details><summary>${f.file} · ${f.case}</summary>`,
      "",
      "```diff",
      ...fullText(f).map((l) => l.slice(4)),
      "```",
      "",
      "</details>",
    ]);
    const heading = `#### ${VERDICT_HEADINGS[v]} (${fs.length})`;
    // Neutral rows are for the curious: folded, so the ones that need a reviewer stay in view.
    if (v === "neutral")
      out.push("", `<details><summary>${heading.slice(5)}</summary>`, "", ...table, ...texts, "", "</details>");
    else out.push("", heading, "", ...table, ...texts);
  }
  const writers = writerLines(r);
  if (writers.length > 0)
    out.push(
      "",
      `<details><summary>the test that wrote each changed golden (${writers.length})</summary>`,
      "",
      ...writers.map((w) => `- ${w.replace(/([|*_`<>])/g, "\\$1")}`),
      "",
      "</details>",
    );
  return out.join("\n") + "\n";
}

export function renderJson(r: Report, base?: string, checked: readonly CheckedFinding[] = []): string {
  const approvals = checked.map((c) => ({ file: c.finding.file, case: c.finding.case, state: c.state }));
  return (
    JSON.stringify(
      {
        base: base ?? null,
        goldens: r.goldens,
        counts: r.counts,
        writtenBy: r.writtenBy,
        findings: r.findings,
        approvals,
      },
      null,
      2,
    ) + "\n"
  );
}

const APPROVAL_HEADINGS = {
  unapproved: "unapproved: approve each with npm run goldens:review -- --approve <golden>#<case> --why ...",
  stale: "stale: approved once, changed since; approve the change as it is now",
  approved: "approved",
} as const;

/** The changes that need an approval, apart by state: unapproved and stale first. */
export function renderApprovals(checked: readonly CheckedFinding[], format: "text" | "markdown"): string {
  if (checked.length === 0) return "";
  const n = (s: CheckedFinding["state"]) => checked.filter((c) => c.state === s).length;
  const out = [
    "",
    `${format === "markdown" ? "### " : ""}approvals: ${n("approved")} approved · ${n("unapproved")} unapproved · ${n("stale")} stale`,
  ];
  for (const state of ["unapproved", "stale", "approved"] as const) {
    const fs = checked.filter((c) => c.state === state);
    if (fs.length === 0) continue;
    out.push("", `${format === "markdown" ? "#### " : "## "}${APPROVAL_HEADINGS[state]} (${fs.length})`, "");
    for (const c of fs)
      out.push(`${format === "markdown" ? "- " : ""}${c.finding.file} · ${c.finding.case} · ${ruleOf(c.finding)}`);
  }
  return out.join("\n") + "\n";
}
