// Where a field is in a YAML file: the line of the key or item a path names, so an error can say
// file:line. Reads the parsed Document's node ranges through a LineCounter.
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from "yaml";

/** A path as `formatPath` writes it, back into segments: `model.turns[2].tool_use` → ["model", "turns", 2, "tool_use"]. */
export function parseFieldPath(field: string): Array<string | number> {
  if (field === "(document)") return [];
  const out: Array<string | number> = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

function startOf(node: { range?: [number, number, number] | null } | null | undefined): number | null {
  return node?.range ? node.range[0] : null;
}

/**
 * The 1-based line of the deepest node on `path` that exists: a map key's own line when the path
 * ends at a key (an unknown key is named where it is written), the parent's when a key is missing.
 */
export function lineOf(doc: Document, lc: LineCounter, path: ReadonlyArray<string | number>): number {
  let node: unknown = doc.contents;
  let at = startOf(doc.contents as Node | null) ?? 0;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair === undefined) break;
      at = startOf(pair.key as Node) ?? at;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === "number") {
      const item = node.items[seg] as Node | undefined;
      if (item === undefined) break;
      at = startOf(item) ?? at;
      node = item;
    } else break;
  }
  return lc.linePos(at).line;
}
