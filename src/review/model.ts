// The review's data: a golden parsed into facts, the changes between two revisions of it, and the
// findings the rules make of those changes. Pure data and pure functions only.

/** One row a golden shows: a bind, a flag, a gate call, a JSON value. */
export type Fact = {
  /** What the row is (`bind`, `bwrap-option`, `gate-call`, `policy`, ...); rules select on it. */
  type: string;
  /** Identity across revisions, unique among the golden's facts of its type. */
  key: string;
  /** Where in the golden: a JSON path, a section, a list's option; rules may select on it. */
  at: string;
  /** The compared values: each field that differs is one change. */
  fields: Readonly<Record<string, string>>;
  /** The row as the golden shows it. */
  text: string;
  /**
   * The row as compared when no field differs, where it is not `text`: a listing's row without
   * what only its place decides (its index, its jump targets' numbers). Absent: `text`.
   */
  compare?: string;
  /** One-based line in the golden. */
  line: number;
};

export type Change =
  | { op: "added"; after: Fact }
  | { op: "removed"; before: Fact }
  | { op: "changed"; field: string; before: Fact; after: Fact }
  | { op: "moved"; before: Fact; after: Fact };

export type Risk = "weakens" | "strengthens" | "neutral";
export type ReviewVerdict = Risk | "unknown";

/** The report's order: what a reviewer must read first comes first. */
export const VERDICT_ORDER: readonly ReviewVerdict[] = ["weakens", "unknown", "strengthens", "neutral"];

export type Finding = {
  verdict: ReviewVerdict;
  /** The golden, from the repository root. */
  file: string;
  /** The row within it: its type and key, and the field for a changed value. */
  case: string;
  before: string;
  after: string;
  /** The rule that classified the change; null for unknown. */
  rule: string | null;
  why: string;
};

/** How a report shows a side that has nothing: a row added, a golden new. */
export const NONE_TEXT = "(none)";

/** The fact a change is about (the after side when there is one). */
export function factOf(c: Change): Fact {
  return c.op === "removed" ? c.before : c.after;
}

/** Fact types whose rows are a program or prose: aligned by their text, in order, never by key. */
export const SEQUENCE_TYPES: ReadonlySet<string> = new Set(["seccomp-insn", "prompt-line", "line"]);

/** Longest common subsequence of two key lists, as index pairs. */
export function alignSequences(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const dp: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      dp[i]![j] = a[i] === b[j] ? dp[i + 1]![j + 1]! + 1 : Math.max(dp[i + 1]![j]!, dp[i]![j + 1]!);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (dp[i + 1]![j]! >= dp[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

function diffSequence(before: readonly Fact[], after: readonly Fact[]): Change[] {
  const pairs = alignSequences(
    before.map((f) => f.key),
    after.map((f) => f.key),
  );
  const keptB = new Set(pairs.map((p) => p[0]));
  const keptA = new Set(pairs.map((p) => p[1]));
  return [
    ...before.filter((_, i) => !keptB.has(i)).map((f): Change => ({ op: "removed", before: f })),
    ...after.filter((_, i) => !keptA.has(i)).map((f): Change => ({ op: "added", after: f })),
  ];
}

/** A fact's identity among facts of several types. */
const idOf = (f: Fact) => `${f.type}\0${f.key}`;

function diffKeyed(before: readonly Fact[], after: readonly Fact[]): Change[] {
  const out: Change[] = [];
  const byKey = new Map(after.map((f) => [idOf(f), f]));
  const oldKeys = new Set(before.map(idOf));
  for (const b of before) {
    const a = byKey.get(idOf(b));
    if (!a) {
      out.push({ op: "removed", before: b });
      continue;
    }
    const fields = [...new Set([...Object.keys(b.fields), ...Object.keys(a.fields)])];
    const differing = fields.filter((k) => (b.fields[k] ?? "") !== (a.fields[k] ?? ""));
    for (const field of differing) out.push({ op: "changed", field, before: b, after: a });
    // A row whose fields say nothing changed but whose text did: a parser that drops a detail
    // must not hide it, so the text itself becomes the change (and no rule knows it).
    if (differing.length === 0 && (b.compare ?? b.text) !== (a.compare ?? a.text))
      out.push({ op: "changed", field: "text", before: b, after: a });
  }
  for (const a of after) if (!oldKeys.has(idOf(a))) out.push({ op: "added", after: a });
  // Rows on both sides whose relative order changed: those outside the longest run kept in order.
  const common = before.filter((b) => byKey.has(idOf(b))).map(idOf);
  const commonAfter = after.filter((a) => oldKeys.has(idOf(a))).map(idOf);
  const inOrder = new Set(alignSequences(common, commonAfter).map(([i]) => common[i]!));
  for (const b of before)
    if (byKey.has(idOf(b)) && !inOrder.has(idOf(b))) out.push({ op: "moved", before: b, after: byKey.get(idOf(b))! });
  return out;
}

/**
 * Fact types diffed as one list, so a row moved past a row of another type shows as moved: a
 * listed program's steps and its deny checks (a check moved past a return no longer runs).
 */
export const ORDER_GROUPS: readonly (readonly string[])[] = [["seccomp-step", "seccomp-deny"]];

/** Every change between two fact lists, type by type, in the order the golden shows them. */
export function diffFacts(before: readonly Fact[], after: readonly Fact[]): Change[] {
  const present = new Set([...before, ...after].map((f) => f.type));
  const grouped = new Set(ORDER_GROUPS.flat());
  const units: (readonly string[])[] = [
    ...ORDER_GROUPS.map((g) => g.filter((t) => present.has(t))).filter((g) => g.length > 0),
    ...[...present].filter((t) => !grouped.has(t)).map((t) => [t]),
  ];
  const changes = units.flatMap((u) => {
    const b = before.filter((f) => u.includes(f.type));
    const a = after.filter((f) => u.includes(f.type));
    return u.length === 1 && SEQUENCE_TYPES.has(u[0]!) ? diffSequence(b, a) : diffKeyed(b, a);
  });
  return changes.sort((x, y) => factOf(x).line - factOf(y).line);
}

/** Makes keys unique in order of appearance: the second `-e` becomes `-e#2`. Sequences keep theirs. */
export function uniqueKeys(facts: readonly Fact[]): Fact[] {
  const seen = new Map<string, number>();
  return facts.map((f) => {
    if (SEQUENCE_TYPES.has(f.type)) return f;
    const id = `${f.type}\0${f.key}`;
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? f : { ...f, key: `${f.key}#${n}` };
  });
}
