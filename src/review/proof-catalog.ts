// The mutation proof's inputs between two revisions as findings: a catalog mutant removed or its
// find, replace, file or killers changed; a safety tag gone from the sources; a new or changed
// argument that a generated mutant is equivalent (mutants/equivalent.md); a new StrykerJS disable
// comment. Each hides a protection from the proof without failing any check that compares only
// what still exists. Pure: the texts in, the findings out.
import { parseCatalogFile, scanTags, type Mutant } from "../mutation/catalog.ts";
import { readEquivalents, type EquivalentRow } from "../mutation/sweep-triage.ts";
import type { Finding, ReviewVerdict } from "./model.ts";

/** One file at two revisions; null where it does not exist. */
export type FilePair = { path: string; before: string | null; after: string | null };

export const isCatalogFile = (p: string): boolean => /^mutants\/[^/]+\.json$/.test(p);
export const EQUIVALENTS = "mutants/equivalent.md";
/** Files whose safety tags the catalog pairs with its mutants (src/mutation/load.ts walks src/). */
export const isTaggedSource = (p: string): boolean => /^src\/.+\.[cm]?[jt]sx?$/.test(p);
const isCode = (p: string): boolean => /\.[cm]?[jt]sx?$/.test(p);

const NONE = "(none)";
const finding = (
  verdict: ReviewVerdict,
  file: string,
  kase: string,
  before: string,
  after: string,
  rule: string,
  why: string,
): Finding => ({ verdict, file, case: kase, before, after, rule, why });

/** A catalog file's mutants, or why it cannot be read. */
function mutantsOf(path: string, text: string | null): Mutant[] | string {
  if (text === null) return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return `not JSON: ${(e as Error).message}`;
  }
  const r = parseCatalogFile(path, json);
  return r.problems.length > 0 ? r.problems.join("; ") : r.mutants;
}

/** The fields of a mutant a change of which weakens the proof, each with why. */
const MUTANT_FIELDS: readonly [keyof Mutant, string][] = [
  ["file", "the mutant now mutates another file: the protection it proved is unproven"],
  ["find", "the mutant now finds other text: the line it undid may no longer be the protection"],
  ["replace", "the mutant now puts other text in: a weaker mutation is easier to kill"],
];

function diffMutant(file: string, b: Mutant, a: Mutant): Finding[] {
  const changed = MUTANT_FIELDS.filter(([k]) => b[k] !== a[k]); // safety: proof-mutant-field-changed
  const out = changed.map(([k, why]) =>
    finding("weakens", file, `mutant ${b.id}: ${k}`, String(b[k]), String(a[k]), `mutant-${k}-changed`, why),
  );
  const gone = b.killedBy.filter((k) => !a.killedBy.includes(k));
  const added = a.killedBy.filter((k) => !b.killedBy.includes(k));
  if (gone.length > 0)
    // safety: proof-mutant-killer-changed
    out.push(
      finding(
        "weakens",
        file,
        `mutant ${b.id}: killedBy`,
        gone.join("; "),
        added.join("; ") || NONE,
        "mutant-killer-changed",
        "a test that had to kill the mutant is no longer named: another, maybe weaker, test may pass for it",
      ),
    );
  else if (added.length > 0)
    out.push(
      finding(
        "strengthens",
        file,
        `mutant ${b.id}: killedBy`,
        NONE,
        added.join("; "),
        "mutant-killer-added",
        "one more test must kill the mutant",
      ),
    );
  if (b.undoes !== a.undoes)
    out.push(
      finding(
        "neutral",
        file,
        `mutant ${b.id}: undoes`,
        b.undoes,
        a.undoes,
        "mutant-undoes-reworded",
        "the sentence for a reviewer, reworded",
      ),
    );
  return out;
}

/** Catalog mutants removed, changed or added, across every catalog file that changed. */
export function diffCatalog(pairs: readonly FilePair[]): Finding[] {
  const before = new Map<string, Mutant>();
  const after = new Map<string, Mutant>();
  const out: Finding[] = [];
  for (const p of pairs.filter((x) => isCatalogFile(x.path))) {
    const b = mutantsOf(p.path, p.before);
    const a = mutantsOf(p.path, p.after);
    if (typeof a === "string") {
      out.push(
        finding(
          "unknown",
          p.path,
          "catalog",
          NONE,
          a,
          "",
          "the catalog file does not read: no mutant in it can be compared",
        ),
      );
      continue;
    }
    for (const m of typeof b === "string" ? [] : b) before.set(m.id, m);
    for (const m of a) after.set(m.id, m);
  }
  for (const [id, b] of before) {
    const a = after.get(id);
    if (a === undefined)
      // safety: proof-mutant-removed
      out.push(
        finding(
          "weakens",
          b.source,
          `mutant ${id}`,
          `${b.file} · ${b.undoes}`,
          NONE,
          "mutant-removed",
          "a catalog mutant is gone: the protection it proved no longer needs a test that notices it go",
        ),
      );
    else out.push(...diffMutant(a.source, b, a));
  }
  for (const [id, a] of after)
    if (!before.has(id))
      out.push(
        finding(
          "strengthens",
          a.source,
          `mutant ${id}`,
          NONE,
          `${a.file} · ${a.undoes}`,
          "mutant-added",
          "a new catalog mutant",
        ),
      );
  return out.map((f) => (f.rule === "" ? { ...f, rule: null } : f));
}

