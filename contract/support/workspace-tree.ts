// Declarative workspace trees for the end-of-session check, in memory and on disk, with names as
// bytes: a tree's keys are byte strings (src/core/workspace/bytes.ts), so "/bad\xff" is the three
// bytes 62 61 64 ff and no UTF-8. In memory they are the worlds' treeView with a file search
// added; on disk every name is laid out as exactly its bytes.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import type { TreeView, WorkspaceView } from "../../src/core/workspace/tree-view.ts";
import { type WorkspaceTree, rebaseTarget, treeProblem, treeView } from "../../src/conformance/worlds/tree.ts";

/** A TreeView that can also search a file (what WorkspaceView adds), through its head. */
export function withHolds(view: TreeView): WorkspaceView {
  return { ...view, holds: (p, needle) => view.head(p, 1 << 20)?.includes(needle) ?? null };
}

/** The tree as the check's view, mounted at root. */
export function caseView(tree: WorkspaceTree, root: string): WorkspaceView {
  return withHolds(treeView(tree, root));
}

const raw = (bytes: string) => Buffer.from(bytes, "latin1");
const parentOf = (p: string) => p.slice(0, p.lastIndexOf("/"));

/** Writes the tree under root (a host path, ASCII): every key's bytes as they are; files hold their path unless given a text. */
export function layOutBytes(tree: WorkspaceTree, root: string): void {
  const problem = treeProblem(tree);
  if (problem !== null) throw new Error(`tree: ${problem}`);
  let fifo = 0;
  for (const [k, e] of Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = raw(root + k);
    mkdirSync(raw(root + parentOf(k)), { recursive: true });
    if (e === "dir") mkdirSync(p, { recursive: true });
    else if (e === "file") writeFileSync(p, raw(k));
    else if (e === "fifo") {
      // mkfifo takes its path as text: make it under an ASCII name, then rename it to its bytes.
      const tmp = `${root}/.fifo-${fifo++}`;
      const r = spawnSync("mkfifo", [tmp], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`mkfifo ${tmp}: ${r.stderr}`);
      renameSync(tmp, p);
    } else if ("link" in e) symlinkSync(raw(rebaseTarget(e.link, root)), p);
    else {
      writeFileSync(p, raw(e.file));
      if (e.mode !== undefined) chmodSync(p, e.mode);
    }
  }
}
