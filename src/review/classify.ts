// From a golden's two revisions to findings: parse each side by its kind, diff the facts, and let
// the first matching rule classify each change. Whatever no rule (or no parser) reads is unknown
// and shown whole: an unread change is never counted as neutral.
import { readProvenance } from "../conformance/golden/golden.ts";
import { findKind } from "./kinds.ts";
import { NONE_TEXT, VERDICT_ORDER, alignSequences, diffFacts, type Change, type Fact, type Finding } from "./model.ts";
import { bodyLines, readHeader } from "./parse-lines.ts";
import { unexplainedLines } from "./residual-lines.ts";
import { findRule, type Context, type Rule } from "./rules.ts";

/** One golden at two revisions; null where it does not exist. */
export type GoldenPair = { path: string; before: string | null; after: string | null };

const NONE = NONE_TEXT;
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
const show = (v: string | undefined) => (v === undefined || v === "" ? NONE : v);

function caseOf(c: Change): string {
  const f = c.op === "removed" ? c.before : c.after;
  const label = f.key === f.type ? f.type : `${f.type} ${f.key}`;
  return c.op === "changed" ? `${label}: ${c.field}` : label;
}

/** Before and after as a reviewer reads them: the field's values, whole rows when no rule knows the change. */
function sidesOf(c: Change, whole: boolean): [string, string] {
  switch (c.op) {
    case "added":
      return [NONE, c.after.text];
    case "removed":
      return [c.before.text, NONE];
    case "moved":
      return [`line ${c.before.line}`, `line ${c.after.line}`];
    case "changed":
      return whole ? [c.before.text, c.after.text] : [show(c.before.fields[c.field]), show(c.after.fields[c.field])];
  }
}

function toFinding(path: string, c: Change, rule: Rule | null): Finding {
  const [before, after] = sidesOf(c, rule === null);
  return rule
    ? { verdict: rule.verdict, file: path, case: caseOf(c), before, after, rule: rule.id, why: rule.why }
    : {
        verdict: "unknown",
        file: path,
        case: caseOf(c),
        before,
        after,
        rule: null,
        why: "no rule classifies this change: read it whole",
      };
}

/** Every line that differs, each unknown: the golden's kind has no parser. */
function diffUnparsed(path: string, before: string, after: string): Finding[] {
  const a = bodyLines(before);
  const b = bodyLines(after);
  const pairs = alignSequences(
    a.map((l) => l.text),
    b.map((l) => l.text),
  );
  const keptA = new Set(pairs.map((p) => p[0]));
  const keptB = new Set(pairs.map((p) => p[1]));
  const why = "no parser is registered for this golden's kind: every change to it is unknown";
  const header =
    readHeader(before) !== readHeader(after)
      ? [
          {
            verdict: "unknown" as const,
            file: path,
            case: "header",
            before: show(readHeader(before)),
            after: show(readHeader(after)),
            rule: null,
            why,
          },
        ]
      : [];
  return [
    ...header,
    ...a
      .filter((_, i) => !keptA.has(i))
      .map(
        (l): Finding => ({
          verdict: "unknown",
          file: path,
          case: `line ${l.line}`,
          before: l.text,
          after: NONE,
          rule: null,
          why,
        }),
      ),
    ...b
      .filter((_, i) => !keptB.has(i))
      .map(
        (l): Finding => ({
          verdict: "unknown",
          file: path,
          case: `line ${l.line}`,
          before: NONE,
          after: l.text,
          rule: null,
          why,
        }),
      ),
  ];
}

/** The findings for one golden's change. */
export function reviewGolden(pair: GoldenPair, rules?: readonly Rule[]): Finding[] {
  const { path, before, after } = pair;
  if (before === after) return [];
  if (after === null) {
    const gone: Fact = {
      type: "golden",
      key: "golden",
      at: "",
      fields: {},
      text: plural(bodyLines(before!).length, "line"),
      line: 1,
    };
    const c: Change = { op: "removed", before: gone };
    return [toFinding(path, c, findRule(c, { before: [gone], after: [] }, rules))];
  }
  if (before === null) {
    return [
      {
        verdict: "unknown",
        file: path,
        case: "golden",
        before: NONE,
        after,
        rule: null,
        why: "a new golden has no before to compare with: read it whole",
      },
    ];
  }
  const kindBefore = findKind(path, readHeader(before));
  const kind = findKind(path, readHeader(after));
  let found: Finding[];
  if (kind === null || kindBefore?.id !== kind.id) found = diffUnparsed(path, before, after);
  else {
    const ctx: Context = { before: kind.parse(before), after: kind.parse(after) };
    const changes = diffFacts(ctx.before, ctx.after);
    found = [
      ...changes.map((c) => toFinding(path, c, findRule(c, ctx, rules))),
      ...unexplainedLines(path, before, after, kind.parse, changes.length > 0),
    ];
  }
  // The bytes differ but no row does (blank lines, trailing space): still a change nobody read.
  return found.length > 0
    ? found
    : [
        {
          verdict: "unknown",
          file: path,
          case: "text",
          before,
          after,
          rule: null,
          why: "the text differs but no row the parser reads does: read it whole",
        },
      ];
}

export type Report = {
  findings: Finding[];
  /** Goldens that differ between the two revisions. */
  goldens: string[];
  counts: Record<Finding["verdict"], number>;
  /** Each changed golden's writer as its header names it (`<test file> > <test>`), after the change or, if removed, before. */
  writtenBy: Record<string, string>;
};

const rank = (f: Finding) => VERDICT_ORDER.indexOf(f.verdict);

/** The review of a set of golden pairs: findings ordered weakens, unknown, strengthens, neutral. */
export function reviewGoldens(pairs: readonly GoldenPair[], rules?: readonly Rule[]): Report {
  const changed = pairs
    .filter((p) => p.before !== p.after)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const findings = changed
    .flatMap((p) => reviewGolden(p, rules).map((f, i) => ({ f, i })))
    .sort((x, y) => rank(x.f) - rank(y.f) || (x.f.file < y.f.file ? -1 : x.f.file > y.f.file ? 1 : x.i - y.i))
    .map((x) => x.f);
  const counts = { weakens: 0, unknown: 0, strengthens: 0, neutral: 0 };
  for (const f of findings) counts[f.verdict]++;
  const writtenBy: Record<string, string> = {};
  for (const p of changed) {
    const from = readProvenance(p.after ?? "") ?? readProvenance(p.before ?? "");
    if (from) writtenBy[p.path] = `${from.file} > ${from.test}`;
  }
  return { findings, goldens: changed.map((p) => p.path), counts, writtenBy };
}

/** 0 when nothing weakens and nothing is unknown; 1 otherwise, so CI can ask a reviewer to approve. */
export function exitCodeOf(report: Report): 0 | 1 {
  return report.counts.weakens > 0 || report.counts.unknown > 0 ? 1 : 0;
}
