// Verdicts that carry over between runs (`reports/mutant-cache.json`). Only a kill is kept, and
// only from a run whose own checks held: anything else runs again, so a cached row can never hide
// a survivor, a timeout or a broken run. A hit needs the whole key (cache-key.ts) to match.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Mutant } from "./catalog.ts";
import { explainMiss, type KeyPart, type MutantKey } from "./cache-key.ts";
import type { MutantRecord } from "./report.ts";
import { explainFailure, type MutantVerdict } from "./verdict.ts";

export const CACHE_FILE = "reports/mutant-cache.json";

type CachedRecord = { verdict: MutantVerdict; testsRun: string[]; goldensBlessed?: string[] };
type CacheEntry = { key: string; parts: KeyPart[]; ordinary?: CachedRecord; blessed?: CachedRecord };
export type VerdictCache = { version: 1; entries: Record<string, CacheEntry> };

/** Which verdicts a run needs: an ordinary run, a bless run, or both in one pass. */
export type CacheMode = "ordinary" | "blessed" | "both";

export type Lookup =
  | { kind: "hit"; short: string; ordinary?: CachedRecord; blessed?: CachedRecord }
  | { kind: "miss"; why: string[] };

export const emptyCache = (): VerdictCache => ({ version: 1, entries: {} });

/** The cache on disk; a missing file is empty, an unreadable one is empty and says why. */
export function readCache(path: string, log: (l: string) => void): VerdictCache {
  if (!existsSync(path)) return emptyCache();
  try {
    const c = JSON.parse(readFileSync(path, "utf8")) as VerdictCache;
    if (c.version === 1 && typeof c.entries === "object" && c.entries !== null) return c;
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

const needs = (mode: CacheMode) => ({ ordinary: mode !== "blessed", blessed: mode !== "ordinary" });

export function lookUp(cache: VerdictCache, m: Mutant, key: MutantKey, mode: CacheMode): Lookup {
  const e = cache.entries[m.id];
  if (e === undefined) return { kind: "miss", why: ["no verdict stored"] };
  if (e.key !== key.key) return { kind: "miss", why: explainMiss(e.parts, key.parts) }; // safety: cache-hit-whole-key
  const n = needs(mode);
  if ((n.ordinary && !e.ordinary) || (n.blessed && !e.blessed))
    return { kind: "miss", why: [`no ${n.blessed && !e.blessed ? "bless-mode" : "ordinary"} verdict stored`] };
  return {
    kind: "hit",
    short: key.key.slice(0, 12),
    ...(n.ordinary ? { ordinary: e.ordinary } : {}),
    ...(n.blessed ? { blessed: e.blessed } : {}),
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
 * Keeps a mutant's fresh verdicts under its key. A verdict that is not a kill removes the entry,
 * so the next run runs the mutant again; a mode's verdict under the same key keeps the other's.
 */
export function storeVerdicts(
  cache: VerdictCache,
  key: MutantKey,
  fresh: { id: string; ordinary?: MutantRecord; blessed?: MutantRecord },
): void {
  const given = [fresh.ordinary, fresh.blessed].filter((r): r is MutantRecord => r !== undefined);
  if (given.length === 0) return;
  if (!given.every(isKeptKill)) {
    delete cache.entries[fresh.id];
    return;
  }
  const old = cache.entries[fresh.id];
  const same = old?.key === key.key ? old : undefined;
  cache.entries[fresh.id] = {
    key: key.key,
    parts: key.parts,
    ...(fresh.ordinary ? { ordinary: strip(fresh.ordinary) } : same?.ordinary ? { ordinary: same.ordinary } : {}),
    ...(fresh.blessed ? { blessed: strip(fresh.blessed) } : same?.blessed ? { blessed: same.blessed } : {}),
  };
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
