// Reads the catalog and the tagged sources of a project, and checks them (the checks are in catalog.ts).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
  sortCatalog,
  findDuplicateIds,
  locateFind,
  pairTags,
  parseCatalogFile,
  parseTestRef,
  scanTags,
  type Mutant,
  type Site,
  type Tag,
} from "./catalog.ts";

export type LoadedCatalog = {
  mutants: Mutant[];
  /** Original text of every file a mutant names, by path from the root. */
  sources: Map<string, string>;
  sites: Map<string, Site>;
  tags: Tag[];
  /** Problems that stop the run before any mutant: a broken catalog proves nothing. */
  problems: string[];
  /** Hash of the catalog and the sources it mutates: a shard run on anything else does not merge. */
  hash: string;
};

function walk(dir: string, keep: (p: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      if (n === "node_modules" || n.startsWith(".")) return [];
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p, keep) : keep(p) ? [p] : [];
    });
}

export function loadCatalog(root: string): LoadedCatalog {
  const problems: string[] = [];
  const mutants: Mutant[] = [];
  const hash = createHash("sha256");
  const catalogFiles = walk(join(root, "mutants"), (p) => p.endsWith(".json")).filter(
    (p) => relative(join(root, "mutants"), p).indexOf("/") === -1,
  );
  if (catalogFiles.length === 0) problems.push(`no catalog: ${join(root, "mutants")}/*.json`);
  for (const file of catalogFiles) {
    const rel = relative(root, file);
    const text = readFileSync(file, "utf8");
    hash.update(rel + "\0" + text + "\0");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      problems.push(`${rel}: not JSON: ${(e as Error).message}`);
      continue;
    }
    const parsed = parseCatalogFile(rel, json);
    mutants.push(...parsed.mutants);
    problems.push(...parsed.problems);
  }
  for (const id of findDuplicateIds(mutants)) problems.push(`mutant id ${id} is used more than once`);

  const sources = new Map<string, string>();
  const sites = new Map<string, Site>();
  for (const m of mutants) {
    if (!sources.has(m.file)) {
      const p = join(root, m.file);
      if (existsSync(p)) sources.set(m.file, readFileSync(p, "utf8"));
    }
    sites.set(m.id, locateFind(m, sources.get(m.file)));
    for (const k of m.killedBy) {
      const ref = parseTestRef(k);
      if (!existsSync(join(root, ref.file))) problems.push(`${m.id}: killedBy names ${ref.file}, which does not exist`);
    }
  }
  for (const [file, text] of [...sources].sort()) hash.update(file + "\0" + text + "\0");

  // The tiers' own configs carry safety lines too (which tests run, what fails a test).
  const configs = readdirSync(root)
    .filter((n) => /\.config\.[cm]?[jt]s$/.test(n))
    .map((n) => join(root, n));
  const tags = [...walk(join(root, "src"), (p) => /\.[cm]?[jt]sx?$/.test(p)), ...configs].flatMap((p) =>
    scanTags(relative(root, p), readFileSync(p, "utf8")),
  );
  problems.push(...pairTags(mutants, tags, sites));
  return { mutants: sortCatalog(mutants), sources, sites, tags, problems, hash: hash.digest("hex") };
}

/** The line a mutant points at: its tag's line, else where its find starts, else 1. */
export function locateMutantLine(m: Mutant, tags: readonly Tag[], site: Site | undefined): number {
  const tag = tags.find((t) => t.id === m.id && t.file === m.file);
  if (tag) return tag.line;
  return site?.kind === "found" ? site.startLine : 1;
}
