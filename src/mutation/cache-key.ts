// A mutant's cache key: a hash of everything its verdict depends on. A killed verdict is reused
// only while every input below is byte for byte what it was; a wrong hit would report a kill no
// test made, so an input is added whenever in doubt (a needless miss only costs a run).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parseTestRef, type Mutant } from "./catalog.ts";

export type KeyInput =
  | "catalog entry"
  | "mutated file"
  | "killer test file"
  | "loaded file"
  | "golden"
  | "project file"
  | "recorded load"
  | "listed folder"
  | "node"
  | "bwrap";

/** Each input of a key and why the verdict depends on it. */
export const KEY_INPUTS: ReadonlyArray<{ input: KeyInput; why: string }> = [
  { input: "catalog entry", why: "the mutation itself: its find, replace and the tests named to kill it" },
  { input: "mutated file", why: "the code the mutation is written into; any change may move or weaken its line" },
  { input: "killer test file", why: "the assertions that must fail" },
  {
    input: "loaded file",
    why: "every repository file a killer test loads: by import, or by a path it names (a process it spawns, a fixture it reads)",
  },
  { input: "golden", why: "a golden a killer test compares: its header names the test as its writer" },
  {
    input: "project file",
    why: "in every key: the packages and their pins, npm's settings, the compiler's and vitest's configuration (PROJECT_FILES)",
  },
  {
    input: "recorded load",
    why: "a file the run that gave the verdict loaded: a module in vitest's graph of a killer test file or of its setup files, or a file any of its processes opened (a fixture, a script it spawned or copied)",
  },
  {
    input: "listed folder",
    why: "a folder the run that gave the verdict listed (scenarios, baselines): its entries' names",
  },
  { input: "node", why: "the runtime that strips types and runs every test" },
  { input: "bwrap", why: "a mutant with at least one live killer: the sandbox their sessions run in" },
];

/** Inputs a run records (known only after it ran): a stored verdict carries them, a fresh key does not. */
export const RECORDED_INPUTS: ReadonlySet<KeyInput> = new Set(["recorded load", "listed folder"]);

/**
 * In every key, whatever the killers load: the packages and their pins (package.json,
 * package-lock.json), npm's project settings (.npmrc: npm reads the project's at the root only),
 * the compiler's settings and vitest's tiers, pool, setup files and timeouts.
 */
export const PROJECT_FILES = ["package.json", "package-lock.json", "tsconfig.json", "vitest.config.ts", ".npmrc"];

export type KeyPart = { input: KeyInput; name: string; digest: string };
export type MutantKey = { key: string; parts: KeyPart[] };

/** What a key reads besides the tree: the machine's runtime and sandbox, and which killers are live. */
export type KeyFacts = {
  node: string;
  /** `bwrap --version`, or "absent". */
  bwrap: string;
  isLiveTest: (file: string) => boolean;
};

const sha = (b: Buffer | string): string => createHash("sha256").update(b).digest("hex");

