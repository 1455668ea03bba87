import { isWithin } from "../paths.ts";
import { shownPath } from "./bytes.ts";
import type { Finding, FindingKind } from "./findings.ts";
import { WORKTREE_CONFIG_BYTES, worktreeConfigProblem } from "./git-config.ts";
import { GIT_POINTERS, NOTABLE_FOREIGN, gitDirEntry, type GitDirRole } from "./git-layout.ts";
import type { TreeStat, WorkspaceView } from "./tree-view.ts";

/** Bytes read of a HEAD, commondir or .git file: git reads no more of them either. */
const HEAD_BYTES = 256;
const SETID = 0o6000;
/** What a packed-refs line naming a replace ref holds: a ref name follows the object name and one space. */
const PACKED_REPLACE = " refs/replace/";

/**
 * How far the walk goes, so its work, its memory and its report are bounded whatever a session
 * leaves: past `depth` levels or `pathBytes` bytes of relative path a directory is moved whole,
 * unexamined (too-deep); past `entries` entries or `findings` findings the walk stops and the
 * workspace is unsafe (unexamined). A checkout with its node_modules has some 40,000 entries, a
 * deep node_modules path some 30 levels and 300 bytes.
 */
export interface WalkBounds {
  entries: number;
  findings: number;
  depth: number;
  pathBytes: number;
}

export const WALK_BOUNDS: Readonly<WalkBounds> = {
  /** 25 times a checkout with its node_modules: about 25 s of walk here, once, at a session's end. */
  entries: 1_000_000,
  /** Each finding holds its path until the remedies: 50,000 paths of at most pathBytes each. */
  findings: 50_000,
  /** The host holds a descriptor per level of the directory it reads; git's own core.maxTreeDepth is 2048. */
  depth: 256,
  /**
   * The walk reads by path: a directory this far below the workspace still has entries (a name is
   * at most 255 bytes) whose paths are under PATH_MAX (4096) for a workspace up to 800 bytes deep,
   * and the founder's path-based tools can name everything left.
   */
  pathBytes: 3_000,
};

type Task =
  | { t: "tree"; dir: string; depth: number }
  | { t: "gitdir"; dir: string; depth: number; role: GitDirRole }
  | { t: "plain"; dir: string; depth: number; refs?: true }
  | { t: "modules"; dir: string; depth: number }
  | { t: "worktrees"; dir: string; depth: number };

type Entry = { name: string; path: string; st: TreeStat };

interface Walk {
  root: string;
  view: WorkspaceView;
  bounds: Readonly<WalkBounds>;
  modulesDir: string;
  out: Finding[];
  tasks: Task[];
  entries: number;
  stopped: boolean;
}

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
 * Everything in a workspace that the host's git would later run or write through, every setuid or
 * setgid file and every special file, as findings (sorted by path). Pure: it reads the tree only
 * through the view, never follows a link, descends into nothing it has already condemned, and
 * stops at its bounds (WALK_BOUNDS). Names are bytes (bytes.ts): every name is judged.
 *
 * The rules, each by design rather than by a list of dangerous names:
 * - the root's .git holds only git's own names (GIT_DIR_ENTRIES), of the kind git makes them;
 * - nothing under any .git is a link or a special file, and nothing in the work tree is special;
 * - commondir and gitdir appear only where git puts them, saying what git writes;
 * - no .git below the root, but a submodule's pointer file into the root's .git/modules;
 * - no directory (the root included) is one git would discover as a repository;
 * - no replace ref, loose or packed: git would show another object than the one stored;
 * - a config.worktree says only what git writes there (git-config.ts);
 * - no regular file is setuid or setgid.
 */
export function inspectWorkspace(
  root: string,
  view: WorkspaceView,
  bounds: Readonly<WalkBounds> = WALK_BOUNDS,
): Finding[] {
  const w: Walk = {
    root,
    view,
    bounds,
    modulesDir: `${root}/.git/modules`,
    out: [],
    tasks: [],
    entries: 0,
    stopped: false,
  };
  const top = view.lstat(root);
  if (top === null || (top.kind !== "dir" && top.kind !== "unreadable")) return [];
  if (top.kind === "unreadable") return [{ kind: "unreadable", path: root, detail: "cannot be examined" }];
  w.tasks.push({ t: "tree", dir: root, depth: 0 });
  while (w.tasks.length > 0 && !w.stopped) runTask(w, w.tasks.pop()!);
  return w.out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.kind < b.kind ? -1 : 1));
}

