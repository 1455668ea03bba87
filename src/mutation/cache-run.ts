// The cache around one run: which selected mutants a stored kill answers, which must run (and why),
// and, after a run whose checks held, the fresh kills kept for the next one. Against a base tree
// (--since), a stored kill answers only a mutant whose key is the same on the base and on this tree.
import { execFileSync } from "node:child_process";
import type { Mutant } from "./catalog.ts";
import { keyOf, makeKeyReader, type KeyFacts, type KeyReader, type MutantKey } from "./cache-key.ts";
import { lookUp, recordFromCache, storeVerdicts, type CacheMode, type VerdictCache } from "./cache.ts";
import { locateMutantLine, type LoadedCatalog } from "./load.ts";
import type { MutantRecord } from "./report.ts";

/** Live test files start real sandboxes: their verdicts also depend on the machine's bwrap. */
export const LIVE_DIR = "live/";

/** This machine's runtime and sandbox, as a key reads them. */
export function readKeyFacts(): KeyFacts {
  let bwrap = "absent";
  try {
    bwrap = execFileSync("bwrap", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {}
  return { node: process.version, bwrap, isLiveTest: (f) => f.startsWith(LIVE_DIR) };
}

export type CacheSplit = {
  keys: Map<string, MutantKey>;
  /** Records from the cache, by id: the ordinary one and, for a bless or both run, the bless-mode one. */
  hits: Map<string, { ordinary?: MutantRecord; blessed?: MutantRecord }>;
  /** Each mutant that must run, with why the cache could not answer. */
  misses: Map<string, string[]>;
};

/**
 * Every candidate's key on this tree and what the cache says of it. With `baseRoot` (the base
 * commit's tree, --since), a stored kill answers only when it answers for the base tree as well:
 * a mutant whose inputs the change under test touches runs, whatever is stored.
 */
export function splitByCache(
  root: string,
  catalog: LoadedCatalog,
  candidates: readonly Mutant[],
  cache: VerdictCache,
  mode: CacheMode,
  facts: KeyFacts,
  baseRoot?: string,
): CacheSplit {
  const tree = makeKeyReader(root);
  const base = baseRoot === undefined ? undefined : makeKeyReader(baseRoot);
  const split: CacheSplit = { keys: new Map(), hits: new Map(), misses: new Map() };
  for (const m of candidates) {
    const key = keyOf(tree, m, facts);
    split.keys.set(m.id, key);
    const site = catalog.sites.get(m.id)!;
    const found = lookUp(cache, m, key, mode, tree);
    const onBase = base && found.kind === "hit" ? lookUp(cache, m, keyOf(base, m, facts), mode, base) : found; // safety: cache-base-and-head
    if (found.kind === "miss" || onBase.kind === "miss" || site.kind !== "found") {
      split.misses.set(m.id, whyMissed(found, onBase, site.kind));
      continue;
    }
    const line = locateMutantLine(m, catalog.tags, site);
    const as = (c: typeof found.ordinary) => c && recordFromCache(m, line, site, c, found.short);
    split.hits.set(m.id, { ordinary: as(found.ordinary), blessed: as(found.blessed) });
  }
  return split;
}

function whyMissed(found: ReturnType<typeof lookUp>, onBase: ReturnType<typeof lookUp>, site: string): string[] {
  if (found.kind === "miss") return found.why;
  if (onBase.kind === "miss")
    return onBase.why.map((w) => `on the base tree, ${w}: the change under test moves its key`);
  return site === "found" ? [] : ["its find is stale"];
}

/** The fresh kills of a run whose own checks held, under the keys read before it ran. */
export function rememberVerdicts(
  cache: VerdictCache,
  keys: ReadonlyMap<string, MutantKey>,
  ran: { records: readonly MutantRecord[]; blessedRecords?: readonly MutantRecord[]; fatal: readonly string[] },
  mode: CacheMode,
  tree: KeyReader,
): number {
  if (ran.fatal.length > 0) return 0; // safety: cache-store-clean-run
  let kept = 0;
  ran.records.forEach((r, i) => {
    const key = keys.get(r.mutant.id);
    if (!key) return;
    const blessed = mode === "both" ? ran.blessedRecords?.[i] : mode === "blessed" ? r : undefined; // safety: cache-arm-blessed
    const ordinary = mode === "blessed" ? undefined : r;
    storeVerdicts(cache, key, { id: r.mutant.id, ordinary, blessed }, tree);
    if (cache.entries[r.mutant.id]) kept++;
  });
  return kept;
}
