// A pull request's own mutants (`--since <ref>`): the ones whose mutated file, catalog entry or a
// killer test file differs between the ref and the work tree as it is now, committed or not, and
// the ones the verdict cache cannot answer. A file is the unit: a change anywhere in a mutated
// file may move or weaken its tagged line.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseTestRef, type Mutant } from "./catalog.ts";

export type Changes = {
  /** Paths from the root that differ from the ref: changed, added, removed or untracked. */
  files: ReadonlySet<string>;
  /** Ids whose catalog entry is new or differs from the ref's. */
  entries: ReadonlySet<string>;
};

export type SinceReason = "catalog entry" | "mutated file" | "killer test file" | "cache miss";

/**
 * Each mutant the changes touch, and each whose verdict the cache cannot answer (`missed`), with
 * the first reason it is in, in catalog order.
 */
export function selectSince(
  mutants: readonly Mutant[],
  changes: Changes,
  missed: ReadonlySet<string> = new Set(),
): { mutant: Mutant; why: SinceReason }[] {
  const why = (m: Mutant): SinceReason | null => {
    if (changes.entries.has(m.id)) return "catalog entry"; // safety: since-catalog-entry
    if (changes.files.has(m.file)) return "mutated file"; // safety: since-mutated-file
    if (m.killedBy.some((k) => changes.files.has(parseTestRef(k).file))) return "killer test file"; // safety: since-killer-file
    if (missed.has(m.id)) return "cache miss"; // safety: since-cache-miss
    return null;
  };
  return mutants.flatMap((m) => {
    const w = why(m);
    return w === null ? [] : [{ mutant: m, why: w }];
  });
}

function git(root: string, args: string[]): string {
  return execFileSync("git", ["-C", root, ...args], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Every catalog entry of `mutants/*.json` by id, as JSON text, from the texts of its files. */
function entriesOf(texts: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const text of texts) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      continue;
    }
    if (!Array.isArray(json)) continue;
    for (const e of json as Array<{ id?: unknown }>) if (typeof e?.id === "string") out.set(e.id, JSON.stringify(e));
  }
  return out;
}

/** What differs between `ref` and the work tree under root, or why it cannot be read. */
export function readChanges(root: string, ref: string): Changes | { error: string } {
  try {
    git(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  } catch {
    return { error: `--since ${ref}: not a commit git can find in ${root}` };
  }
  const list = (args: string[]) => git(root, args).split("\0").filter(Boolean);
  const files = new Set([
    ...list(["diff", "--name-only", "--no-renames", "-z", ref, "--"]),
    ...list(["ls-files", "--others", "--exclude-standard", "-z"]), // safety: since-untracked
  ]);
  const dir = join(root, "mutants");
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
  const now = entriesOf(names.map((n) => readFileSync(join(dir, n), "utf8")));
  const atRef = entriesOf(
    list(["ls-tree", "-z", "--name-only", ref, "mutants/"])
      .filter((p) => /^mutants\/[^/]+\.json$/.test(p))
      .map((p) => git(root, ["show", `${ref}:${p}`])),
  );
  const entries = new Set([...now].filter(([id, text]) => atRef.get(id) !== text).map(([id]) => id));
  return { files, entries };
}

/**
 * The ref's committed tree as files, for the keys of the base (--since): `git archive` into
 * `<scratch>/base-<commit>`, kept for the next run on the same commit. A half-written one (no
 * `.complete` beside it) is written again.
 */
export function layBaseTree(root: string, ref: string, scratch: string): string {
  const commit = git(root, ["rev-parse", "--verify", `${ref}^{commit}`]).trim();
  const dest = join(scratch, `base-${commit.slice(0, 16)}`);
  if (existsSync(`${dest}.complete`)) return dest;
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const tar = execFileSync("git", ["-C", root, "archive", "--format=tar", commit], { maxBuffer: 1024 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", dest], { input: tar });
  writeFileSync(`${dest}.complete`, `${commit}\n`);
  return dest;
}
