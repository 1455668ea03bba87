/**
 * What may be in a repository's git directory: git's own names (gitrepository-layout(5) and the
 * state files its commands leave), each with the kind git makes and what lies inside. Everything
 * else is foreign. An allowlist, because git reads more names than any list of dangerous ones
 * would hold: commondir, an interrupted rebase's todo list, a link git writes through.
 */
export type GitDirRole = "main" | "module" | "worktree";

/** How the inside of an allowed directory is checked. */
export type Inside =
  /** Only plain files and directories, any names: data git reads and writes, never runs. */
  | "plain"
  /** Submodule git directories, under their names (which may hold slashes). */
  | "modules"
  /** Linked worktrees' git directories, one per name. */
  | "worktrees";

export interface GitDirEntry {
  names: readonly string[] | RegExp;
  kind: "file" | "dir";
  roles: readonly GitDirRole[];
  inside?: Inside;
  why: string;
}

const ALL: readonly GitDirRole[] = ["main", "module", "worktree"];
const SHARED: readonly GitDirRole[] = ["main", "module"];

export const GIT_DIR_ENTRIES: readonly GitDirEntry[] = [
  { names: ["HEAD"], kind: "file", roles: ALL, why: "the current branch or commit" },
  {
    names: ["config"],
    kind: "file",
    roles: SHARED,
    why: "the repository's config: read-only to the session (protected paths), so what it says is the host's",
  },
  {
    names: ["config.worktree"],
    kind: "file",
    roles: ALL,
    why: "per-worktree config, as git config --worktree writes it; read-only to the session where it exists, and admitted only as git writes it where the session could have made it (git-config.ts)",
  },
  {
    names: ["index", "packed-refs", "shallow", "description", "COMMIT_EDITMSG", "FETCH_HEAD", "ORIG_HEAD"],
    kind: "file",
    roles: ALL,
    why: "data git reads and writes; nothing in it runs",
  },
  {
    names: /^sharedindex\.[0-9a-f]{40}([0-9a-f]{24})?$/,
    kind: "file",
    roles: ALL,
    why: "a split index's shared part: data",
  },
  {
    names: [
      "MERGE_HEAD",
      "MERGE_MSG",
      "MERGE_MODE",
      "MERGE_RR",
      "AUTO_MERGE",
      "CHERRY_PICK_HEAD",
      "REVERT_HEAD",
      "REBASE_HEAD",
      "SQUASH_MSG",
      "TAG_EDITMSG",
      "NOTES_MERGE_PARTIAL",
      "NOTES_MERGE_REF",
      "BISECT_LOG",
      "BISECT_START",
      "BISECT_TERMS",
      "BISECT_EXPECTED_REV",
      "BISECT_ANCESTORS_OK",
      "BISECT_NAMES",
      "BISECT_HEAD",
      "BISECT_FIRST_PARENT",
      "gc.pid",
      "gc.log",
    ],
    kind: "file",
    roles: ALL,
    why: "an operation's state: object names, messages and logs git reads back and prints, never runs",
  },
  { names: ["objects"], kind: "dir", roles: SHARED, inside: "plain", why: "the object store: data" },
  {
    names: ["refs", "logs"],
    kind: "dir",
    roles: ALL,
    inside: "plain",
    why: "refs and reflogs: git writes through what it finds here, so nothing but plain files and directories",
  },
  {
    names: ["hooks", "info"],
    kind: "dir",
    roles: SHARED,
    inside: "plain",
    why: "hooks and info/: read-only to the session (protected paths), so what they hold is the host's",
  },
  {
    names: ["branches", "remotes", "rr-cache", "lfs"],
    kind: "dir",
    roles: SHARED,
    inside: "plain",
    why: "legacy remotes, rerere's records and git-lfs's object store: data",
  },
  {
    names: ["modules"],
    kind: "dir",
    roles: SHARED,
    inside: "modules",
    why: "submodules' git directories: read-only to the session, each checked as a git directory",
  },
  {
    names: ["worktrees"],
    kind: "dir",
    roles: SHARED,
    inside: "worktrees",
    why: "linked worktrees' git directories: read-only to the session, each checked as a git directory",
  },
  { names: ["locked"], kind: "file", roles: ["worktree"], why: "why a linked worktree is locked: text" },
  {
    names: ["gitdir"],
    kind: "file",
    roles: ["worktree"],
    why: "the path of the linked worktree's .git file, as git worktree add writes it",
  },
];

/** The pointers git follows to another directory, and the one place it puts each. */
export const GIT_POINTERS: Readonly<Record<string, { role: GitDirRole; says: string | null; why: string }>> = {
  commondir: {
    role: "worktree",
    says: "../..",
    why: "git worktree add writes ../.., the main git directory; anything else hands config and hooks to another directory",
  },
  gitdir: {
    role: "worktree",
    says: null,
    why: "git worktree add writes the worktree's .git file's path; git reads it back only to repair and prune",
  },
};

/** Foreign names worth a word of their own in a report. */
export const NOTABLE_FOREIGN: Readonly<Record<string, string>> = {
  "rebase-merge": "an interrupted rebase's state: its todo list's exec lines run on the host's git rebase --continue",
  "rebase-apply": "an interrupted rebase or am's state: the host's git resumes it on --continue",
  sequencer: "an interrupted cherry-pick or revert's todo list, resumed on --continue",
};

/** The allowlist row for a name in a git directory of some role, or null: foreign. */
export function gitDirEntry(name: string, role: GitDirRole): GitDirEntry | null {
  for (const e of GIT_DIR_ENTRIES) {
    if (!e.roles.includes(role)) continue;
    if (Array.isArray(e.names) ? e.names.includes(name) : (e.names as RegExp).test(name)) return e;
  }
  return null;
}
