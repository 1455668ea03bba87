// The lines of the swept files that a safety tag protects and the catalog proves: a generated
// survivor there is triaged by the catalog mutant of that tag (scripts/sweep-triage.ts).
import { scanTags } from "./catalog.ts";
import { loadCatalog } from "./load.ts";
import type { TaggedLines } from "./sweep-triage.ts";

/** Per file of a mutation.json, the lines whose safety tag names a catalog mutant of that file. */
export function catalogTaggedLines(root: string, reportText: string): TaggedLines {
  const catalog = loadCatalog(root);
  const ids = new Set(catalog.mutants.map((m) => `${m.file}\0${m.id}`));
  const files = (JSON.parse(reportText) as { files?: Record<string, { source?: string }> }).files ?? {};
  const out = new Map<string, Set<number>>();
  for (const [file, f] of Object.entries(files)) {
    const lines = scanTags(file, f.source ?? "")
      .filter((t) => ids.has(`${file}\0${t.id}`))
      .map((t) => t.line);
    if (lines.length > 0) out.set(file, new Set(lines));
  }
  return out;
}
