/**
 * What the end-of-session check finds in a workspace, each with what the host does about it and
 * why. A finding is something the host's own git (or any local user) would later run or write
 * through; the remedy leaves nothing of it where the founder's next shell looks, and loses nothing.
 */
export const WORKSPACE_FINDINGS = {
  "git-foreign-name": {
    action: "quarantine",
    why: "a name git itself never makes in a repository's .git: git may still read it (an interrupted rebase's todo list runs its exec lines on --continue) or it waits for a later git to pick it up",
  },
  "git-not-plain": {
    action: "quarantine",
    why: "a symbolic link, fifo, socket or device under a .git: the host's git writes through a link (git stash appends a reflog line to the file it names) and hangs on a fifo",
  },
  "git-pointer": {
    action: "quarantine",
    why: "a commondir or gitdir where git never puts one, or a commondir saying other than git writes: it hands the repository's config and hooks to a directory of the session's choosing",
  },
  "nested-repository": {
    action: "quarantine",
    why: "a .git below the workspace's root that is not a submodule's pointer into .git/modules: the host's git obeys its config there (core.fsmonitor runs on git status)",
  },
  "discoverable-repository": {
    action: "quarantine",
    why: "a directory git would take for a repository (a HEAD beside objects/ and refs/, or beside a commondir): the host's git discovers it, the workspace's root included, and obeys its config; its HEAD goes, so git no longer does",
  },
  "setid-file": {
    action: "clear-setid",
    why: "a file with the setuid or setgid bit: any local user who reaches it runs it as its owner; the bits are cleared on the inode, so every name it has loses them",
  },
  unreadable: {
    action: "quarantine",
    why: "a directory the host cannot list or an entry it cannot examine: nothing inside can be checked, so none of it stays where git looks",
  },
  "worktree-config": {
    action: "quarantine",
    why: "a config.worktree that says more than git writes there (sparse-checkout, a worktree's own user): with extensions.worktreeConfig on git reads it as the repository's config, and the session can create one where none was, since no stand-in works there",
  },
  "special-file": {
    action: "quarantine",
    why: "a fifo, socket or device in the work tree: git and the founder's tools open what they find there (a fifo named HEAD hangs git status while it discovers the repository), and no repository needs one",
  },
  "replace-ref": {
    action: "quarantine",
    why: "a replace ref (refs/replace/, loose or in packed-refs): the host's git show, log and diff then display another object than the one stored, so the founder reviews other content than what is committed and pushed; packed-refs goes whole (its branches with it, restorable from the quarantine: the session could have deleted it anyway)",
  },
  "too-deep": {
    action: "quarantine",
    why: "a directory past the walk's depth or path-length bound: moved whole, unexamined, so what is left is checked to the end and every later launch and the founder's path-based tools meet a bounded tree",
  },
  unexamined: {
    action: "report",
    why: "the walk stopped at its bound on entries or findings: what lies beyond was not examined, and nothing of the founder's is moved for it, so the workspace is unsafe until it is read",
  },
} as const;

export type FindingKind = keyof typeof WORKSPACE_FINDINGS;

export interface Finding {
  kind: FindingKind;
  /** Absolute path of what the remedy acts on, as bytes (bytes.ts). */
  path: string;
  /** What exactly was seen, for the report. */
  detail: string;
  /** setid-file only: the file's mode bits. */
  mode?: number;
}
