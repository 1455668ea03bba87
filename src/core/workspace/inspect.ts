import { isWithin } from "../paths.ts";
import type { Finding } from "./findings.ts";
import { GIT_POINTERS, NOTABLE_FOREIGN, gitDirEntry, type GitDirRole } from "./git-layout.ts";
import type { TreeStat, TreeView } from "./tree-view.ts";

/** Bytes read of a HEAD, commondir or .git file: git reads no more of them either. */
const HEAD_BYTES = 256;
const SETID = 0o6000;

type Task =
  | { t: "tree"; dir: string }
  | { t: "gitdir"; dir: string; role: GitDirRole }
  | { t: "plain"; dir: string }
  | { t: "modules"; dir: string }
  | { t: "worktrees"; dir: string };

type Entry = { name: string; path: string; st: TreeStat };

/** `a/b/../c` → `a/c`, for absolute paths; null when it climbs above the root. */
export function normalisePath(p: string): string | null {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return "/" + out.join("/");
}

/** What git's validate_headref accepts: `ref:` then refs/..., or an object name. */
export function looksLikeHead(text: string): boolean {
  return /^ref:\s*refs\//.test(text) || /^[0-9a-fA-F]{40}/.test(text);
}

/**
 * Everything in a workspace that the host's git would later run or write through, and every
 * setuid or setgid file, as findings (sorted by path). Pure: it reads the tree only through the
 * view, never follows a link, and descends into nothing it has already condemned.
 *
 * The rules, each by design rather than by a list of dangerous names:
 * - the root's .git holds only git's own names (GIT_DIR_ENTRIES), of the kind git makes them;
 * - nothing under any .git is a link or a special file;
 * - commondir and gitdir appear only where git puts them, saying what git writes;
 * - no .git below the root, but a submodule's pointer file into the root's .git/modules;
 * - no directory (the root included) is one git would discover as a repository;
 * - no regular file is setuid or setgid.
 */
