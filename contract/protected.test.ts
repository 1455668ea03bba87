import { describe, expect, it } from "vitest";
import {
  PROTECTED_FAMILIES,
  PROTECTED_PATHS,
  STAND_INS,
  familyNames,
  protectedBinds,
} from "../src/core/sandbox/protected.ts";
import { memoryView, type Tree } from "../src/conformance/worlds/tree.ts";

// The protected-path table and its stand-ins for missing paths. Each stand-in kind was chosen by
// experiment (docs/hardening.md, "Protected paths that do not exist"): a device in the work tree
// makes `git add -A` fail, an empty file would be committed, and any file at .git/commondir
// (or at .git/config.worktree with extensions.worktreeConfig on) makes git fail.
const WS = "/srv/data/workspaces/acme/coder";
const plan = (tree: Tree) =>
  protectedBinds(WS, memoryView(Object.fromEntries(Object.entries(tree).map(([k, v]) => [WS + k, v]))));
const at = (p: string) => `${WS}/${p}`;

describe("the protected-path table", () => {
  it("each row has a why, a path of its own, and comes after its parent", () => {
    const paths = PROTECTED_PATHS.map((r) => r.path);
    expect(new Set(paths).size, "no path twice").toBe(paths.length);
    for (const [i, r] of PROTECTED_PATHS.entries()) {
      expect(r.why.length, `${r.path} has a why`).toBeGreaterThan(15);
      const parent = paths.findIndex((p) => r.path.startsWith(p + "/"));
      if (parent !== -1) expect(parent, `${r.path} comes after ${paths[parent]}`).toBeLessThan(i);
    }
    for (const k of Object.keys(STAND_INS)) expect(STAND_INS[k as keyof typeof STAND_INS].length).toBeGreaterThan(30);
  });

  it("a device or no stand-in only inside .git: in the work tree a device breaks git add -A, and nothing would let the session create it", () => {
    for (const r of PROTECTED_PATHS) {
      if ((r.absent ?? "empty-dir") === "empty-dir") continue;
      expect(r.path.startsWith(".git/"), `${r.path}: a ${r.absent} stand-in only inside .git`).toBe(true);
      expect(r.kind, `${r.path}: only a file goes without an empty directory`).toBe("file");
    }
    expect(
      PROTECTED_PATHS.filter((r) => r.absent === "none")
        .map((r) => r.path)
        .sort(),
    ).toEqual([".git/commondir", ".git/config.worktree"]);
  });

  it("the anchors' names and the reviewer's tool configs are all in it", () => {
    const paths = PROTECTED_PATHS.map((r) => r.path);
    const anchors = [
      ".git",
      ".git/hooks",
      ".git/config",
      ".gitmodules",
      ".gitconfig",
      ".bashrc",
      ".bash_profile",
      ".zshrc",
      ".zprofile",
      ".profile",
      ".ripgreprc",
      ".mcp.json",
      ".vscode",
      ".idea",
      ".claude",
      ".codex",
      ".agents",
    ];
    const reviewer = [
      ".git/commondir",
      ".git/config.worktree",
      ".git/worktrees",
      ".git/info",
      ".husky",
      ".pre-commit-config.yaml",
      ".gitattributes",
      ".npmrc",
      "mise.toml",
      ".mise.toml",
      ".github",
    ];
    for (const p of [...anchors, ...reviewer]) expect(paths, `${p} is protected`).toContain(p);
  });
});

describe("the protected families: every name a tool reads, not one name at a time", () => {
  const rows = new Map(PROTECTED_PATHS.map((r) => [r.path, r]));

  it("every name of every family is a read-only row of its kind, each with its family's why", () => {
    for (const f of Object.values(PROTECTED_FAMILIES)) {
      for (const [names, kind] of [
        [f.files, "file"],
        [f.dirs, "dir"],
      ] as const)
        for (const n of names)
          expect(rows.get(n), `${n} is protected`).toEqual({ path: n, kind, writable: false, why: f.why });
    }
  });

  it("lefthook's family is every name lefthook documents: a main config and a -local one, five formats, with and without a dot; its scripts' directories", () => {
    const documented = familyNames(
      ["", "."],
      ["lefthook", "lefthook-local"],
      [".yml", ".yaml", ".toml", ".json", ".jsonc"],
    );
    expect(documented).toHaveLength(20);
    for (const n of [...documented, ".lefthook", ".lefthook-local"])
      expect(rows.has(n), `${n} is protected`).toBe(true);
    expect(rows.get("lefthook-local.yml")?.writable).toBe(false);
  });

  it("the local variants and other forges' pipelines the review named are in it", () => {
    for (const n of [
      "lefthook-local.yml",
      "mise.local.toml",
      ".mise.local.toml",
      ".gitea",
      ".forgejo",
      ".gitlab-ci.yml",
      ".circleci",
      ".devcontainer.json",
      ".config",
    ])
      expect(rows.get(n)?.writable, `${n} is read-only`).toBe(false);
  });

  it("an absent family name gets an empty read-only directory (and its mount point); a present one is bound read-only over itself", () => {
    const { binds, mountStubs } = plan({ "/.git/HEAD": "file", "/lefthook-local.yml": "file", "/.gitlab": "dir" });
    expect(binds.find((b) => b.inside === at("lefthook-local.yml"))).toMatchObject({
      source: at("lefthook-local.yml"),
      mode: "ro",
    });
    expect(binds.find((b) => b.inside === at(".gitlab"))).toMatchObject({ source: at(".gitlab"), mode: "ro" });
    for (const p of [
      ".lefthook-local.toml",
      "mise.local.toml",
      ".config",
      ".devcontainer.json",
      "Jenkinsfile",
      ".forgejo",
    ]) {
      expect(binds.find((b) => b.inside === at(p))?.mode, `${p}: an empty read-only directory`).toBe("ro-empty");
      expect(mountStubs, `${p}: its mount point`).toContainEqual({ path: at(p), kind: "dir" });
    }
  });
});

