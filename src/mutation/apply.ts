// Writing a mutant into a tree copy and taking it back out, for the mutation runner and the golden
// review's catalog self-test alike. A restore that does not give back the checkout's bytes throws:
// every later verdict on that copy would be about the wrong code.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyMutant, type Mutant } from "./catalog.ts";
import type { LoadedCatalog } from "./load.ts";

/**
 * Writes m into the copy at tree, whose m.file must hold `original` (the checkout's bytes) first.
 * Returns the restore, which checks the bytes came back.
 */
export function writeMutant(tree: string, catalog: LoadedCatalog, m: Mutant, original: Buffer): () => void {
  const site = catalog.sites.get(m.id);
  if (site?.kind !== "found") throw new Error(`${m.id} is stale`);
  const path = join(tree, m.file);
  if (!readFileSync(path).equals(original))
    throw new Error(`${tree}/${m.file} differs from the checkout before ${m.id}: an earlier restore failed`);
  writeFileSync(path, applyMutant(m, catalog.sources.get(m.file)!, site));
  return () => {
    writeFileSync(path, original);
    if (!readFileSync(path).equals(original))
      throw new Error(`restoring ${m.file} after ${m.id} did not give back the original bytes`);
  };
}