/** A quoted path with an extension that a file may name: `"../goldens/x.jsonc"`, `"src/host/x.ts"`. */
const PATH_LITERAL =
  /["'`]((?:\.{1,2}\/)*[\w@-][\w.@-]*(?:\/[\w.@-]+)*\.(?:ts|mts|cts|js|mjs|cjs|json|jsonc|jsonl|txt|md|sh|bash|py|yaml|yml|toml|conf|html|xml))["'`]/g;

/**
 * Every repository file the entries load, each entry included: every quoted path that names a
 * file, read from the file's folder or from the root. That covers a relative import (Node's type
 * stripping needs its `.ts`), a spawned entry such as `join(REPO_ROOT, "src/host/claude-gate.ts")`
 * and a fixture read by path. A quoted folder outside the code's own (`"scenarios"`) adds every
 * file under it, for a test that lists it. TypeScript files are followed; others are leaves.
 */
export function walkLoads(
  root: string,
  entries: readonly string[],
  edges: Map<string, string[]> = new Map(),
): string[] {
  const seen = new Set<string>();
  const visit = (abs: string) => {
    if (seen.has(abs)) return;
    seen.add(abs);
    // A killer absent from this tree (new in the change, read on its base) loads nothing here.
    if (!abs.endsWith(".ts") || !isFile(abs)) return;
    let next = edges.get(abs);
    if (next === undefined) {
      next = edgesOf(root, abs);
      edges.set(abs, next);
    }
    next.forEach(visit);
  };
  for (const e of entries) visit(resolve(root, e));
  return [...seen].map((a) => relative(root, a)).sort();
}

/** The files one TypeScript file names: quoted files, and the files under quoted data folders. */
function edgesOf(root: string, abs: string): string[] {
  const text = readFileSync(abs, "utf8");
  const out: string[] = [];
  const inRoot = (p: string) => p.startsWith(root + sep) && !isOutput(root, p) && isFile(p);
  const bases = (spec: string) => [resolve(dirname(abs), spec), resolve(root, spec)];
  for (const m of text.matchAll(PATH_LITERAL)) {
    const hit = bases(m[1]!).find(inRoot);
    if (hit) out.push(hit); // safety: cache-walk-named-files
  }
  for (const m of text.matchAll(DIR_LITERAL)) {
    const hit = bases(m[1]!).find((p) => isDataDir(root, p));
    if (hit) out.push(...listFiles(hit)); // safety: cache-walk-data-dirs
  }
  return out;
}

/** A quoted relative path without an extension: a folder a test may list (`"scenarios"`, `"../fixtures/review"`). */
const DIR_LITERAL = /["'`]((?:\.{1,2}\/)*[a-z][\w.-]*(?:\/[\w.-]+)*)["'`]/g;

/**
 * Top folders a test names to walk the code itself (the layer and function-length checks) or that
 * hold only output: the files of them a killer loads are found by the walk, so listing a whole one
 * would only make every key miss on any change.
 */
const CODE_DIRS = new Set(["src", "contract", "live", "scripts", "goldens"]);

/**
 * What runs write, not what they read: a run's own reports (the cache file among them), scratch
 * trees, packages (the lockfile stands for them) and git's store. In a key they would miss on
 * every run.
 */
const OUTPUT_DIRS = new Set(["reports", ".scratch", "node_modules", ".git", ".vite-cache", ".stryker-tmp"]);

function isOutput(root: string, abs: string): boolean {
  const parts = relative(root, abs).split(sep);
  return OUTPUT_DIRS.has(parts[0]!) || parts.includes("node_modules");
}

function isDataDir(root: string, abs: string): boolean {
  const rel = relative(root, abs);
  if (rel === "" || rel.startsWith("..") || CODE_DIRS.has(rel) || isOutput(root, abs)) return false;
  try {
    return statSync(abs).isDirectory();
  } catch {
    return false;
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? listFiles(join(dir, d.name)) : d.isFile() ? [join(dir, d.name)] : [],
  );
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function listEntries(dir: string): string {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .map((d) => `${d.name}${d.isDirectory() ? "/" : ""}`)
      .sort()
      .join("\n");
  } catch {
    return "(absent)";
  }
}

/** The test file a golden's first line names as its writer: `... · from <test file> > <test> · ...`. */
export function readGoldenWriter(text: string): string | null {
  const first = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
  return / · from (\S+) > /.exec(first)?.[1] ?? null;
}

/** Goldens by the test file their header names as writer (goldens/ read once per run). */
export function indexGoldenWriters(root: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const from = readGoldenWriter(readFileSync(p, "utf8"));
        if (from) out.set(from, [...(out.get(from) ?? []), relative(root, p)]);
      }
    }
  };
  walk(join(root, "goldens"));
  return out;
}

/**
 * What keys read from one tree, each file hashed and each killer set walked once per run: make a
 * new reader after the tree changes.
 */
export type KeyReader = {
  root: string;
  digest: (path: string) => string;
  /** A folder's entries, names and kinds, as a digest ("(absent)" hashed when it is none). */
  listing: (path: string) => string;
  loads: (entries: readonly string[]) => string[];
  goldensBy: (testFile: string) => readonly string[];
};