describe("protectedBinds: what stands in for a missing path", () => {
  const repo: Tree = {
    "/.git/HEAD": "file",
    "/.git/config": "file",
    "/.git/hooks": "dir",
    "/.git/info": "dir",
    "/README.md": "file",
  };

  it("a missing work-tree file gets an empty read-only directory, and bwrap's mount point is a directory to remove", () => {
    const { binds, mountStubs } = plan(repo);
    for (const p of [".mcp.json", ".gitattributes", ".npmrc", ".envrc"]) {
      expect(binds.find((b) => b.inside === at(p))?.mode, `${p}: an empty read-only directory`).toBe("ro-empty");
      expect(mountStubs, `${p}: its mount point`).toContainEqual({ path: at(p), kind: "dir" });
    }
    expect(
      binds.some((b) => b.source === "/dev/null"),
      "no device stands in for anything here",
    ).toBe(false);
  });

  it("commondir and config.worktree absent: no bind and no mount point; present: read-only", () => {
    const absent = plan(repo);
    for (const p of [".git/commondir", ".git/config.worktree"]) {
      expect(
        absent.binds.some((b) => b.inside === at(p)),
        `${p} absent: nothing mounted there`,
      ).toBe(false);
      expect(
        absent.mountStubs.some((x) => x.path === at(p)),
        `${p} absent: no mount point made`,
      ).toBe(false);
    }
    const present = plan({ ...repo, "/.git/commondir": "file", "/.git/config.worktree": "file" });
    for (const p of [".git/commondir", ".git/config.worktree"]) {
      expect(present.binds.find((b) => b.inside === at(p))?.mode, `${p} present: read-only`).toBe("ro");
    }
  });

  it("a missing .git/config gets the unreadable /dev/null, which git reads past", () => {
    const { binds, mountStubs } = plan({ "/.git/HEAD": "file" });
    expect(binds.find((b) => b.inside === at(".git/config"))).toMatchObject({ source: "/dev/null", mode: "ro" });
    expect(mountStubs).toContainEqual({ path: at(".git/config"), kind: "file" });
  });

  it("a workspace without .git: one empty read-only .git, and nothing under it", () => {
    const { binds } = plan({ "/README.md": "file" });
    expect(binds.find((b) => b.inside === at(".git"))?.mode).toBe("ro-empty");
    expect(
      binds.filter((b) => b.inside.startsWith(at(".git/"))),
      "the stand-in covers every .git row",
    ).toEqual([]);
  });
});

describe("protectedBinds: the edges", () => {
  const rows = (b: ReturnType<typeof plan>["binds"]) => new Map(b.map((x) => [x.inside, x.mode]));

  it("a workspace without .git: .gitattributes, .gitmodules and .gitconfig keep their own rows; only paths under .git/ are covered", () => {
    const noGit = rows(plan({ "/README.md": "file", "/.gitattributes": "file" }).binds);
    expect(noGit.get(at(".git")), "control: .git is the stand-in").toBe("ro-empty");
    expect(noGit.get(at(".gitattributes")), "a name that starts with .git is not under it").toBe("ro");
    expect(noGit.get(at(".gitmodules"))).toBe("ro-empty");
    expect(noGit.get(at(".gitconfig"))).toBe("ro-empty");
  });

  it("a worktree's .git file: read-only, nothing under it, and the .git* siblings still protected", () => {
    const worktree = plan({ "/.git": "file", "/.gitmodules": "file" });
    const r = rows(worktree.binds);
    expect(r.get(at(".git")), "the gitdir pointer cannot be rewritten").toBe("ro");
    expect(
      worktree.binds.filter((b) => b.inside.startsWith(at(".git/"))),
      "a file has nothing under it to bind",
    ).toEqual([]);
    expect(r.get(at(".gitmodules"))).toBe("ro");
    expect(r.get(at(".gitattributes"))).toBe("ro-empty");
  });

  it.each([
    ["relative", ".envrc", { link: "../elsewhere/envrc" }],
    ["absolute", ".envrc", { link: "/etc/passwd" }],
    ["relative, under .git", ".git/config", { link: "../../config" }],
    ["absolute, a directory", ".husky", { link: "/tmp" }],
  ] as const)("a link at a protected path is refused, %s, naming the path and its target", (_how, path, link) => {
    const tree: Tree = { "/.git/HEAD": "file", [`/${path}`]: link };
    expect(() => plan(tree)).toThrow(
      expect.objectContaining({
        code: "protected-link",
        field: at(path),
        message: expect.stringContaining(`is a symbolic link (to ${link.link})`),
      }),
    );
    expect(() => plan({ "/.git/HEAD": "file" }), "control: without the link it plans").not.toThrow();
  });
});
