// Verdicts that carry over between runs. Only a kill is kept, and only from a run whose own checks
// held: anything else runs again, so a stored row can never hide a survivor, a timeout or a broken
// run. Each mode's verdict is kept under the key it was computed with: the tree's part (cache-key.ts)
// and what its own run recorded loading. The file lives outside the checkout (cache-place.ts).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Mutant } from "./catalog.ts";
import {
  composeKey,
  explainMiss,
  RECORDED_INPUTS,
  recordedChanges,
  recordedParts,
  type KeyPart,
  type KeyReader,
  type MutantKey,
} from "./cache-key.ts";
import type { MutantRecord } from "./report.ts";
import { explainFailure, type MutantVerdict } from "./verdict.ts";

type CachedRecord = { verdict: MutantVerdict; testsRun: string[]; goldensBlessed?: string[] };
/** One mode's kill under its whole key: the tree's parts and the loads its run recorded. */
type StoredVerdict = { key: string; parts: KeyPart[]; record: CachedRecord };
type CacheEntry = { ordinary?: StoredVerdict; blessed?: StoredVerdict };
export type VerdictCache = { version: 2; entries: Record<string, CacheEntry> };

/** Which verdicts a run needs: an ordinary run, a bless run, or both in one pass. */
export type CacheMode = "ordinary" | "blessed" | "both";
type Arm = "ordinary" | "blessed";

export type Lookup =
  | { kind: "hit"; short: string; ordinary?: CachedRecord; blessed?: CachedRecord }
  | { kind: "miss"; why: string[] };

export const emptyCache = (): VerdictCache => ({ version: 2, entries: {} });

/** The cache on disk; a missing file is empty, an unreadable one is empty and says why. */
export function readCache(path: string, log: (l: string) => void): VerdictCache {
  if (!existsSync(path)) return emptyCache();
  try {
    const c = JSON.parse(readFileSync(path, "utf8")) as VerdictCache;
    if (c.version === 2 && typeof c.entries === "object" && c.entries !== null) return c;
    log(`cache: ${path} is of another version; starting empty`);
  } catch (e) {
    log(`cache: ${path} cannot be read (${e instanceof Error ? e.message : String(e)}); starting empty`);
  }
  return emptyCache();
}

/** Written whole to a temporary file, then renamed: a reader never sees half a cache. */
export function writeCache(path: string, cache: VerdictCache): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, JSON.stringify(cache) + "\n");
  renameSync(`${path}.tmp`, path);
}

const armsOf = (mode: CacheMode): Arm[] =>
  mode === "both" ? ["ordinary", "blessed"] : mode === "blessed" ? ["blessed"] : ["ordinary"];
const treePart = (parts: readonly KeyPart[]) => parts.filter((p) => !RECORDED_INPUTS.has(p.input));

/** Why a stored verdict does not answer for this tree: its tree part or a recorded load differs. */
function staleness(stored: StoredVerdict, key: MutantKey, tree: KeyReader): string[] {
  const moved = explainMiss(treePart(stored.parts), key.parts);
  if (moved.length > 0) return moved; // safety: cache-hit-whole-key
  return recordedChanges(tree, stored.parts);
}

/**
 * The stored verdicts of the arms a run needs, each read from its own arm only and each still
 * answering for this tree; a miss says what differs. `key` is the tree's part of the key now.
 */
export function lookUp(cache: VerdictCache, m: Mutant, key: MutantKey, mode: CacheMode, tree: KeyReader): Lookup {
  const e = cache.entries[m.id];
  if (e === undefined) return { kind: "miss", why: ["no verdict stored"] };
  const found: Partial<Record<Arm, StoredVerdict>> = {};
  for (const arm of armsOf(mode)) {
    const stored = e[arm]; // safety: cache-arm-own
    if (stored === undefined)
      return { kind: "miss", why: [`no ${arm === "blessed" ? "bless-mode" : "ordinary"} verdict stored`] };
    const why = staleness(stored, key, tree);
    if (why.length > 0) return { kind: "miss", why };
    found[arm] = stored;
  }
  const first = found.ordinary ?? found.blessed!;
  return {
    kind: "hit",
    short: first.key.slice(0, 12),
    ...(found.ordinary ? { ordinary: found.ordinary.record } : {}),
    ...(found.blessed ? { blessed: found.blessed.record } : {}),
  };
}

/** A kill an expected test's assertion (or, ordinarily, its golden) made: the only verdict kept. */
const isKeptKill = (r: MutantRecord): boolean => r.verdict.kind === "killed" && explainFailure(r.verdict) === null; // safety: cache-kills-only

const strip = (r: MutantRecord): CachedRecord => ({
  verdict: r.verdict,
  testsRun: r.testsRun,
  ...(r.goldensBlessed ? { goldensBlessed: r.goldensBlessed } : {}),
});

/**
 * Keeps a mutant's fresh verdicts, each arm under its own key: the tree's part (`key`) and the
 * loads its run recorded. A verdict that is not a kill, or whose loads were not recorded, removes
 * that arm's stored one. An arm not run now stays only while its tree part is this key's: a verdict
 * from an older tree is never kept beside a fresh one.
 */
export function storeVerdicts(
  cache: VerdictCache,
  key: MutantKey,
  fresh: { id: string; ordinary?: MutantRecord; blessed?: MutantRecord },
  tree: KeyReader,
): void {
  const entry: CacheEntry = { ...cache.entries[fresh.id] };
  for (const arm of ["ordinary", "blessed"] as const) {
    const r = fresh[arm];
    if (r === undefined) {
      const kept = entry[arm];
      if (kept && explainMiss(treePart(kept.parts), key.parts).length > 0) delete entry[arm]; // safety: cache-drop-older-key
      continue;
    }
    if (!isKeptKill(r) || r.loads === undefined) {
      delete entry[arm];
      continue;
    }
    const parts = [...key.parts, ...recordedParts(tree, r.loads, key.parts)];
    entry[arm] = { ...composeKey(parts), record: strip(r) };
  }
  if (entry.ordinary || entry.blessed) cache.entries[fresh.id] = entry;
  else delete cache.entries[fresh.id];
}

/** A cached verdict as this run's record: nothing ran, and the table says where it came from. */
export function recordFromCache(
  m: Mutant,
  line: number,
  site: MutantRecord["site"],
  c: CachedRecord,
  short: string,
): MutantRecord {
  return {
    mutant: m,
    line,
    site,
    verdict: c.verdict,
    seconds: 0,
    testsRun: c.testsRun,
    ...(c.goldensBlessed ? { goldensBlessed: c.goldensBlessed } : {}),
    cachedFrom: short,
  };
}
