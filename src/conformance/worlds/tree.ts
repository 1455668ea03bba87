import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { FsEntry, FsView } from "../../core/gate/fs-view.ts";
import type { TreeStat, TreeView } from "../../core/workspace/tree-view.ts";

/**
 * A declarative filesystem tree: absolute paths (from the tree's own root) to a directory, a
 * file, or a link with its target as written. Parent directories are implied. An absolute link
 * target is read from the tree's root too, so the same tree means the same thing in memory and
 * laid out under a scratch directory.
 */
export type TreeEntry = "dir" | "file" | { link: string };
export type Tree = Readonly<Record<string, TreeEntry>>;

/** A workspace tree for the end-of-session check: also files with their text and mode, and fifos. */
export type WorkspaceTreeEntry = TreeEntry | "fifo" | { file: string; mode?: number };
export type WorkspaceTree = Readonly<Record<string, WorkspaceTreeEntry>>;

/** Linux's NAME_MAX and PATH_MAX: a longer name, or a path of PATH_MAX bytes or more, is ENAMETOOLONG. */
export const NAME_MAX = 255;
export const PATH_MAX = 4096;

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Why a tree cannot be laid out (a name under a file or a link, a relative key, a name too long), or null. */
export function treeProblem(tree: WorkspaceTree): string | null {
  const keys = Object.keys(tree);
  for (const k of keys) {
    if (
      !k.startsWith("/") ||
      k === "/" ||
      k.endsWith("/") ||
      k
        .split("/")
        .slice(1)
        .some((s) => s === "" || s === "." || s === "..")
    )
      return `${JSON.stringify(k)}: not a normal absolute path`;
    if (k.split("/").some((s) => bytes(s) > NAME_MAX))
      return `${JSON.stringify(k)}: a name longer than ${NAME_MAX} bytes cannot exist`;
    for (const other of keys) {
      if (other !== k && other.startsWith(k + "/") && tree[k] !== "dir")
        return `${JSON.stringify(other)} lies under a ${typeof tree[k] === "string" ? tree[k] : "link" in (tree[k] as object) ? "link" : "file"}`;
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
  for (const [k, e] of Object.entries(tree))
    entries.set(
      root + k,
      e === "dir"
        ? { kind: "dir" }
        : e === "file"
          ? { kind: "file" }
          : { kind: "link", target: rebaseTarget(e.link, root) },
    );
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

/** Writes a workspace tree under root: as layOutTree, plus files with their text and mode, and fifos. */
export function layOutWorkspaceTree(tree: WorkspaceTree, root: string): void {
  const problem = treeProblem(tree);
  if (problem !== null) throw new Error(`tree: ${problem}`);
  for (const [k, e] of Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = root + k;
    mkdirSync(dirname(p), { recursive: true });
    if (e === "dir") mkdirSync(p, { recursive: true });
    else if (e === "file") writeFileSync(p, k);
    else if (e === "fifo") {
      const r = spawnSync("mkfifo", [p], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
    } else if ("link" in e) symlinkSync(rebaseTarget(e.link, root), p);
    else {
      writeFileSync(p, e.file);
      if (e.mode !== undefined) chmodSync(p, e.mode);
    }
  }
}

/** A file's text as laid out: its own text, or its path for a plain "file"; null for anything else. */
function textOf(tree: WorkspaceTree, k: string): string | null {
  const e = tree[k];
  if (e === "file") return k;
  return typeof e === "object" && "file" in e ? e.file : null;
}

/**
 * The tree as the end-of-session check's TreeView, mounted at root: kinds and modes as
 * layOutWorkspaceTree() makes them (files 0644, directories 0755, unless a mode is given),
 * directory listings and file texts. Missing parents are directories, as they are on disk.
 */
export function treeView(tree: WorkspaceTree, root: string): TreeView {
  const problem = treeProblem(tree);
  if (problem !== null) throw new Error(`tree: ${problem}`);
  const stats = new Map<string, TreeStat>([[root, { kind: "dir", mode: 0o755 }]]);
  const children = new Map<string, Set<string>>();
  for (const [k, e] of Object.entries(tree)) {
    stats.set(
      root + k,
      e === "dir"
        ? { kind: "dir", mode: 0o755 }
        : e === "fifo"
          ? { kind: "other", mode: 0o644 }
          : e === "file"
            ? { kind: "file", mode: 0o644 }
            : "link" in e
              ? { kind: "link", mode: 0o777 }
              : { kind: "file", mode: e.mode ?? 0o644 },
    );
    for (let c = k; c !== "/"; c = dirname(c)) {
      const parent = dirname(c);
      const at = parent === "/" ? root : root + parent;
      if (!children.has(at)) children.set(at, new Set());
      children.get(at)!.add(c.slice(parent === "/" ? 1 : parent.length + 1));
      if (!stats.has(at)) stats.set(at, { kind: "dir", mode: 0o755 });
    }
  }
  return {
    lstat: (p) => stats.get(p) ?? null,
    readdir: (p) => (stats.get(p)?.kind === "dir" ? [...(children.get(p) ?? [])].sort() : null),
    head: (p, bytes) => {
      if (!p.startsWith(root + "/")) return null;
      const text = textOf(tree, p.slice(root.length));
      return text === null ? null : Buffer.from(text, "utf8").subarray(0, bytes).toString("utf8");
    },
  };
}