export function makeKeyReader(root: string): KeyReader {
  const digests = new Map<string, string>();
  const walks = new Map<string, string[]>();
  const edges = new Map<string, string[]>();
  let writers: Map<string, string[]> | undefined;
  return {
    root,
    digest: (path) => {
      let d = digests.get(path);
      if (d === undefined) {
        d = sha(isFile(join(root, path)) ? readFileSync(join(root, path)) : "(absent)");
        digests.set(path, d);
      }
      return d;
    },
    listing: (path) => sha(listEntries(join(root, path))),
    loads: (entries) => {
      const id = entries.join("\0");
      let w = walks.get(id);
      if (w === undefined) {
        w = walkLoads(root, entries, edges);
        walks.set(id, w);
      }
      return w;
    },
    goldensBy: (testFile) => (writers ??= indexGoldenWriters(root)).get(testFile) ?? [],
  };
}

/**
 * The part of a mutant's key that the tree gives before anything runs: the mutation, the code it
 * is written into, its killers and what they name, the goldens they write, the project files, the
 * runtime and, when any killer is live, bwrap. A stored verdict adds what its run recorded.
 */
export function keyOf(tree: KeyReader, m: Mutant, facts: KeyFacts): MutantKey {
  const parts: KeyPart[] = [];
  const file = (input: KeyInput, name: string) => parts.push({ input, name, digest: tree.digest(name) });
  const value = (input: KeyInput, v: string) => parts.push({ input, name: input, digest: sha(v) });
  value("catalog entry", JSON.stringify(m)); // safety: cache-key-entry
  file("mutated file", m.file); // safety: cache-key-mutated-file
  const killers = [...new Set(m.killedBy.map((k) => parseTestRef(k).file))].sort();
  for (const k of killers) file("killer test file", k); // safety: cache-key-killer-file
  for (const f of tree.loads(killers)) if (!killers.includes(f) && f !== m.file) file("loaded file", f); // safety: cache-key-loaded
  for (const g of killers.flatMap(tree.goldensBy)) file("golden", g); // safety: cache-key-golden
  for (const f of PROJECT_FILES) file("project file", f); // safety: cache-key-project-files
  value("node", facts.node);
  if (killers.some(facts.isLiveTest)) value("bwrap", facts.bwrap); // safety: cache-key-bwrap // safety: cache-key-bwrap-any
  return composeKey(parts);
}

/** The key of a set of parts: one hash over each input, name and digest, in order. */
export const composeKey = (parts: KeyPart[]): MutantKey => ({
  key: sha(parts.map((p) => `${p.input}\0${p.name}\0${p.digest}`).join("\n")),
  parts,
});

/** What one run of a mutant's tests loaded: files (modules and files opened) and folders listed. */
export type RecordedLoads = { files: readonly string[]; folders: readonly string[] };

/** The parts a run's recorded loads add to the tree's key, each file or folder once. */
export function recordedParts(tree: KeyReader, loads: RecordedLoads, known: readonly KeyPart[]): KeyPart[] {
  const named = new Set(known.map((p) => p.name));
  const files = [...new Set(loads.files)].filter((f) => !named.has(f)).sort();
  return [
    ...files.map((name): KeyPart => ({ input: "recorded load", name, digest: tree.digest(name) })), // safety: cache-key-recorded-files
    ...[...new Set(loads.folders)]
      .sort()
      .map((name): KeyPart => ({ input: "listed folder", name, digest: tree.listing(name) })), // safety: cache-key-listed-folders
  ];
}

/** Each recorded part whose file or folder differs in this tree from the digest stored with it. */
export function recordedChanges(tree: KeyReader, stored: readonly KeyPart[]): string[] {
  return stored
    .filter((p) => RECORDED_INPUTS.has(p.input))
    .filter((p) => (p.input === "listed folder" ? tree.listing(p.name) : tree.digest(p.name)) !== p.digest) // safety: cache-check-recorded
    .map((p) => `${p.input} ${p.name} changed`);
}

/** The inputs that differ between a stored key and this one, named for the run's log. */
export function explainMiss(before: readonly KeyPart[], now: readonly KeyPart[]): string[] {
  const id = (p: KeyPart) => `${p.input} ${p.name}`;
  const was = new Map(before.map((p) => [id(p), p.digest]));
  const is = new Map(now.map((p) => [id(p), p.digest]));
  return [
    ...now
      .filter((p) => was.get(id(p)) !== p.digest)
      .map((p) => (was.has(id(p)) ? `${id(p)} changed` : `${id(p)} is new`)),
    ...before.filter((p) => !is.has(id(p))).map((p) => `${id(p)} is no longer an input`),
  ];
}
