// The lines of a golden that differ and that no change of a fact explains. The rules rank changes
// of facts; a difference no parser row reads (a space inside a path, a blank line, a line a parser
// drops) must still be shown, and shown beside any change a rule ranks, never hidden behind it.
// Each edit is taken back alone from the after text: an edit whose undoing changes no fact is one
// no rule can have ranked, so its lines are unknown.
import { NONE_TEXT, alignSequences, diffFacts, type Fact, type Finding } from "./model.ts";
import type { Line } from "./parse-lines.ts";

/** Every line of a text, header too, numbered from 1, without the empty one after the last newline. */
function numbered(text: string): Line[] {
  const all = text.split("\n").map((t, i) => ({ text: t, line: i + 1 }));
  if (all.at(-1)?.text === "") all.pop();
  return all;
}

/** A run of removed and added lines between two kept ones; `at` is where its lines sit in the after text (0-based). */
type Hunk = { removed: Line[]; added: Line[]; at: number };
/** One edit: lines of the before text that lines of the after text replace. */
type Edit = { removed: Line[]; added: Line[]; at: number };

function hunksOf(a: readonly Line[], b: readonly Line[]): Hunk[] {
  const pairs = alignSequences(
    a.map((l) => l.text),
    b.map((l) => l.text),
  );
  const out: Hunk[] = [];
  let i = 0;
  let j = 0;
  for (const [pi, pj] of [...pairs, [a.length, b.length] as [number, number]]) {
    if (pi > i || pj > j) out.push({ removed: a.slice(i, pi), added: b.slice(j, pj), at: (b[j]?.line ?? 0) - 1 });
    i = pi + 1;
    j = pj + 1;
  }
  return out;
}

/** A line's text as a reader compares it: spacing and a trailing comma aside. */
const loosely = (t: string) => t.replace(/\s+/g, " ").trim().replace(/,$/, "");

/**
 * A hunk's edits: lines alike but for spacing pair up, each pair an edit; a hunk of as many
 * removed as added lines pairs the rest in order; otherwise the rest is one edit.
 */
function editsOf(h: Hunk): Edit[] {
  const alike = alignSequences(
    h.removed.map((l) => loosely(l.text)),
    h.added.map((l) => loosely(l.text)),
  );
  const pairedR = new Set(alike.map((p) => p[0]));
  const pairedA = new Set(alike.map((p) => p[1]));
  const edits: Edit[] = alike.map(([r, a]) => ({
    removed: [h.removed[r]!],
    added: [h.added[a]!],
    at: h.added[a]!.line - 1,
  }));
  const restR = h.removed.filter((_, i) => !pairedR.has(i));
  const restA = h.added.filter((_, i) => !pairedA.has(i));
  if (restR.length === restA.length)
    restR.forEach((r, i) => edits.push({ removed: [r], added: [restA[i]!], at: restA[i]!.line - 1 }));
  else if (restR.length + restA.length > 0)
    edits.push({ removed: restR, added: restA, at: restA[0] ? restA[0].line - 1 : h.at });
  return edits;
}

/** The after text with one edit taken back. Lines of one edit are contiguous, or a whole hunk. */
function undo(after: readonly string[], e: Edit): string {
  const kept = after.filter((_, i) => !e.added.some((l) => l.line - 1 === i));
  const at = e.at - after.slice(0, e.at).filter((_, i) => e.added.some((l) => l.line - 1 === i)).length;
  kept.splice(at, 0, ...e.removed.map((l) => l.text));
  return kept.join("\n");
}

/**
 * Lines removed in one place and added, the same text, in another: a move. A move changes order
 * only, which the facts' diff sees (`moved`), and no text; so its lines need no reading of their own.
 */
function movedLines(hunks: readonly Hunk[]): Set<Line> {
  const added = new Map<string, Line[]>();
  for (const h of hunks) for (const l of h.added) added.set(l.text, [...(added.get(l.text) ?? []), l]);
  const out = new Set<Line>();
  for (const h of hunks)
    for (const l of h.removed) {
      const twin = added.get(l.text)?.shift();
      if (twin) out.add(l).add(twin);
    }
  return out;
}

/** A line as a reviewer can see it: quoted when it is empty or starts or ends with a space. */
const visible = (t: string) => (t === "" || t.trim() !== t ? JSON.stringify(t) : t);

/**
 * One unknown finding per line of each edit whose undoing, alone, changes no fact of the after
 * text. `changed`: whether the facts of the two whole texts differ.
 */
export function unexplainedLines(
  path: string,
  before: string,
  after: string,
  parse: (text: string) => Fact[],
  changed: boolean,
): Finding[] {
  const hunks = hunksOf(numbered(before), numbered(after));
  const moved = movedLines(hunks);
  const lines = after.split("\n");
  const facts = parse(after);
  const unknown = (l: Line, side: "before" | "after"): Finding => ({
    verdict: "unknown",
    file: path,
    case: `line ${l.line}`,
    before: side === "before" ? visible(l.text) : NONE_TEXT,
    after: side === "after" ? visible(l.text) : NONE_TEXT,
    rule: null,
    why: "this line differs, and no row the parser reads shows the change: read it whole",
  });
  const edits = hunks.flatMap(editsOf).filter((e) => ![...e.removed, ...e.added].every((l) => moved.has(l)));
  // One edit alone: undoing it gives the before text, whose changes the caller already has.
  if (edits.length === 1 && changed) return []; // safety: review-residual-one-edit
  const out: Finding[] = [];
  for (const e of edits) {
    if (diffFacts(parse(undo(lines, e)), facts).length > 0) continue; // safety: review-residual-lines
    out.push(...e.removed.map((l) => unknown(l, "before")), ...e.added.map((l) => unknown(l, "after")));
  }
  return out;
}
