// The plan, settled before anything runs: which mutants this run takes (--only, --shard) and which
// one is the sentinel. A bad selection refuses with the id it could not find.
import type { Mutant } from "./catalog.ts";
import type { LoadedCatalog } from "./load.ts";
import { selectShard, type Shard } from "./shard.ts";

export type RunPlan =
  | { kind: "plan"; selected: Mutant[]; sentinel: Mutant }
  | { kind: "refuse"; exitCode: 1 | 2; message: string };

/** The mutants named by --only, in catalog order, or the id(s) the catalog does not hold. */
export function selectOnly(
  catalog: LoadedCatalog,
  only: readonly string[] | undefined,
): { ok: true; selected: Mutant[] } | { ok: false; unknown: string[] } {
  if (only === undefined) return { ok: true, selected: catalog.mutants };
  const unknown = only.filter((id) => !catalog.mutants.some((m) => m.id === id));
  return unknown.length > 0
    ? { ok: false, unknown }
    : { ok: true, selected: catalog.mutants.filter((m) => only.includes(m.id)) };
}

/** The named sentinel, or the first mutant whose find still matches; undefined when stale or absent. */
export function chooseSentinel(catalog: LoadedCatalog, id: string | undefined): Mutant | undefined {
  const found = (m: Mutant) => catalog.sites.get(m.id)?.kind === "found";
  const m = id === undefined ? catalog.mutants.find(found) : catalog.mutants.find((x) => x.id === id);
  return m !== undefined && found(m) ? m : undefined;
}

export function planRun(
  catalog: LoadedCatalog,
  args: { only: string[] | undefined; shard: Shard | undefined; sentinel: string | undefined },
): RunPlan {
  const only = selectOnly(catalog, args.only);
  if (!only.ok)
    return { kind: "refuse", exitCode: 2, message: `--only: no mutant ${only.unknown.join(", ")} in the catalog` };
  const selected = args.shard ? selectShard(only.selected, args.shard) : only.selected;
  const sentinel = chooseSentinel(catalog, args.sentinel);
  if (sentinel === undefined) {
    const message = args.sentinel
      ? `--sentinel ${args.sentinel}: no such mutant, or it is stale`
      : "no mutant can serve as the sentinel: every find is stale";
    return { kind: "refuse", exitCode: 1, message };
  }
  return { kind: "plan", selected, sentinel };
}
