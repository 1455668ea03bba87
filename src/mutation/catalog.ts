// The mutant catalog as data, and the checks that keep it honest: every find matches once, every
// safety tag has its mutant and every mutant its tag, and each find covers its tagged line.
import { z } from "zod";

export type Mutant = {
  id: string;
  /** Path from the project root. */
  file: string;
  find: string;
  replace: string;
  undoes: string;
  /** Full test names: `<test file> > <describe> > <test>`. */
  killedBy: string[];
  /** The catalog file the mutant came from, for error messages. */
  source: string;
};

/** A killedBy name split into the test file and the name vitest gives the test inside it. */
export type TestRef = { file: string; name: string; full: string };

const ID = /^[A-Za-z0-9][A-Za-z0-9-]*$/;

const MutantEntry = z.strictObject({
  id: z.string().regex(ID, "kebab-case letters, digits and dashes"),
  file: z.string().min(1),
  find: z.string().min(1),
  replace: z.string(),
  undoes: z.string().min(1),
  killedBy: z.array(z.string().regex(/^[^>]+\.[cm]?[jt]sx? > .+/, "<test file> > <describe> > <test>")).min(1),
});

/** Parses one catalog file's JSON; returns the mutants or the problems, each naming the entry and field. */
export function parseCatalogFile(source: string, json: unknown): { mutants: Mutant[]; problems: string[] } {
  if (!Array.isArray(json)) return { mutants: [], problems: [`${source}: must be a JSON array of mutants`] };
  const mutants: Mutant[] = [];
  const problems: string[] = [];
  json.forEach((entry, i) => {
    const r = MutantEntry.safeParse(entry);
    if (r.success) {
      if (r.data.find === r.data.replace)
        problems.push(`${source}[${i}] ${r.data.id}: replace equals find, so nothing is mutated`);
      else mutants.push({ ...r.data, source });
    } else {
      const label = typeof entry === "object" && entry !== null && "id" in entry ? String(entry.id) : `#${i}`;
      for (const issue of r.error.issues)
        problems.push(`${source}[${i}] ${label}: ${issue.path.join(".") || "(entry)"}: ${issue.message}`);
    }
  });
  return { mutants, problems };
}

/** Ids appearing in more than one mutant. */
export function findDuplicateIds(mutants: readonly Mutant[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const m of mutants) (seen.has(m.id) ? dup : seen).add(m.id);
  return [...dup].sort();
}

export function parseTestRef(full: string): TestRef {
  const i = full.indexOf(" > ");
  return { file: full.slice(0, i), name: full.slice(i + 3), full };
}

/** Start offsets of every occurrence of find in text (non-overlapping). */
export function findOccurrences(text: string, find: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(find); i !== -1; i = text.indexOf(find, i + find.length)) out.push(i);
  return out;
}

/** One-based line of a character offset. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** One-based line and column of an offset, as the mutation report schema counts them. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const nl = before.lastIndexOf("\n");
  return { line: lineAt(text, offset), column: offset - nl };
}

export type Tag = {
  id: string;
  file: string /** the line the tag protects */;
  line: number /** the line the comment sits on */;
  commentLine: number;
};

// Built from parts so this module's own source holds no tag.
const TAG_RE = new RegExp("//\\s*" + "safety" + ":\\s*([A-Za-z0-9][A-Za-z0-9-]*)", "g");

/**
 * The safety tags in one source file. A tag trailing code protects that line; a tag on a line of
 * its own protects the line just below it.
 */
export function scanTags(file: string, text: string): Tag[] {
  const tags: Tag[] = [];
  text.split("\n").forEach((lineText, i) => {
    const commentOnly = /^\s*\/\//.test(lineText);
    for (const m of lineText.matchAll(TAG_RE))
      tags.push({ id: m[1]!, file, line: commentOnly ? i + 2 : i + 1, commentLine: i + 1 });
  });
  return tags;
}

/** Where a mutant's find sits in its file, or why it is stale. */
export type Site =
  | { kind: "found"; offset: number; startLine: number; endLine: number }
  | { kind: "stale"; matches: number; why: string };

export function locateFind(m: Mutant, text: string | undefined): Site {
  if (text === undefined) return { kind: "stale", matches: 0, why: `${m.file} does not exist` };
  const at = findOccurrences(text, m.find);
  if (at.length !== 1)
    return { kind: "stale", matches: at.length, why: `find matches ${at.length} times in ${m.file}, not exactly once` };
  const offset = at[0]!;
  return { kind: "found", offset, startLine: lineAt(text, offset), endLine: lineAt(text, offset + m.find.length - 1) };
}

/**
 * Pairs tags with mutants both ways. Problems: a tag with no mutant, a mutant with no tag, a tag
 * given twice, a tag in another file than its mutant, and a found find that misses its tagged line.
 * A stale mutant still needs its tag, but its coverage cannot be checked.
 */
export function pairTags(mutants: readonly Mutant[], tags: readonly Tag[], sites: ReadonlyMap<string, Site>): string[] {
  const problems: string[] = [];
  const byId = new Map<string, Tag[]>();
  for (const t of tags) byId.set(t.id, [...(byId.get(t.id) ?? []), t]);
  const ids = new Set(mutants.map((m) => m.id));
  for (const t of tags)
    if (!ids.has(t.id)) problems.push(`${t.file}:${t.commentLine}: tag ${t.id} has no mutant in mutants/`);
  for (const m of mutants) {
    const mine = byId.get(m.id) ?? [];
    if (mine.length === 0) {
      problems.push(`${m.source} ${m.id}: no safety tag names this mutant in ${m.file}`);
      continue;
    }
    if (mine.length > 1)
      problems.push(
        `${m.id}: tagged ${mine.length} times (${mine.map((t) => `${t.file}:${t.commentLine}`).join(", ")}); one tag per mutant`,
      );
    const tag = mine[0]!;
    if (tag.file !== m.file) {
      problems.push(`${m.id}: tagged in ${tag.file}:${tag.commentLine} but mutates ${m.file}`);
      continue;
    }
    const site = sites.get(m.id);
    if (site?.kind === "found" && (tag.line < site.startLine || tag.line > site.endLine)) {
      problems.push(
        `${m.id}: find covers ${m.file}:${site.startLine}-${site.endLine} but the tagged line is ${tag.line}`,
      );
    }
  }
  return problems;
}

/** The mutated file's text; only for a found site. */
export function applyMutant(m: Mutant, text: string, site: Extract<Site, { kind: "found" }>): string {
  return text.slice(0, site.offset) + m.replace + text.slice(site.offset + m.find.length);
}

/** Catalog order: catalog files by name, then entries in file order. Sharding depends on it. */
export function sortCatalog(mutants: readonly Mutant[]): Mutant[] {
  return mutants
    .map((m, i) => ({ m, i }))
    .sort((a, b) => (a.m.source < b.m.source ? -1 : a.m.source > b.m.source ? 1 : a.i - b.i))
    .map((x) => x.m);
}
