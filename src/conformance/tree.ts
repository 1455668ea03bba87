import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { FsEntry, FsView } from "../core/gate/fs-view.ts";

/**
 * A declarative filesystem tree: absolute paths (from the tree's own root) to a directory, a
 * file, or a link with its target as written. Parent directories are implied. An absolute link
 * target is read from the tree's root too, so the same tree means the same thing in memory and
 * laid out under a scratch directory.
 */
export type TreeEntry = "dir" | "file" | { link: string };
export type Tree = Readonly<Record<string, TreeEntry>>;

/** Linux's NAME_MAX and PATH_MAX: a longer name, or a path of PATH_MAX bytes or more, is ENAMETOOLONG. */
export const NAME_MAX = 255;
export const PATH_MAX = 4096;

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Why a tree cannot be laid out (a name under a file or a link, a relative key, a name too long), or null. */
export function treeProblem(tree: Tree): string | null {
  const keys = Object.keys(tree);
  for (const k of keys) {
    if (!k.startsWith("/") || k === "/" || k.endsWith("/") || k.split("/").slice(1).some((s) => s === "" || s === "." || s === ".."))
      return `${JSON.stringify(k)}: not a normal absolute path`;
    if (k.split("/").some((s) => bytes(s) > NAME_MAX)) return `${JSON.stringify(k)}: a name longer than ${NAME_MAX} bytes cannot exist`;
    for (const other of keys) {
      if (other !== k && other.startsWith(k + "/") && tree[k] !== "dir") return `${JSON.stringify(other)} lies under a ${typeof tree[k] === "string" ? tree[k] : "link"}`;
    }
  }
  return null;
}

/** Rebases an absolute link target under the root the tree is mounted at ("" for "/"). */
export function rebaseTarget(target: string, root: string): string {
  return target.startsWith("/") ? root + target : target;
}

/**
 * The tree as an FsView, mounted at root (an absolute path, or "" for "/"). The root and its
 * ancestors are directories; anything outside the tree is missing. Names and paths past the
 * kernel's limits answer as lstat(2) does, so memory and disk agree: a path of PATH_MAX bytes or
 * more, or a name over NAME_MAX bytes whose parent exists, cannot be checked (ENAMETOOLONG).
 * It answers as the kernel would for the paths the gate asks: every name but the last a directory.
 */
export function memoryView(tree: Tree, root = ""): FsView {
  const problem = treeProblem(tree);
  if (problem !== null) throw new Error(`tree: ${problem}`);
  const entries = new Map<string, FsEntry>();
  for (const k of Object.keys(tree)) {
    let d = dirname(k);
    while (d !== "/" && !entries.has(root + d)) {
      entries.set(root + d, { kind: "dir" });
      d = dirname(d);
    }
  }
  for (const [k, e] of Object.entries(tree)) entries.set(root + k, e === "dir" ? { kind: "dir" } : e === "file" ? { kind: "file" } : { kind: "link", target: rebaseTarget(e.link, root) });
  const MISSING: FsEntry = { kind: "missing" };
  const DIR: FsEntry = { kind: "dir" };
  const TOO_LONG: FsEntry = { kind: "unreadable", why: "ENAMETOOLONG" };
  const present = (p: string) => entries.has(p) || p === "" || p === root || root.startsWith(p + "/");
  return {
    lstat(path) {
      if (bytes(path) >= PATH_MAX) return TOO_LONG; // safety: memory-view-no-path-max
      const hit = entries.get(path);
      if (hit !== undefined) return hit;
      if (path === "/" || path === root || root.startsWith(path + "/")) return DIR;
      // The kernel walks the names in order: a missing one ends the walk, a too-long one fails it.
      let prefix = "";
      for (const name of path.split("/").slice(1)) {
        if (name.length * 3 > NAME_MAX && bytes(name) > NAME_MAX) return TOO_LONG; // safety: memory-view-no-name-max
        prefix += "/" + name;
        if (!present(prefix)) return MISSING;
      }
      return MISSING;
    },
  };
}

/** Writes the tree under root (which must exist and be empty). Files hold their own path. */
export function layOutTree(tree: Tree, root: string): void {
  const problem = treeProblem(tree);
  if (problem !== null) throw new Error(`tree: ${problem}`);
  for (const [k, e] of Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = root + k;
    mkdirSync(dirname(p), { recursive: true });
    if (e === "dir") mkdirSync(p, { recursive: true });
    else if (e === "file") writeFileSync(p, k);
    else symlinkSync(rebaseTarget(e.link, root), p);
  }
}
