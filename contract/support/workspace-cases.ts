// Declarative workspaces for the end-of-session check (src/core/workspace): each one the check must
// flag, with the kinds and paths it must find, and near-misses it must leave alone (a legitimate
// repository, a submodule's pointer, a root `config` with no HEAD, objects or refs).
import type { FindingKind } from "../../src/core/workspace/findings.ts";
import type { WorkspaceTree } from "../../src/conformance/worlds/tree.ts";

const SHA = "3f786850e387550fdab836ed7e6dc881de23001b";

/** A repository as git init, add and commit leave it, with a work tree of ordinary files. */
export const LEGIT_REPO: WorkspaceTree = {
  "/.git/HEAD": { file: "ref: refs/heads/main\n" },
  "/.git/config": { file: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" },
  "/.git/description": "file",
  "/.git/index": "file",
  "/.git/COMMIT_EDITMSG": "file",
  "/.git/ORIG_HEAD": { file: `${SHA}\n` },
  "/.git/packed-refs": "file",
  "/.git/hooks/pre-commit.sample": { file: "#!/bin/sh\n", mode: 0o755 },
  "/.git/info/exclude": "file",
  "/.git/branches": "dir",
  "/.git/objects/3f/786850e387550fdab836ed7e6dc881de23001b": "file",
  "/.git/objects/pack/pack-1.pack": "file",
  "/.git/objects/info/packs": "file",
  "/.git/refs/heads/main": { file: `${SHA}\n` },
  "/.git/refs/remotes/origin/HEAD": { file: "ref: refs/remotes/origin/main\n" },
  "/.git/refs/tags": "dir",
  "/.git/logs/HEAD": {
    file: `0000000000000000000000000000000000000000 ${SHA} host <h@invalid> 1700000000 +0000\tcommit (initial): first\n`,
  },
  "/.git/logs/refs/heads/main": "file",
  "/README.md": "file",
  "/config": { file: "a file that happens to be called config\n" },
  "/src/main.ts": "file",
  "/bin/tool": { file: "#!/bin/sh\n", mode: 0o755 },
  "/docs/readme-link": { link: "../README.md" },
  "/node_modules/x/index.js": "file",
};

export interface WorkspaceCase {
  why: string;
  tree: WorkspaceTree;
  /** Every finding it must give, as `kind path` (path relative to the workspace), sorted by path. */
  finds: ReadonlyArray<readonly [FindingKind, string]>;
}

const withoutGit = (t: WorkspaceTree): WorkspaceTree =>
  Object.fromEntries(Object.entries(t).filter(([k]) => !k.startsWith("/.git/")));

export const WORKSPACE_CASES: Readonly<Record<string, WorkspaceCase>> = {
  "legit-repo": {
    why: "near-miss: a repository as git leaves it, work-tree links, executables, sample hooks, a root file called config",
    tree: LEGIT_REPO,
    finds: [],
  },
  "submodule-pointer": {
    why: "near-miss: a submodule's .git file pointing into the root's .git/modules, and its git directory there",
    tree: {
      ...LEGIT_REPO,
      "/.gitmodules": "file",
      "/lib/sub/.git": { file: "gitdir: ../../.git/modules/lib/sub\n" },
      "/lib/sub/code.c": "file",
      "/.git/modules/lib/sub/HEAD": { file: `${SHA}\n` },
      "/.git/modules/lib/sub/config": "file",
      "/.git/modules/lib/sub/objects/pack": "dir",
      "/.git/modules/lib/sub/refs/heads": "dir",
    },
    finds: [],
  },
  "linked-worktree-root": {
    why: "near-miss: the workspace is a linked worktree, its .git a file naming its git directory elsewhere",
    tree: { ...withoutGit(LEGIT_REPO), "/.git": { file: "gitdir: /srv/main/.git/worktrees/coder\n" } },
    finds: [],
  },
  "linked-worktree-legit": {
    why: "near-miss: a linked worktree's git directory as git worktree add makes it",
    tree: {
      ...LEGIT_REPO,
      "/.git/worktrees/wt/HEAD": { file: "ref: refs/heads/wt\n" },
      "/.git/worktrees/wt/commondir": { file: "../..\n" },
      "/.git/worktrees/wt/gitdir": { file: "/srv/wt/.git\n" },
      "/.git/worktrees/wt/index": "file",
      "/.git/worktrees/wt/locked": { file: "on a removable disk\n" },
    },
    finds: [],
  },
  "root-head-not-a-ref": {
    why: "near-miss: a HEAD beside objects/ and refs/ at the root that git would not accept as one",
    tree: {
      ...withoutGit(LEGIT_REPO),
      "/HEAD": { file: "the head of the project\n" },
      "/objects/list.txt": "file",
      "/refs/papers.bib": "file",
    },
    finds: [],
  },
  "root-config-only": {
    why: "near-miss: no .git, a config and objects/ at the root, but no HEAD and no refs",
    tree: { ...withoutGit(LEGIT_REPO), "/objects/model.obj": "file" },
    finds: [],
  },
  "root-made-a-repository": {
    why: "the workspace had no .git; the session made its root a repository (HEAD, config with core.worktree and core.fsmonitor, objects, refs)",
    tree: {
      ...withoutGit(LEGIT_REPO),
      "/HEAD": { file: "ref: refs/heads/main\n" },
      "/config": { file: "[core]\n\tbare = false\n\tworktree = /srv/ws\n\tfsmonitor = touch /tmp/pwned;:\n" },
      "/objects": "dir",
      "/refs/heads": "dir",
    },
    finds: [["discoverable-repository", "HEAD"]],
  },
  "root-repository-by-commondir": {
    why: "a root with a detached HEAD and a commondir: git finds objects and refs where commondir points",
    tree: { ...withoutGit(LEGIT_REPO), "/HEAD": { file: `${SHA}\n` }, "/commondir": { file: "/srv/elsewhere\n" } },
    finds: [["discoverable-repository", "HEAD"]],
  },
  "root-head-link": {
    why: "a HEAD that is a link, beside objects and refs: git accepts a link into refs/, and any link is taken as one",
    tree: { ...withoutGit(LEGIT_REPO), "/HEAD": { link: "refs/heads/main" }, "/objects": "dir", "/refs": "dir" },
    finds: [["discoverable-repository", "HEAD"]],
  },
  "repository-in-a-subdirectory": {
    why: "a bare repository planted in the work tree: git in or under vendor/x discovers it",
    tree: {
      ...LEGIT_REPO,
      "/vendor/x/HEAD": { file: "ref: refs/heads/x\n" },
      "/vendor/x/objects": "dir",
      "/vendor/x/refs": "dir",
      "/vendor/x/config": "file",
    },
    finds: [["discoverable-repository", "vendor/x/HEAD"]],
  },
  "nested-repository": {
    why: "a nested sub/.git with core.fsmonitor, which the host's git status in sub/ runs",
    tree: {
      ...LEGIT_REPO,
      "/sub/file.txt": "file",
      "/sub/.git/HEAD": { file: "ref: refs/heads/main\n" },
      "/sub/.git/config": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" },
      "/sub/.git/objects": "dir",
      "/sub/.git/refs": "dir",
    },
    finds: [["nested-repository", "sub/.git"]],
  },
  "nested-gitfile-elsewhere": {
    why: "a .git file pointing at a repository of the session's own in the work tree",
    tree: {
      ...LEGIT_REPO,
      "/sub/.git": { file: "gitdir: ../.evil\n" },
      "/.evil/HEAD": { file: "ref: refs/heads/main\n" },
      "/.evil/objects": "dir",
      "/.evil/refs": "dir",
    },
    finds: [
      ["discoverable-repository", ".evil/HEAD"],
      ["nested-repository", "sub/.git"],
    ],
  },
  "submodule-pointer-escapes": {
    why: "a .git file that names .git/modules but climbs out of it",
    tree: { ...LEGIT_REPO, "/sub/.git": { file: "gitdir: ../.git/modules/../../evil\n" } },
    finds: [["nested-repository", "sub/.git"]],
  },
  "submodule-pointer-to-modules-itself": {
    why: "a .git file naming .git/modules itself, not a submodule's git directory in it",
    tree: { ...LEGIT_REPO, "/sub/.git": { file: "gitdir: ../.git/modules\n" } },
    finds: [["nested-repository", "sub/.git"]],
  },
  commondir: {
    why: "the reviewer's first attack: .git/commondir pointing at a directory of the session's own, whose config and hooks become the repository's",
    tree: {
      ...LEGIT_REPO,
      "/.git/commondir": { file: "../.evil\n" },
      "/.evil/HEAD": { file: "ref: refs/heads/main\n" },
      "/.evil/config": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" },
      "/.evil/objects": "dir",
      "/.evil/refs": "dir",
    },
    finds: [
      ["discoverable-repository", ".evil/HEAD"],
      ["git-pointer", ".git/commondir"],
    ],
  },
  "gitdir-in-main": {
    why: "a gitdir file in the main git directory, where git never puts one",
    tree: { ...LEGIT_REPO, "/.git/gitdir": { file: "/srv/elsewhere\n" } },
    finds: [["git-pointer", ".git/gitdir"]],
  },
  "worktree-commondir-elsewhere": {
    why: "a linked worktree's commondir that says other than ../..",
    tree: {
      ...LEGIT_REPO,
      "/.git/worktrees/wt/HEAD": { file: "ref: refs/heads/wt\n" },
      "/.git/worktrees/wt/commondir": { file: "/srv/evil\n" },
      "/.git/worktrees/wt/gitdir": { file: "/srv/wt/.git\n" },
    },
    finds: [["git-pointer", ".git/worktrees/wt/commondir"]],
  },
  "logs-link": {
    why: "the reviewer's second attack: a link in .git/logs to the founder's ~/.bashrc, which git stash appends to",
    tree: { ...LEGIT_REPO, "/.git/logs/refs/stash": { link: "/home/founder/.bashrc" } },
    finds: [["git-not-plain", ".git/logs/refs/stash"]],
  },
  "links-at-the-top-of-git": {
    why: "a HEAD and a packed-refs that are links: git writes through them",
    tree: {
      ...withoutGit(LEGIT_REPO),
      "/.git/HEAD": { link: "/home/founder/.profile" },
      "/.git/packed-refs": { link: "../README.md" },
      "/.git/objects": "dir",
      "/.git/refs": "dir",
    },
    finds: [
      ["git-not-plain", ".git/HEAD"],
      ["git-not-plain", ".git/packed-refs"],
    ],
  },
  "git-is-a-link": {
    why: "the workspace's .git itself a link",
    tree: { ...withoutGit(LEGIT_REPO), "/.git": { link: "/srv/elsewhere" } },
    finds: [["git-not-plain", ".git"]],
  },
  "fifo-in-git": {
    why: "a fifo where git reads FETCH_HEAD: the host's git hangs on it",
    tree: { ...LEGIT_REPO, "/.git/FETCH_HEAD": "fifo" },
    finds: [["git-not-plain", ".git/FETCH_HEAD"]],
  },
  "foreign-names": {
    why: "names git never makes in .git: a stale lock, a script, objects as a file",
    tree: {
      ...withoutGit(LEGIT_REPO),
      "/.git/HEAD": { file: "ref: refs/heads/main\n" },
      "/.git/refs": "dir",
      "/.git/objects": "file",
      "/.git/index.lock": "file",
      "/.git/evil.sh": { file: "#!/bin/sh\n", mode: 0o755 },
    },
    finds: [
      ["git-foreign-name", ".git/evil.sh"],
      ["git-foreign-name", ".git/index.lock"],
      ["git-foreign-name", ".git/objects"],
    ],
  },
  "rebase-in-progress": {
    why: "an interrupted rebase's state left by the session: its todo list's exec line runs on the host's git rebase --continue",
    tree: {
      ...LEGIT_REPO,
      "/.git/rebase-merge/git-rebase-todo": { file: "exec touch /tmp/pwned\n" },
      "/.git/rebase-merge/interactive": "file",
    },
    finds: [["git-foreign-name", ".git/rebase-merge"]],
  },
  "foreign-in-a-worktree-gitdir": {
    why: "a config (shared-only) and a hooks directory in a linked worktree's git directory, where git makes neither",
    tree: {
      ...LEGIT_REPO,
      "/.git/worktrees/wt/HEAD": { file: "ref: refs/heads/wt\n" },
      "/.git/worktrees/wt/commondir": { file: "../..\n" },
      "/.git/worktrees/wt/config": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" },
      "/.git/worktrees/wt/hooks/post-checkout": "file",
    },
    finds: [
      ["git-foreign-name", ".git/worktrees/wt/config"],
      ["git-foreign-name", ".git/worktrees/wt/hooks"],
    ],
  },
  "foreign-in-modules": {
    why: "files among submodules' git directories: a hook under a directory with no HEAD (no git directory of git's making), and a stray file",
    tree: {
      ...LEGIT_REPO,
      "/.git/modules/evil/hooks/post-checkout": { file: "#!/bin/sh\n", mode: 0o755 },
      "/.git/modules/notes.txt": "file",
    },
    finds: [
      ["git-foreign-name", ".git/modules/evil/hooks/post-checkout"],
      ["git-foreign-name", ".git/modules/notes.txt"],
    ],
  },
  "link-among-worktrees": {
    why: "a link where git keeps a linked worktree's git directory",
    tree: { ...LEGIT_REPO, "/.git/worktrees/wt": { link: "/srv/elsewhere" } },
    finds: [["git-not-plain", ".git/worktrees/wt"]],
  },
  "repository-inside-git": {
    why: "a bare repository hidden inside .git/refs, and a .git under .git/info",
    tree: {
      ...LEGIT_REPO,
      "/.git/refs/heads/x/HEAD": { file: `${SHA}\n` },
      "/.git/refs/heads/x/objects/a": "file",
      "/.git/refs/heads/x/refs/b": "file",
      "/.git/info/.git": "dir",
    },
    finds: [
      ["nested-repository", ".git/info/.git"],
      ["discoverable-repository", ".git/refs/heads/x/HEAD"],
    ],
  },
  "non-utf8-names": {
    why: "names that are not UTF-8 (the bytes ff and c3 28): a setuid file and a nested repository under them are found as any other, and an ordinary file so named is left",
    tree: {
      ...LEGIT_REPO,
      "/bad\xff/rootshell": { file: "ELF\n", mode: 0o4755 },
      "/bad\xff/sub/.git/HEAD": { file: "ref: refs/heads/main\n" },
      "/bad\xff/sub/.git/config": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" },
      "/\xc3\x28-setgid": { file: "ELF\n", mode: 0o2755 },
      "/notes-\xe9.txt": "file",
    },
    finds: [
      ["setid-file", "bad\xff/rootshell"],
      ["nested-repository", "bad\xff/sub/.git"],
      ["setid-file", "\xc3\x28-setgid"],
    ],
  },
  "fifo-head-at-root": {
    why: "a workspace without .git whose HEAD is a fifo beside objects/ and refs/: the host's git status hangs reading it while it discovers the repository",
    tree: { ...withoutGit(LEGIT_REPO), "/HEAD": "fifo", "/objects": "dir", "/refs": "dir" },
    finds: [["special-file", "HEAD"]],
  },
  "fifo-head-in-a-subdirectory": {
    why: "a fifo HEAD beside objects/ and refs/ in a subdirectory: git status there hangs the same way",
    tree: { ...LEGIT_REPO, "/sub/HEAD": "fifo", "/sub/objects": "dir", "/sub/refs": "dir" },
    finds: [["special-file", "sub/HEAD"]],
  },
  "fifos-in-the-work-tree": {
    why: "fifos anywhere in the work tree: the founder's tools open what they find, and no repository holds one",
    tree: { ...LEGIT_REPO, "/src/pipe": "fifo", "/node_modules/x/.cache/fifo": "fifo" },
    finds: [
      ["special-file", "node_modules/x/.cache/fifo"],
      ["special-file", "src/pipe"],
    ],
  },
  "replace-ref-loose": {
    why: "a replace ref under .git/refs/replace: git show of the stored commit displays the session's other commit",
    tree: { ...LEGIT_REPO, [`/.git/refs/replace/${SHA}`]: { file: `${"b".repeat(40)}\n` } },
    finds: [["replace-ref", ".git/refs/replace"]],
  },
  "replace-ref-packed": {
    why: "a replace ref packed into packed-refs, as git pack-refs --all leaves it",
    tree: {
      ...LEGIT_REPO,
      "/.git/packed-refs": {
        file: `# pack-refs with: peeled fully-peeled sorted \n${SHA} refs/heads/main\n${"b".repeat(40)} refs/replace/${SHA}\n`,
      },
    },
    finds: [["replace-ref", ".git/packed-refs"]],
  },
  "replace-ref-in-a-submodule": {
    why: "a replace ref in a submodule's git directory: git show in the submodule displays another commit",
    tree: {
      ...LEGIT_REPO,
      "/.git/modules/lib/HEAD": { file: `${SHA}\n` },
      "/.git/modules/lib/refs/heads": "dir",
      [`/.git/modules/lib/refs/replace/${SHA}`]: { file: `${"b".repeat(40)}\n` },
    },
    finds: [["replace-ref", ".git/modules/lib/refs/replace"]],
  },
  "replace-near-misses": {
    why: "near-miss: a branch whose name holds refs/replace/, loose and packed, and a reflog of replace refs: none is a replace ref",
    tree: {
      ...LEGIT_REPO,
      "/.git/refs/heads/x/refs/replace/y": { file: `${SHA}\n` },
      "/.git/packed-refs": { file: `${SHA} refs/heads/main\n${SHA} refs/heads/x/refs/replace/z\n` },
      [`/.git/logs/refs/replace/${SHA}`]: "file",
    },
    finds: [],
  },
  "too-deep": {
    why: "a directory 300 levels deep: the one past the depth bound is moved whole, unexamined, with the setuid file inside it",
    tree: { ...LEGIT_REPO, [`${"/d".repeat(300)}/rootshell`]: { file: "ELF\n", mode: 0o4755 } },
    finds: [["too-deep", "d/".repeat(257).slice(0, -1)]],
  },
  "worktree-config-planted": {
    why: "a config.worktree the session created where none was: with extensions.worktreeConfig on, the host's git status runs its fsmonitor",
    tree: { ...LEGIT_REPO, "/.git/config.worktree": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" } },
    finds: [["worktree-config", ".git/config.worktree"]],
  },
  "worktree-config-disguised": {
    why: "config.worktree forms that would hide a key from a line-by-line reading: a key on its section's line, a subsection, an include, a continuation line",
    tree: {
      ...LEGIT_REPO,
      "/.git/config.worktree": { file: "[core] fsmonitor = touch /tmp/pwned;:\n" },
      "/.git/worktrees/a/HEAD": { file: "ref: refs/heads/a\n" },
      "/.git/worktrees/a/commondir": { file: "../..\n" },
      "/.git/worktrees/a/config.worktree": { file: '[core "x"]\n\tsparseCheckout = true\n' },
      "/.git/worktrees/b/HEAD": { file: "ref: refs/heads/b\n" },
      "/.git/worktrees/b/commondir": { file: "../..\n" },
      "/.git/worktrees/b/config.worktree": { file: "[include]\n\tpath = ../../../evil\n" },
      "/.git/worktrees/c/HEAD": { file: "ref: refs/heads/c\n" },
      "/.git/worktrees/c/commondir": { file: "../..\n" },
      "/.git/worktrees/c/config.worktree": { file: "[user]\n\temail = a\\\n\n[core]\n" },
    },
    finds: [
      ["worktree-config", ".git/config.worktree"],
      ["worktree-config", ".git/worktrees/a/config.worktree"],
      ["worktree-config", ".git/worktrees/b/config.worktree"],
      ["worktree-config", ".git/worktrees/c/config.worktree"],
    ],
  },
  "worktree-config-as-git-writes-it": {
    why: "near-miss: config.worktree as git sparse-checkout init --cone and git config --worktree user.email write it, with a comment",
    tree: {
      ...LEGIT_REPO,
      "/.git/config.worktree": {
        file: "# the founder's\n[core]\n\tsparseCheckout = true\n\tsparseCheckoutCone = true\n[user]\n\temail = me@example.invalid\n",
      },
    },
    finds: [],
  },
  "setid-files": {
    why: "a setuid and a setgid file in the work tree, and a setuid file among git's objects",
    tree: {
      ...LEGIT_REPO,
      "/bin/rootshell": { file: "ELF\n", mode: 0o4755 },
      "/bin/groupshell": { file: "ELF\n", mode: 0o2755 },
      "/.git/objects/ab/cdef": { file: "x", mode: 0o4444 },
    },
    finds: [
      ["setid-file", ".git/objects/ab/cdef"],
      ["setid-file", "bin/groupshell"],
      ["setid-file", "bin/rootshell"],
    ],
  },
};