/** Safety tags gone from the sources (an id tagged in neither revision's changed files after). */
export function diffTags(pairs: readonly FilePair[]): Finding[] {
  const where = (side: "before" | "after") => {
    const m = new Map<string, string[]>();
    for (const p of pairs.filter((x) => isTaggedSource(x.path) && x[side] !== null))
      for (const t of scanTags(p.path, p[side]!)) m.set(t.id, [...(m.get(t.id) ?? []), `${p.path}:${t.commentLine}`]);
    return m;
  };
  const before = where("before");
  const after = where("after");
  const out: Finding[] = [];
  for (const [id, at] of before)
    if ((after.get(id)?.length ?? 0) < at.length)
      // safety: proof-tag-removed
      out.push(
        finding(
          "weakens",
          at[0]!.split(":")[0]!,
          `safety tag ${id}`,
          at.join(", "),
          after.get(id)?.join(", ") ?? NONE,
          "safety-tag-removed",
          "a safety line's tag is gone: with its mutant gone too, no check notices the protection go",
        ),
      );
  for (const [id, at] of after)
    if (!before.has(id))
      out.push(
        finding(
          "strengthens",
          at[0]!.split(":")[0]!,
          `safety tag ${id}`,
          NONE,
          at.join(", "),
          "safety-tag-added",
          "a new safety line",
        ),
      );
  return out;
}

/** StrykerJS's comments that take code out of the generated sweep. */
const STRYKER_DISABLE = /Stryker\s+disable[^\n]*/g;

/** New StrykerJS disable comments in any changed code file. */
export function diffStrykerDisables(pairs: readonly FilePair[]): Finding[] {
  const out: Finding[] = [];
  for (const p of pairs.filter((x) => isCode(x.path) && x.after !== null)) {
    const was = [...(p.before ?? "").matchAll(STRYKER_DISABLE)].map((m) => m[0].trim());
    for (const m of p.after!.matchAll(STRYKER_DISABLE)) {
      const text = m[0].trim();
      const i = was.indexOf(text);
      if (i !== -1) {
        // safety: proof-stryker-disable
        was.splice(i, 1);
        continue;
      }
      out.push(
        finding(
          "weakens",
          p.path,
          "stryker disable",
          NONE,
          text,
          "stryker-disable-added",
          "a comment takes code out of the generated sweep: its mutants are no longer reported, so none needs a test or an argument",
        ),
      );
    }
  }
  return out;
}

const rowKey = (r: EquivalentRow) => `${r.file} · ${r.mutator} · ${r.original} → ${r.replacement}`;

/** New, widened or reargued rows of mutants/equivalent.md. */
export function diffEquivalents(pair: FilePair | undefined): Finding[] {
  if (pair === undefined || pair.after === null) return [];
  const b = pair.before === null ? [] : readEquivalents(pair.before);
  const a = readEquivalents(pair.after);
  if (!Array.isArray(a))
    return [
      finding("unknown", EQUIVALENTS, "table", NONE, a.problem, "", "the table does not read: no row can be compared"),
    ].map((f) => ({ ...f, rule: null }));
  const old = new Map((Array.isArray(b) ? b : []).map((r) => [rowKey(r), r]));
  const out: Finding[] = [];
  for (const r of a) {
    const o = old.get(rowKey(r));
    const kase = `row ${rowKey(r)}`;
    if (o === undefined)
      // safety: proof-equivalent-added
      out.push(
        finding(
          "weakens",
          EQUIVALENTS,
          kase,
          NONE,
          r.why,
          "equivalent-row-added",
          "a new argument that a surviving mutant cannot change behaviour: the sweep passes over it; read whether the argument holds",
        ),
      );
    else if (r.places > o.places)
      // safety: proof-equivalent-widened
      out.push(
        finding(
          "weakens",
          EQUIVALENTS,
          kase,
          `×${o.places}`,
          `×${r.places}`,
          "equivalent-places-raised",
          "the row now answers more places: each more survivor passes unargued unless the argument holds there too",
        ),
      );
    else if (r.why !== o.why)
      // safety: proof-equivalent-reargued
      out.push(
        finding(
          "weakens",
          EQUIVALENTS,
          kase,
          o.why,
          r.why,
          "equivalent-argument-changed",
          "the argument changed: read whether it still holds",
        ),
      );
    old.delete(rowKey(r));
  }
  for (const [k, o] of old)
    out.push(
      finding(
        "strengthens",
        EQUIVALENTS,
        `row ${k}`,
        o.why,
        NONE,
        "equivalent-row-removed",
        "an argued survivor must now be killed or argued again",
      ),
    );
  return out;
}
