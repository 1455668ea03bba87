import { lchownSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { planHandover, type OwnedEntry } from "../core/sandbox/handover.ts";
import type { SessionIdentity } from "../core/sandbox/types.ts";

/** Every entry of a tree, the root first, never following a link. */
export function ownedEntries(root: string): OwnedEntry[] {
  const out: OwnedEntry[] = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    const kind = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : st.isFile() ? "file" : "other";
    out.push({ path: p, kind, uid: st.uid, gid: st.gid, nlink: st.nlink });
    if (kind === "dir") for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(root);
  return out;
}

/**
 * Gives a tree to the session's identity (a root caller's): every entry not yet its own is
 * lchown()ed. Throws a MosaicError, having changed nothing, when planHandover() refuses.
 */
export function handOver(root: string, id: SessionIdentity): number {
  const todo = planHandover(id, ownedEntries(root));
  for (const p of todo) lchownSync(p, id.uid, id.gid);
  return todo.length;
}
