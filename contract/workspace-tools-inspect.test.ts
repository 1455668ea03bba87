// The edges of inspect.ts the generated sweep found untested: a workspace that is not a directory,
// entries that vanish or cannot be seen, special files and setid bits by kind, submodules' git
// directories, pointers git never wrote, and the order findings come in: each as whole findings.
import { describe, expect, it } from "vitest";
import type { Finding } from "../src/core/workspace/findings.ts";
import { inspectWorkspace, looksLikeHead } from "../src/core/workspace/inspect.ts";
import type { TreeView } from "../src/core/workspace/tree-view.ts";
import { type WorkspaceTree, treeView } from "../src/conformance/worlds/tree.ts";
import { withHolds } from "./support/workspace-tree.ts";

const WS = "/srv/ws";
const SHA = "3f786850e387550fdab836ed7e6dc881de23001b";
const REPO: WorkspaceTree = {
  "/.git/HEAD": { file: "ref: refs/heads/main\n" },
  "/.git/objects/info": "dir",
  "/.git/refs/heads": "dir",
};
const inspect = (tree: WorkspaceTree) => inspectWorkspace(WS, withHolds(treeView(tree, WS)));
const at = (rel: string) => `${WS}/${rel}`;

describe("what git accepts as a HEAD", () => {
  it("only at the start of the text", () => {
    expect([`x ref: refs/heads/main`, `x${SHA}`, `ref: refs/heads/main`, SHA].map(looksLikeHead)).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });
});

describe("a workspace that cannot be inspected as a tree", () => {
  it("a missing workspace, or one that is a file, has no findings and is never listed", () => {
    const listed: string[] = [];
    const view = (kind: "file" | null): TreeView => ({
      lstat: (p) => (p === WS && kind !== null ? { kind, mode: 0o644 } : null),
      readdir: (p) => {
        listed.push(p);
        return null;
      },
      head: () => null,
    });
    expect(inspectWorkspace(WS, withHolds(view(null)))).toEqual([]);
    expect(inspectWorkspace(WS, withHolds(view("file")))).toEqual([]);
    expect(listed).toEqual([]);
  });

  it("what cannot be listed or examined is a finding saying which; what vanished is nothing", () => {
    const base = treeView({ "/a/b": "file", "/c": "file", "/gone": "file" }, WS);
    const view: TreeView = {
      ...base,
      readdir: (p) => (p === at("a") ? null : base.readdir(p)),
      lstat: (p) => (p === at("c") ? { kind: "unreadable", mode: 0 } : p === at("gone") ? null : base.lstat(p)),
    };
    expect(inspectWorkspace(WS, withHolds(view))).toEqual([
      { kind: "unreadable", path: at("a"), detail: "cannot be listed" },
      { kind: "unreadable", path: at("c"), detail: "cannot be examined" },
    ]);
  });
});

describe("kinds and bits", () => {
  it("setuid and setgid bits are a finding on a regular file only, not on a directory", () => {
    const base = treeView({ "/shared/x": "file", "/bin/su": { file: "x", mode: 0o4755 } }, WS);
    const view: TreeView = {
      ...base,
      lstat: (p) => (p === at("shared") ? { kind: "dir", mode: 0o2775 } : base.lstat(p)),
    };
    expect(inspectWorkspace(WS, withHolds(view))).toEqual([
      { kind: "setid-file", path: at("bin/su"), detail: "mode 4755", mode: 0o4755 },
    ]);
  });

  it("a fifo deep in a plain directory of .git is not plain", () => {
    expect(inspect({ ...REPO, "/.git/refs/heads/p": "fifo" })).toEqual([
      { kind: "git-not-plain", path: at(".git/refs/heads/p"), detail: "a other under .git" },
    ]);
  });
});

describe("git directories inside .git", () => {
  it("a submodule's git directory is checked as one: a foreign name there is found", () => {
    expect(
      inspect({
        ...REPO,
        "/.git/modules/lib/sub/HEAD": { file: `${SHA}\n` },
        "/.git/modules/lib/sub/refs": "dir",
        "/.git/modules/lib/sub/rebase-merge/git-rebase-todo": "file",
      }),
    ).toEqual([
      {
        kind: "git-foreign-name",
        path: at(".git/modules/lib/sub/rebase-merge"),
        detail: "an interrupted rebase's state: its todo list's exec lines run on the host's git rebase --continue",
      },
    ]);
  });

  it("a commondir that is a directory is out of place, even in a linked worktree's git directory", () => {
    expect(
      inspect({ ...REPO, "/.git/worktrees/w/HEAD": { file: `${SHA}\n` }, "/.git/worktrees/w/commondir/x": "file" }),
    ).toEqual([
      {
        kind: "git-pointer",
        path: at(".git/worktrees/w/commondir"),
        detail: "git puts commondir only in a linked worktree's git directory (.git/worktrees/<name>/)",
      },
    ]);
  });

  it("a commondir that cannot be read says nothing, which is not what git writes", () => {
    const base = treeView(
      { ...REPO, "/.git/worktrees/w/HEAD": { file: `${SHA}\n` }, "/.git/worktrees/w/commondir": "file" },
      WS,
    );
    const view: TreeView = { ...base, head: (p, n) => (p.endsWith("/commondir") ? null : base.head(p, n)) };
    expect(inspectWorkspace(WS, withHolds(view))).toEqual([
      { kind: "git-pointer", path: at(".git/worktrees/w/commondir"), detail: 'says ""; git writes ../..' },
    ]);
  });
});

