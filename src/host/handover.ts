// Handing a tree to a root caller's session uid. The tree may hold what an earlier session left:
// names that are not UTF-8, links to the host's files, a tree deeper than PATH_MAX. So the walk
// reads names as bytes and reaches every directory by descriptor (dir-fd.ts), and each chown acts
// on the descriptor of the inode it examined: neither the walk nor a chown ever follows a link,
// and no path is ever too long to name.
import { chownSync, closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { planHandover, type OwnedEntry } from "../core/sandbox/handover.ts";
import type { SessionIdentity } from "../core/sandbox/types.ts";
import { bytesOf } from "../core/workspace/bytes.ts";
import { WALK_BOUNDS } from "../core/workspace/inspect.ts";
import { DirChain, O_PATH, at, listNames, splitPath, viaFd } from "./dir-fd.ts";

function entryOf(path: string, st: Stats): OwnedEntry {
  const kind = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : st.isFile() ? "file" : "other";
  return { path, kind, uid: st.uid, gid: st.gid, nlink: st.nlink };
}

/**
 * Every entry of a tree (paths as byte strings), the root first, never following a link. It goes
 * `depth` levels below the root at most (the end-of-session check moves a deeper subtree out
 * whole); what lies deeper keeps its owner, which hands the session nothing.
 */
export function walkOwned(root: string, visit: (e: OwnedEntry) => void, depth: number = WALK_BOUNDS.depth): void {
  const top = bytesOf(root);
  const st = lstatSync(root);
  visit(entryOf(top, st));
  if (!st.isDirectory()) return;
  const chain = new DirChain(root, top);
  try {
    const stack = [{ dir: top, level: 0 }];
    while (stack.length > 0) {
      const { dir, level } = stack.pop()!;
      const fd = chain.fd(dir);
      for (const name of listNames(fd)) {
        const e = entryOf(`${dir}/${name}`, lstatSync(at(fd, name))); // safety: handover-walk-no-follow
        visit(e);
        if (e.kind === "dir" && level < depth) stack.push({ dir: e.path, level: level + 1 });
      }
    }
  } finally {
    chain.close();
  }
}

/** Every entry of a tree, the root first, never following a link. */
export function ownedEntries(root: string): OwnedEntry[] {
  const out: OwnedEntry[] = [];
  walkOwned(root, (e) => out.push(e));
  return out;
}

/** Opens the entry at path (a byte string under chain.root) as O_PATH, never following it: the inode itself. */
function openEntry(root: string, chain: DirChain, path: string): number {
  if (path === chain.root) return openSync(root, O_PATH | constants.O_NOFOLLOW);
  const { dir, name } = splitPath(path);
  return openSync(at(chain.fd(dir), name), O_PATH | constants.O_NOFOLLOW); // safety: handover-chown-no-follow
}

/**
 * Chowns each path of the tree to the identity, on the descriptor of the inode it names (a link is
 * chowned itself, never what it points to). planHandover() judges each again on what the
 * descriptor shows, so an entry swapped since the walk is refused the same way. How many changed.
 */
export function chownEntries(root: string, paths: readonly string[], id: SessionIdentity): number {
  const chain = new DirChain(root, bytesOf(root));
  let n = 0;
  try {
    for (const p of paths) {
      const fd = openEntry(root, chain, p);
      try {
        if (planHandover(id, [entryOf(p, fstatSync(fd))]).length === 0) continue;
        chownSync(viaFd(fd), id.uid, id.gid);
        n++;
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    chain.close();
  }
  return n;
}

/**
 * Gives a tree to the session's identity (a root caller's): every entry not yet its own is
 * chowned. Throws a MosaicError, having changed nothing, when planHandover() refuses.
 */
export function handOver(root: string, id: SessionIdentity): number {
  const theirs: OwnedEntry[] = [];
  walkOwned(root, (e) => {
    if (e.uid !== id.uid || e.gid !== id.gid) theirs.push(e);
  });
  return chownEntries(root, planHandover(id, theirs), id);
}