function add(w: Walk, kind: FindingKind, path: string, detail: string, mode?: number): void {
  w.out.push(mode === undefined ? { kind, path, detail } : { kind, path, detail, mode });
  if (w.out.length >= w.bounds.findings) stop(w, `${w.bounds.findings} findings`); // safety: ws-bound-findings
}

/** The walk ends here: the workspace is unsafe, and what was found so far is still remedied. */
function stop(w: Walk, why: string): void {
  if (w.stopped) return;
  w.stopped = true;
  w.out.push({ kind: "unexamined", path: w.root, detail: `the walk stopped at ${why}: the rest was not examined` });
}

/** Queues a directory to walk, or condemns it whole when it lies past the depth or path-length bound. */
function push(w: Walk, task: Task): void {
  const rel = task.dir.length - w.root.length - 1;
  if (task.depth > w.bounds.depth || rel > w.bounds.pathBytes) {
    add(
      w,
      "too-deep",
      task.dir,
      `more than ${w.bounds.depth} levels or ${w.bounds.pathBytes} bytes below the workspace`,
    ); // safety: ws-too-deep
    return;
  }
  w.tasks.push(task);
}

function runTask(w: Walk, task: Task): void {
  const names = w.view.readdir(task.dir, w.bounds.entries - w.entries + 1);
  if (names === null) {
    add(w, "unreadable", task.dir, "cannot be listed"); // safety: ws-unreadable
    return;
  }
  w.entries += names.length;
  if (w.entries > w.bounds.entries) {
    stop(w, `${w.bounds.entries} entries`); // safety: ws-bound-entries
    return;
  }
  const entries: Entry[] = [];
  for (const name of names) {
    const path = `${task.dir}/${name}`;
    const st = w.view.lstat(path);
    if (st === null) continue;
    if (st.kind === "unreadable") add(w, "unreadable", path, "cannot be examined");
    else entries.push({ name, path, st });
  }
  if (task.t === "tree" || task.t === "plain") {
    const head = discoverableHead(entries, w.view);
    if (head !== null)
      add(
        w,
        "discoverable-repository",
        head,
        `${shownPath(task.dir)} has a HEAD git accepts beside objects/ and refs/ or a commondir`,
      ); // safety: ws-discoverable
  }
  for (const e of entries) {
    if (w.stopped) return;
    judge(w, task, e);
  }
}

function judge(w: Walk, task: Task, e: Entry): void {
  if (e.st.kind === "file" && (e.st.mode & SETID) !== 0)
    add(w, "setid-file", e.path, `mode ${e.st.mode.toString(8)}`, e.st.mode); // safety: ws-setid
  switch (task.t) {
    case "tree":
      return treeEntry(w, task, e);
    case "plain":
      return plainEntry(w, task, e);
    case "gitdir":
      return gitDirEntryCheck(w, task, e);
    case "modules":
      // A submodule's name may hold slashes: a directory without a HEAD is one more level of it.
      if (containerEntry(w, e, "submodules'"))
        push(
          w,
          w.view.lstat(`${e.path}/HEAD`)?.kind === "file"
            ? { t: "gitdir", dir: e.path, depth: task.depth + 1, role: "module" }
            : { t: "modules", dir: e.path, depth: task.depth + 1 },
        );
      return;
    case "worktrees":
      if (containerEntry(w, e, "linked worktrees'"))
        push(w, { t: "gitdir", dir: e.path, depth: task.depth + 1, role: "worktree" });
      return;
  }
}

function treeEntry(w: Walk, task: Task, e: Entry): void {
  if (e.name !== ".git") {
    if (e.st.kind === "dir") push(w, { t: "tree", dir: e.path, depth: task.depth + 1 });
    else if (e.st.kind === "other") add(w, "special-file", e.path, "a fifo, socket or device in the work tree"); // safety: ws-special
    return;
  }
  if (task.dir === w.root) {
    // The repository itself; a file is a linked worktree's or a submodule's pointer, read-only to the session.
    if (e.st.kind === "dir") push(w, { t: "gitdir", dir: e.path, depth: task.depth + 1, role: "main" });
    else if (e.st.kind !== "file") add(w, "git-not-plain", e.path, `the workspace's .git is a ${e.st.kind}`);
    return;
  }
  if (isSubmodulePointer(w, task.dir, e)) return;
  add(
    w,
    "nested-repository",
    e.path,
    e.st.kind === "file"
      ? "a .git file that points elsewhere than the root's .git/modules"
      : `a .git ${e.st.kind} below the root`,
  ); // safety: ws-nested
}