export function inspectWorkspace(root: string, view: TreeView): Finding[] {
  const out: Finding[] = [];
  const top = view.lstat(root);
  if (top === null || top.kind !== "dir") return out;
  const modulesDir = `${root}/.git/modules`;
  const tasks: Task[] = [{ t: "tree", dir: root }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    const names = view.readdir(task.dir);
    if (names === null) {
      out.push({ kind: "unreadable", path: task.dir, detail: "cannot be listed" }); // safety: ws-unreadable
      continue;
    }
    const entries: Entry[] = [];
    for (const name of names) {
      const path = `${task.dir}/${name}`;
      const st = view.lstat(path);
      if (st === null) continue;
      if (st.kind === "unreadable") {
        out.push({ kind: "unreadable", path, detail: "cannot be examined" });
        continue;
      }
      entries.push({ name, path, st });
    }
    if (task.t === "tree" || task.t === "plain") {
      const head = discoverableHead(entries, view);
      if (head !== null)
        out.push({
          kind: "discoverable-repository",
          path: head,
          detail: `${task.dir} has a HEAD git accepts beside objects/ and refs/ or a commondir`,
        }); // safety: ws-discoverable
    }
    for (const e of entries) {
      if (e.st.kind === "file" && (e.st.mode & SETID) !== 0)
        out.push({ kind: "setid-file", path: e.path, detail: `mode ${e.st.mode.toString(8)}`, mode: e.st.mode }); // safety: ws-setid
      switch (task.t) {
        case "tree":
          treeEntry(task.dir, e);
          break;
        case "plain":
          if (e.st.kind === "link" || e.st.kind === "other")
            out.push({ kind: "git-not-plain", path: e.path, detail: `a ${e.st.kind} under .git` }); // safety: ws-git-link
          else if (e.name === ".git")
            out.push({ kind: "nested-repository", path: e.path, detail: "a .git inside a git directory" });
          else if (e.st.kind === "dir") tasks.push({ t: "plain", dir: e.path });
          break;
        case "gitdir":
          gitDirEntryCheck(task.role, e);
          break;
        case "modules":
          // A submodule's name may hold slashes: a directory without a HEAD is one more level of it.
          if (containerEntry(e, "submodules'"))
            tasks.push(
              view.lstat(`${e.path}/HEAD`)?.kind === "file"
                ? { t: "gitdir", dir: e.path, role: "module" }
                : { t: "modules", dir: e.path },
            );
          break;
        case "worktrees":
          if (containerEntry(e, "linked worktrees'")) tasks.push({ t: "gitdir", dir: e.path, role: "worktree" });
          break;
      }
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.kind < b.kind ? -1 : 1));

  function treeEntry(dir: string, e: Entry): void {
    if (e.name !== ".git") {
      if (e.st.kind === "dir") tasks.push({ t: "tree", dir: e.path });
      return;
    }
    if (dir === root) {
      // The repository itself; a file is a linked worktree's or a submodule's pointer, read-only to the session.
      if (e.st.kind === "dir") tasks.push({ t: "gitdir", dir: e.path, role: "main" });
      else if (e.st.kind !== "file")
        out.push({ kind: "git-not-plain", path: e.path, detail: `the workspace's .git is a ${e.st.kind}` });
      return;
    }
    if (isSubmodulePointer(dir, e)) return;
    out.push({
      kind: "nested-repository",
      path: e.path,
      detail:
        e.st.kind === "file"
          ? "a .git file that points elsewhere than the root's .git/modules"
          : `a .git ${e.st.kind} below the root`,
    }); // safety: ws-nested
  }

  /** In .git/modules or .git/worktrees only directories, each a git directory (or a level of a name): true for one. */
  function containerEntry(e: Entry, whose: string): boolean {
    if (e.st.kind === "dir") return true;
    if (e.st.kind === "file")
      out.push({ kind: "git-foreign-name", path: e.path, detail: `a file among ${whose} git directories` }); // safety: ws-container-foreign
    else out.push({ kind: "git-not-plain", path: e.path, detail: `a ${e.st.kind} among ${whose} git directories` }); // safety: ws-container-link
    return false;
  }

  function gitDirEntryCheck(role: GitDirRole, e: Entry): void {
    if (e.st.kind === "link" || e.st.kind === "other") {
      out.push({ kind: "git-not-plain", path: e.path, detail: `a ${e.st.kind} under .git` }); // safety: ws-git-link-top
      return;
    }
    const pointer = GIT_POINTERS[e.name];
    if (pointer !== undefined) {
      if (role !== pointer.role || e.st.kind !== "file") {
        out.push({
          kind: "git-pointer",
          path: e.path,
          detail: `git puts ${e.name} only in a linked worktree's git directory (.git/worktrees/<name>/)`,
        }); // safety: ws-pointer-place
        return;
      }
      const says = (view.head(e.path, HEAD_BYTES) ?? "").trim();
      if (pointer.says !== null && says !== pointer.says)
        out.push({
          kind: "git-pointer",
          path: e.path,
          detail: `says ${JSON.stringify(says)}; git writes ${pointer.says}`,
        }); // safety: ws-pointer-says
      return;
    }
    const rule = gitDirEntry(e.name, role);
    if (rule === null || rule.kind !== e.st.kind) {
      const why =
        NOTABLE_FOREIGN[e.name] ??
        (rule === null
          ? `not a name git makes in a ${role} git directory`
          : `a ${e.st.kind} where git keeps a ${rule.kind}`);
      out.push({ kind: "git-foreign-name", path: e.path, detail: why }); // safety: ws-allowlist
      return;
    }
    if (e.st.kind === "dir") tasks.push({ t: rule.inside ?? "plain", dir: e.path } as Task);
  }

  /** A regular file `gitdir: <path>` whose path lies in the root's .git/modules: git's own submodule pointer. */
  function isSubmodulePointer(dir: string, e: Entry): boolean {
    if (e.st.kind !== "file") return false;
    const text = view.head(e.path, HEAD_BYTES);
    if (text === null || !text.startsWith("gitdir: ")) return false;
    const rel = text.slice("gitdir: ".length).replace(/\s+$/, "");
    if (rel === "" || rel.includes("\n")) return false;
    const target = normalisePath(rel.startsWith("/") ? rel : `${dir}/${rel}`);
    return target !== null && target !== modulesDir && isWithin(target, modulesDir); // safety: ws-submodule-pointer
  }
}

/** The HEAD that makes a directory one git would discover (is_git_directory), or null. */
function discoverableHead(entries: readonly Entry[], view: TreeView): string | null {
  const by = new Map(entries.map((e) => [e.name, e]));
  const head = by.get("HEAD");
  if (head === undefined || (head.st.kind !== "file" && head.st.kind !== "link")) return null;
  // A link git accepts when it points into refs/; any link is taken as one, to be safe.
  if (head.st.kind === "file") {
    const text = view.head(head.path, HEAD_BYTES);
    if (text !== null && !looksLikeHead(text)) return null;
  }
  return (by.has("objects") && by.has("refs")) || by.has("commondir") ? head.path : null;
}
