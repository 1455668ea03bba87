// Splitting a run across machines and putting it back together. A shard is a fixed slice of the
// catalog order, so the same k/n always picks the same mutants; the merge scores only a complete set.
import type { MutantRecord } from "./report.ts";

export type Shard = { k: number; n: number };

/** Parses `k/n`, zero-based: `0/2` and `1/2` cover a catalog between them. */
export function parseShard(text: string): Shard | { error: string } {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) return { error: `--shard ${JSON.stringify(text)}: expected k/n, e.g. 0/2` };
  const k = Number(m[1]);
  const n = Number(m[2]);
  if (n < 1 || k >= n) return { error: `--shard ${text}: k counts from 0 and must be below n` };
  return { k, n };
}

/** The ids of shard k of n: every n-th mutant in catalog order, starting at k. */
export function selectShard<T>(items: readonly T[], shard: Shard): T[] {
  return items.filter((_, i) => i % shard.n === shard.k);
}

/** What one shard writes: enough for a merge to check it belongs to the same catalog. */
export type PartialReport = {
  kind: "mosaic-mutants-partial";
  catalogHash: string;
  shard: Shard;
  ids: string[];
  records: MutantRecord[];
  /** A --both shard's records with goldens blessed away. */
  blessedRecords?: MutantRecord[];
  tests: [string, string[]][];
  sources: [string, string][];
};

export type MergeResult =
  | { ok: true; records: MutantRecord[]; blessedRecords?: MutantRecord[] }
  | { ok: false; problems: string[] };

/**
 * Merges shard reports in catalog order. Refuses when a shard is missing or given twice, the shards
 * disagree on n, one was run on another catalog, or a mutant has no record.
 */
export function mergePartials(
  partials: readonly PartialReport[],
  catalogIds: readonly string[],
  catalogHash: string,
): MergeResult {
  const problems: string[] = [];
  if (partials.length === 0) return { ok: false, problems: ["no shard reports found"] };
  const ns = new Set(partials.map((p) => p.shard.n));
  if (ns.size !== 1) problems.push(`shards disagree on n: ${[...ns].join(", ")}`);
  const n = partials[0]!.shard.n;
  const ks = partials.map((p) => p.shard.k);
  for (let k = 0; k < n; k++) {
    const c = ks.filter((x) => x === k).length;
    if (c === 0) problems.push(`shard ${k}/${n} is missing`);
    if (c > 1) problems.push(`shard ${k}/${n} is given ${c} times`);
  }
  for (const p of partials)
    if (p.catalogHash !== catalogHash)
      problems.push(
        `shard ${p.shard.k}/${p.shard.n} ran on another catalog (${p.catalogHash.slice(0, 12)}, now ${catalogHash.slice(0, 12)})`,
      );
  const both = partials.filter((p) => p.blessedRecords !== undefined).length;
  if (both !== 0 && both !== partials.length)
    problems.push(`${both} of ${partials.length} shards ran with --both: run every shard the same way`);
  const byId = new Map<string, MutantRecord>();
  const blessedById = new Map<string, MutantRecord>();
  for (const p of partials) {
    for (const r of p.records) byId.set(r.mutant.id, r);
    for (const r of p.blessedRecords ?? []) blessedById.set(r.mutant.id, r);
  }
  const missing = catalogIds.filter((id) => !byId.has(id) || (both === partials.length && !blessedById.has(id)));
  if (missing.length > 0) problems.push(`no verdict for ${missing.length} mutant(s): ${missing.join(", ")}`);
  if (problems.length > 0) return { ok: false, problems };
  const records = catalogIds.map((id) => byId.get(id)!);
  return both > 0
    ? { ok: true, records, blessedRecords: catalogIds.map((id) => blessedById.get(id)!) }
    : { ok: true, records };
}