describe("a .git below the root", () => {
  const nested = (rel: string, detail: string): Finding => ({ kind: "nested-repository", path: at(rel), detail });
  const POINTER_ELSEWHERE = "a .git file that points elsewhere than the root's .git/modules";

  it("a submodule's pointer file into .git/modules is git's own: trailing whitespace, a space in a name, an absolute path or a trailing slash", () => {
    expect(
      inspect({
        ...REPO,
        "/a/.git": { file: "gitdir: ../.git/modules/a \n\n" },
        "/b/.git": { file: `gitdir: ${WS}/.git/modules/b\n` },
        "/s/.git": { file: "gitdir: ../.git/modules/my lib\n" },
        "/g/.git": { file: "gitdir: ../.git/modules/g/\n" },
      }),
    ).toEqual([]);
  });

  it("any other .git file is a nested repository: no space (or a tab) after gitdir:, an empty or two-line path, one that climbs out or names .git/modules itself, no pointer at all", () => {
    const base = treeView(
      {
        ...REPO,
        "/a/.git": { file: "gitdir:../.git/modules/a\n" },
        "/b/.git": { file: "gitdir: \n" },
        "/c/.git": { file: "gitdir: ../.git/modules/c\n../x\n" },
        "/d/.git": { file: "gitdir: ../../../../../x/\n" },
        "/e/.git": { file: "x gitdir: ../.git/modules/e\n" },
        "/f/.git": "file",
        "/h/.git": { file: "gitdir: ../.git/modules/ \n" },
        "/t/.git": { file: `gitdir:\t${WS}/.git/modules/t\n` },
      },
      WS,
    );
    const view: TreeView = { ...base, head: (p, n) => (p === at("f/.git") ? null : base.head(p, n)) };
    expect(inspectWorkspace(WS, withHolds(view))).toEqual(
      ["a", "b", "c", "d", "e", "f", "h", "t"].map((d) => nested(`${d}/.git`, POINTER_ELSEWHERE)),
    );
  });

  it("findings come sorted by path, and by kind at one path", () => {
    expect(
      inspect({
        ...REPO,
        "/z/.git": "dir",
        "/.git/zz": { file: "x", mode: 0o6755 },
        "/m/.git": { link: "/elsewhere" },
        "/a/.git": "dir",
      }).map((f) => [f.kind, f.path]),
    ).toEqual([
      ["git-foreign-name", at(".git/zz")],
      ["setid-file", at(".git/zz")],
      ["nested-repository", at("a/.git")],
      ["nested-repository", at("m/.git")],
      ["nested-repository", at("z/.git")],
    ]);
  });
});

describe("a directory git would discover", () => {
  it("a HEAD that is also setuid is two findings, by kind: discoverable, then setid", () => {
    expect(
      inspect({ "/x/HEAD": { file: "ref: refs/heads/main\n", mode: 0o4755 }, "/x/objects": "dir", "/x/refs": "dir" }),
    ).toEqual([
      {
        kind: "discoverable-repository",
        path: at("x/HEAD"),
        detail: `${WS}/x has a HEAD git accepts beside objects/ and refs/ or a commondir`,
      },
      { kind: "setid-file", path: at("x/HEAD"), detail: "mode 4755", mode: 0o4755 },
    ]);
  });

  it("findings in one directory come in path order whatever their kinds", () => {
    expect(inspect({ ...REPO, "/.git/a-fifo": "fifo", "/.git/b-name": "file" })).toEqual([
      { kind: "git-not-plain", path: at(".git/a-fifo"), detail: "a other under .git" },
      { kind: "git-foreign-name", path: at(".git/b-name"), detail: "not a name git makes in a main git directory" },
    ]);
  });

  it("a HEAD that is a directory, or a file git would not accept, makes no repository; a link or an unreadable file does", () => {
    const base = treeView(
      {
        "/d/HEAD/x": "file",
        "/d/objects": "dir",
        "/d/refs": "dir",
        "/t/HEAD": { file: "hello\n" },
        "/t/commondir": "file",
        "/l/HEAD": { link: "refs/heads/main" },
        "/l/commondir": "file",
        "/u/HEAD": "file",
        "/u/commondir": "file",
      },
      WS,
    );
    const view: TreeView = { ...base, head: (p, n) => (p === at("u/HEAD") ? null : base.head(p, n)) };
    expect(inspectWorkspace(WS, withHolds(view)).map((f) => [f.kind, f.path])).toEqual([
      ["discoverable-repository", at("l/HEAD")],
      ["discoverable-repository", at("u/HEAD")],
    ]);
  });
});