function plainEntry(w: Walk, task: Extract<Task, { t: "plain" }>, e: Entry): void {
  if (e.st.kind === "link" || e.st.kind === "other")
    add(w, "git-not-plain", e.path, `a ${e.st.kind} under .git`); // safety: ws-git-link
  else if (e.name === ".git") add(w, "nested-repository", e.path, "a .git inside a git directory");
  else if (task.refs === true && e.name === "replace")
    add(w, "replace-ref", e.path, "replace refs: git shows another object in place of each one named here"); // safety: ws-replace-loose
  else if (e.st.kind === "dir") push(w, { t: "plain", dir: e.path, depth: task.depth + 1 });
}

/** In .git/modules or .git/worktrees only directories, each a git directory (or a level of a name): true for one. */
function containerEntry(w: Walk, e: Entry, whose: string): boolean {
  if (e.st.kind === "dir") return true;
  if (e.st.kind === "file")
    add(w, "git-foreign-name", e.path, `a file among ${whose} git directories`); // safety: ws-container-foreign
  else add(w, "git-not-plain", e.path, `a ${e.st.kind} among ${whose} git directories`); // safety: ws-container-link
  return false;
}

function gitDirEntryCheck(w: Walk, task: Extract<Task, { t: "gitdir" }>, e: Entry): void {
  if (e.st.kind === "link" || e.st.kind === "other") {
    add(w, "git-not-plain", e.path, `a ${e.st.kind} under .git`); // safety: ws-git-link-top
    return;
  }
  const pointer = GIT_POINTERS[e.name];
  if (pointer !== undefined) return pointerCheck(w, task.role, e, pointer);
  const rule = gitDirEntry(e.name, task.role);
  if (rule === null || rule.kind !== e.st.kind) {
    const why =
      NOTABLE_FOREIGN[e.name] ??
      (rule === null
        ? `not a name git makes in a ${task.role} git directory`
        : `a ${e.st.kind} where git keeps a ${rule.kind}`);
    add(w, "git-foreign-name", e.path, why); // safety: ws-allowlist
    return;
  }
  if (e.name === "config.worktree") {
    const why = worktreeConfigProblem(w.view.head(e.path, WORKTREE_CONFIG_BYTES));
    if (why !== null) add(w, "worktree-config", e.path, why); // safety: ws-worktree-config
  }
  if (e.name === "packed-refs" && w.view.holds(e.path, PACKED_REPLACE) !== false)
    add(w, "replace-ref", e.path, "packed-refs names a replace ref (refs/replace/), or cannot be read to tell"); // safety: ws-replace-packed
  if (e.st.kind === "dir")
    push(w, {
      t: rule.inside ?? "plain",
      dir: e.path,
      depth: task.depth + 1,
      ...(e.name === "refs" ? { refs: true } : {}),
    } as Task);
}

function pointerCheck(w: Walk, role: GitDirRole, e: Entry, pointer: (typeof GIT_POINTERS)[string]): void {
  if (role !== pointer.role || e.st.kind !== "file") {
    add(
      w,
      "git-pointer",
      e.path,
      `git puts ${e.name} only in a linked worktree's git directory (.git/worktrees/<name>/)`,
    ); // safety: ws-pointer-place
    return;
  }
  const says = (w.view.head(e.path, HEAD_BYTES) ?? "").trim();
  if (pointer.says !== null && says !== pointer.says)
    add(w, "git-pointer", e.path, `says ${JSON.stringify(shownPath(says))}; git writes ${pointer.says}`); // safety: ws-pointer-says
}

/** A regular file `gitdir: <path>` whose path lies in the root's .git/modules: git's own submodule pointer. */
function isSubmodulePointer(w: Walk, dir: string, e: Entry): boolean {
  if (e.st.kind !== "file") return false;
  const text = w.view.head(e.path, HEAD_BYTES);
  if (text === null || !text.startsWith("gitdir: ")) return false;
  const rel = text.slice("gitdir: ".length).replace(/\s+$/, "");
  if (rel === "" || rel.includes("\n")) return false;
  const target = normalisePath(rel.startsWith("/") ? rel : `${dir}/${rel}`);
  return target !== null && target !== w.modulesDir && isWithin(target, w.modulesDir); // safety: ws-submodule-pointer
}

/** The HEAD that makes a directory one git would discover (is_git_directory), or null. */
function discoverableHead(entries: readonly Entry[], view: WorkspaceView): string | null {
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
