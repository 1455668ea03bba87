// The review's three faces: text for a terminal, Markdown for a CI job summary and a pull-request
// comment, JSON for scripts. Weakens first, then unknown, strengthens, neutral.
import { VERDICT_ORDER, type Finding, type ReviewVerdict } from "./model.ts";
import type { Report } from "./classify.ts";
import { hashFinding, needsApproval, type CheckedFinding } from "./approvals.ts";
import type { ProofReport } from "./proof.ts";

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

/** The proof review's counts, as one line. */
export function summariseProof(p: ProofReport): string {
  const c = p.counts;
  const n = p.files.length;
  return `proof review: ${c.weakens} weakens · ${c.unknown} unknown · ${c.strengthens} strengthens · ${c.neutral} neutral · ${n} file${n === 1 ? "" : "s"} read`;
}

const byVerdict = (fs: readonly Finding[]) =>
  VERDICT_ORDER.map((v) => [v, fs.filter((f) => f.verdict === v)] as [ReviewVerdict, Finding[]]).filter(
    ([, x]) => x.length > 0,
  );

/** The proof review: catalog, tags, equivalence arguments, tests and verdict inputs that changed. */
export function renderProofText(p: ProofReport): string {
  const out = ["", summariseProof(p)];
  for (const [v, fs] of byVerdict(p.findings)) {
    out.push("", `## proof: ${v}`);
    for (const f of fs) out.push(...renderFindingLine(f));
  }
  return out.join("\n") + "\n";
}

export function renderProofMarkdown(p: ProofReport): string {
  const out = ["", `### ${summariseProof(p)}`];
  if (p.findings.length === 0)
    out.push("", "Nothing in the catalog, the tags, the arguments, the tests or the verdict inputs changed.");
  for (const [v, fs] of byVerdict(p.findings)) {
    const table = [
      "| file | case | before | after | rule | why |",
      "|---|---|---|---|---|---|",
      ...fs.map(
        (f) =>
          `| ${code(f.file)} | ${code(f.case)} | ${code(f.before)} | ${code(f.after)} | ${code(ruleOf(f))} | ${f.why.replace(/\|/g, "\\|")} |`,
      ),
    ];
    const heading = `#### proof: ${VERDICT_HEADINGS[v]} (${fs.length})`;
    if (v === "neutral" || v === "strengthens")
      out.push("", `<details><summary>${heading.slice(5)}</summary>`, "", ...table, "", "</details>");
    else out.push("", heading, "", ...table);
  }
  return out.join("\n") + "\n";
}

const NO_PROOF: ProofReport = {
  findings: [],
  files: [],
  counts: { weakens: 0, unknown: 0, strengthens: 0, neutral: 0 },
};

export function renderJson(
  r: Report,
  base?: string,
  proof: ProofReport = NO_PROOF,
  checked: readonly CheckedFinding[] | null = null,
): string {
  const approvals = (checked ?? []).map((c) => ({
    id: c.id,
    file: c.finding.file,
    case: c.finding.case,
    state: c.state,
    owners: c.owners,
    approvals: c.approvals,
    refused: c.refused,
  }));
  const ids = [...r.findings, ...proof.findings]
    .filter(needsApproval)
    .map((f) => ({ id: hashFinding(f), file: f.file, case: f.case }));
  return (
    JSON.stringify(
      {
        base: base ?? null,
        goldens: r.goldens,
        counts: r.counts,
        writtenBy: r.writtenBy,
        findings: r.findings,
        proof,
        needsApproval: ids,
        approvals: checked === null ? null : approvals,
      },
      null,
      2,
    ) + "\n"
  );
}

const HOW_TO_APPROVE =
  "a code owner of the file, not the author, approves the pull request's head with one line per finding in the review's body: approve <id>: <why>";

const approvalLine = (c: CheckedFinding, md: boolean): string => {
  const at = `${c.finding.file} · ${c.finding.case} · ${ruleOf(c.finding)}`;
  const id = md ? `\`${c.id}\`` : c.id;
  const who =
    c.state === "approved"
      ? c.approvals.map((a) => `@${a.login}: ${JSON.stringify(a.why)}`).join("; ")
      : `owners ${c.owners.join(" ") || "(none: CODEOWNERS names no owner for it)"}${c.refused.length > 0 ? `; not counted: ${c.refused.join("; ")}` : ""}`;
  return `${md ? "- " : ""}${id} · ${md ? at.replace(/([|*_\`<>])/g, "\\$1") : at} · ${who}`;
};

/**
 * The findings that need an approval, each with its id: with recorded reviews, apart by state,
 * each approved one with who approved it and why; without, the ids to approve.
 */
export function renderApprovals(
  findings: readonly Finding[],
  checked: readonly CheckedFinding[] | null,
  format: "text" | "markdown",
): string {
  const md = format === "markdown";
  const h = (level: number, t: string) => (md ? `${"#".repeat(level)} ${t}` : level === 3 ? t : `## ${t}`);
  const need = findings.filter(needsApproval);
  if (need.length === 0) return "";
  if (checked === null) {
    const lines = need.map(
      (f) => `${md ? "- `" : ""}${hashFinding(f)}${md ? "`" : ""} · ${f.file} · ${f.case} · ${ruleOf(f)}`,
    );
    return ["", h(3, `approvals: ${need.length} needed; ${HOW_TO_APPROVE}`), "", ...lines].join("\n") + "\n";
  }
  const n = (s: CheckedFinding["state"]) => checked.filter((c) => c.state === s).length;
  const out = ["", h(3, `approvals: ${n("approved")} approved · ${n("unapproved")} unapproved; ${HOW_TO_APPROVE}`)];
  for (const state of ["unapproved", "approved"] as const) {
    const cs = checked.filter((c) => c.state === state);
    if (cs.length > 0) out.push("", h(4, `${state} (${cs.length})`), "", ...cs.map((c) => approvalLine(c, md)));
  }
  return out.join("\n") + "\n";
}
