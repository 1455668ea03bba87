import type { FsView } from "../gate/fs-view.ts";
import { MosaicError } from "../errors.ts";
import type { Bind } from "./types.ts";

type Kind = "dir" | "file";

/**
 * What stands in for a protected path that does not exist, so the session cannot create it, and
 * why that kind: the stand-in is a mount point, and bwrap makes one in the host's workspace.
 */
export const STAND_INS = {
  "empty-dir":
    "an empty read-only tmpfs: git ignores an empty directory, so `git add -A` neither fails on it (as on a device) nor commits it (as an empty file), and a tool that reads it gets EISDIR",
  "dev-null":
    "the host's /dev/null on a nodev mount, which no one can open (EACCES): git reads past an unreadable config file and fails on a directory there",
  none: "nothing: any stand-in there is a file git reads and fails on, inside the session and on the host while it runs; the end-of-session check (src/core/workspace) keeps it absent instead",
} as const;
export type StandIn = keyof typeof STAND_INS;

export interface ProtectedPath {
  path: string;
  kind: Kind;
  writable: boolean;
  /** What stands in for it when it does not exist; an empty directory when not given. */
  absent?: StandIn;
  why: string;
}

/** Every name of a family: each prefix, stem and suffix combined, as the tool that reads them documents. */
export function familyNames(
  prefixes: readonly string[],
  stems: readonly string[],
  suffixes: readonly string[],
): string[] {
  return prefixes.flatMap((p) => stems.flatMap((s) => suffixes.map((x) => `${p}${s}${x}`)));
}

const rowsOf = (paths: readonly string[], kind: Kind, why: string): ProtectedPath[] =>
  paths.map((path) => ({ path, kind, writable: false, why }));

/**
 * Families of auto-run configs, by what their tools document rather than one name at a time: a
 * tool reads any of its family's names, so protecting one name and not its sibling (lefthook.yml
 * but not lefthook-local.yml) protects nothing. The names the table lists on their own rows are
 * left out here.
 */
export const PROTECTED_FAMILIES = {
  /** lefthook.dev/configuration: a main config in any of five formats, with or without a dot, and a -local one merged over it; scripts from .lefthook/ and .lefthook-local/. */
  lefthook: {
    files: familyNames(["", "."], ["lefthook", "lefthook-local"], [".yml", ".yaml", ".toml", ".json", ".jsonc"]).filter(
      (n) => n !== "lefthook.yml" && n !== ".lefthook.yml",
    ),
    dirs: [".lefthook", ".lefthook-local"],
    why: "the commands lefthook's git hooks run on the host: its main config, the -local one merged over it, and the scripts they name",
  },
  /** mise.jdx.dev/configuration: mise.local.toml beside mise.toml, and the .mise/ directory's config.toml and config.local.toml. */
  mise: {
    files: ["mise.local.toml", ".mise.local.toml"],
    dirs: [".mise"],
    why: "mise's tasks, env and hooks, merged over mise.toml; where mise is activated the host's shell runs its hooks on cd",
  },
  /** A project's XDG-style config directory: lefthook and mise read their configs from .config/ too. */
  config: {
    files: [],
    dirs: [".config"],
    why: "the project config directory lefthook (.config/lefthook.yml) and mise (.config/mise.toml, .config/mise/) read like the names at the root",
  },
  /** containers.dev: .devcontainer.json at the root, beside the .devcontainer/ directory. */
  devcontainer: {
    files: [".devcontainer.json"],
    dirs: [],
    why: "the dev container's lifecycle commands an editor runs on the host, at the root rather than in .devcontainer/",
  },
  /** Every other forge's and CI service's pipeline, as .github/ is GitHub's. */
  ci: {
    files: [
      ".gitlab-ci.yml",
      ".woodpecker.yml",
      ".woodpecker.yaml",
      ".drone.yml",
      ".travis.yml",
      ".cirrus.yml",
      ".cirrus.star",
      ".appveyor.yml",
      "appveyor.yml",
      "azure-pipelines.yml",
      "bitbucket-pipelines.yml",
      ".build.yml",
      "Jenkinsfile",
    ],
    dirs: [
      ".gitea",
      ".forgejo",
      ".gitlab",
      ".circleci",
      ".woodpecker",
      ".buildkite",
      ".semaphore",
      ".azure-pipelines",
      ".builds",
    ],
    why: "pipelines a forge or CI service runs with the repository's secrets once the founder pushes",
  },
} as const;

type Family = (typeof PROTECTED_FAMILIES)[keyof typeof PROTECTED_FAMILIES];
const familyRows = (f: Family): ProtectedPath[] => [...rowsOf(f.files, "file", f.why), ...rowsOf(f.dirs, "dir", f.why)];

/**
 * Paths inside the workspace that something on the host later runs or loads: the session may not
 * write them, and may not create them where they are missing. Grown from the anchors' full lists:
 * sandbox-runtime's mandatory deny list (DANGEROUS_FILES, DANGEROUS_DIRECTORIES, .git/hooks and
 * .git/config), Codex's protected metadata (.git, .codex, .agents) and Gemini CLI's governance files
 * (.git; its .gitignore and .geminiignore only hide files, run nothing, and stay writable), then the
 * configs of the tools a founder runs in a repository (git hook managers, package managers, tool
 * version managers, CI). `.git` itself is listed so it is a mount point: a mount point cannot be
 * renamed or removed, so `.git` cannot be moved aside and replaced by a repository of the session's
 * own. What this table cannot name (links under .git/logs, nested repositories, a directory turned
 * into a repository) the end-of-session check catches by design: docs/hardening.md.
 */
export const PROTECTED_PATHS: readonly ProtectedPath[] = [
  {
    path: ".git",
    kind: "dir",
    writable: true,
    why: "a mount point, so the repository cannot be moved aside and replaced; git add, commit and log still work",
  }, // safety: protect-git
  { path: ".git/hooks", kind: "dir", writable: false, why: "the host's git runs these on commit, checkout and merge" }, // safety: protect-git-hooks
  {
    path: ".git/config",
    kind: "file",
    writable: false,
    absent: "dev-null",
    why: "core.hooksPath, core.fsmonitor, core.sshCommand, filters and aliases run on the host",
  }, // safety: protect-git-config
  {
    path: ".git/config.worktree",
    kind: "file",
    writable: false,
    absent: "none",
    why: "per-worktree config (core.fsmonitor, core.hooksPath) git reads when extensions.worktreeConfig is on; absent, git never reads it unless the read-only config turns that on, and then any stand-in makes git fail",
  }, // safety: protect-git-config-worktree
  {
    path: ".git/commondir",
    kind: "file",
    writable: false,
    absent: "none",
    why: "names the directory whose config, hooks, objects and refs the repository then uses",
  }, // safety: protect-git-commondir
  {
    path: ".git/info",
    kind: "dir",
    writable: false,
    why: "attributes (which filter and diff drivers run), exclude and sparse-checkout patterns the host's git reads",
  }, // safety: protect-git-info
  {
    path: ".git/worktrees",
    kind: "dir",
    writable: false,
    why: "each linked worktree's gitdir: its commondir, config.worktree and HEAD",
  }, // safety: protect-git-worktrees
  { path: ".git/modules", kind: "dir", writable: false, why: "each submodule's own config and hooks" }, // safety: protect-git-modules
  { path: ".gitmodules", kind: "file", writable: false, why: "submodule URLs the host's git fetches" }, // safety: protect-gitmodules
  {
    path: ".gitattributes",
    kind: "file",
    writable: false,
    why: "selects the filter, diff and merge drivers the host's git runs on checkout, add and diff (git-lfs's filter among them)",
  }, // safety: protect-gitattributes
  {
    path: ".lfsconfig",
    kind: "file",
    writable: false,
    why: "git-lfs's endpoint: the host's git-lfs sends the founder's credentials there",
  }, // safety: protect-lfsconfig
  {
    path: ".gitconfig",
    kind: "file",
    writable: false,
    why: "a shared config .git/config may include (include.path = ../.gitconfig), and git's global config where this directory is a HOME (sandbox-runtime's list)",
  }, // safety: protect-gitconfig
  {
    path: ".husky",
    kind: "dir",
    writable: false,
    why: "husky's hooks, which core.hooksPath names: the host's git runs them on commit",
  }, // safety: protect-husky
  {
    path: ".pre-commit-config.yaml",
    kind: "file",
    writable: false,
    why: "the hooks pre-commit runs on the host's git commit; a local hook's entry is any command",
  }, // safety: protect-pre-commit
  { path: "lefthook.yml", kind: "file", writable: false, why: "the commands lefthook's git hooks run on the host" }, // safety: protect-lefthook
  { path: ".lefthook.yml", kind: "file", writable: false, why: "the commands lefthook's git hooks run on the host" }, // safety: protect-lefthook-dot
  {
    path: ".github",
    kind: "dir",
    writable: false,
    why: "workflows CI runs with the repository's secrets once the founder pushes",
  }, // safety: protect-github
  {
    path: ".npmrc",
    kind: "file",
    writable: false,
    why: "npm's config: node-options, script-shell and git name programs the host's next npm command runs",
  }, // safety: protect-npmrc
  { path: ".yarnrc", kind: "file", writable: false, why: "yarn 1's yarn-path: the host's yarn runs the file it names" }, // safety: protect-yarnrc
  {
    path: ".yarnrc.yml",
    kind: "file",
    writable: false,
    why: "yarnPath and plugins: the host's yarn runs the files they name",
  }, // safety: protect-yarnrc-yml
  { path: ".pnpmfile.cjs", kind: "file", writable: false, why: "pnpm runs its hooks on the host's next install" }, // safety: protect-pnpmfile
  {
    path: ".cargo",
    kind: "dir",
    writable: false,
    why: "cargo's config: rustc-wrapper, target runners and aliases the host's cargo runs",
  }, // safety: protect-cargo
  {
    path: "mise.toml",
    kind: "file",
    writable: false,
    why: "mise's tasks, env and hooks; where mise is activated the host's shell runs its hooks on cd",
  }, // safety: protect-mise
  {
    path: ".mise.toml",
    kind: "file",
    writable: false,
    why: "mise's tasks, env and hooks; where mise is activated the host's shell runs its hooks on cd",
  }, // safety: protect-mise-dot
  {
    path: ".tool-versions",
    kind: "file",
    writable: false,
    why: "asdf and mise install and run the plugins and versions it names",
  }, // safety: protect-tool-versions
  { path: ".mcp.json", kind: "file", writable: false, why: "MCP servers Claude Code starts when run in the workspace" }, // safety: protect-mcp-json
  {
    path: ".claude",
    kind: "dir",
    writable: false,
    why: "hooks, commands, agents and settings Claude Code loads on the host",
  }, // safety: protect-claude
  { path: ".pi", kind: "dir", writable: false, why: "extensions and settings Pi loads on the host" }, // safety: protect-pi
  {
    path: ".codex",
    kind: "dir",
    writable: false,
    why: "Codex's project config and hooks (Codex's own protected paths)",
  }, // safety: protect-codex
  { path: ".agents", kind: "dir", writable: false, why: "the skills Codex loads (Codex's own protected paths)" }, // safety: protect-agents
  {
    path: ".gemini",
    kind: "dir",
    writable: false,
    why: "Gemini CLI's project settings: the MCP servers and hooks it starts on the host",
  }, // safety: protect-gemini
  {
    path: ".cursor",
    kind: "dir",
    writable: false,
    why: "Cursor's mcp.json and rules: the MCP servers it starts on the host",
  }, // safety: protect-cursor
  { path: ".vscode", kind: "dir", writable: false, why: "tasks and settings VS Code runs on the host" }, // safety: protect-vscode
  { path: ".idea", kind: "dir", writable: false, why: "run configurations a JetBrains IDE runs on the host" }, // safety: protect-idea
  { path: ".devcontainer", kind: "dir", writable: false, why: "lifecycle commands an editor runs on the host" }, // safety: protect-devcontainer
  { path: ".envrc", kind: "file", writable: false, why: "direnv runs it on the host on cd" }, // safety: protect-envrc
  {
    path: ".bashrc",
    kind: "file",
    writable: false,
    why: "a shell runs it where this directory is a HOME, as in a container that mounts the workspace as one (sandbox-runtime's list)",
  }, // safety: protect-bashrc
  {
    path: ".bash_profile",
    kind: "file",
    writable: false,
    why: "a login shell runs it where this directory is a HOME (sandbox-runtime's list)",
  }, // safety: protect-bash-profile
  {
    path: ".profile",
    kind: "file",
    writable: false,
    why: "a login shell runs it where this directory is a HOME (sandbox-runtime's list)",
  }, // safety: protect-profile
  {
    path: ".zshrc",
    kind: "file",
    writable: false,
    why: "zsh runs it where this directory is a HOME or ZDOTDIR (sandbox-runtime's list)",
  }, // safety: protect-zshrc
  {
    path: ".zprofile",
    kind: "file",
    writable: false,
    why: "a zsh login shell runs it where this directory is a HOME or ZDOTDIR (sandbox-runtime's list)",
  }, // safety: protect-zprofile
  {
    path: ".ripgreprc",
    kind: "file",
    writable: false,
    why: "ripgrep's config where RIPGREP_CONFIG_PATH names it; its --pre runs a program on every file searched (sandbox-runtime's list)",
  }, // safety: protect-ripgreprc
  ...familyRows(PROTECTED_FAMILIES.lefthook), // safety: protect-lefthook-family
  ...familyRows(PROTECTED_FAMILIES.mise), // safety: protect-mise-family
  ...familyRows(PROTECTED_FAMILIES.config), // safety: protect-config-dir
  ...familyRows(PROTECTED_FAMILIES.devcontainer), // safety: protect-devcontainer-json
  ...familyRows(PROTECTED_FAMILIES.ci), // safety: protect-ci-family
];

/** A mount point bwrap creates on the host for a protected path that did not exist. */
export interface MountStub {
  path: string;
  kind: Kind;
}

/**
 * The binds that protect the workspace's code-that-runs-later, in mount order, and the mount stubs
 * bwrap will create on the host for missing paths (the launcher removes them when the session
 * ends, if they are still empty). A protected path that is a link is refused: a bind would land
 * on its target, and the link itself could be replaced.
 */
export function protectedBinds(
  workspace: string,
  fs: FsView,
): { binds: Array<Omit<Bind, "why" | "row"> & { why: string }>; mountStubs: MountStub[] } {
  const binds: Array<Omit<Bind, "why" | "row"> & { why: string }> = [];
  const mountStubs: MountStub[] = [];
  const covered: string[] = [];
  for (const row of PROTECTED_PATHS) {
    // Under a mount stub or a read-only parent there is nothing more to protect.
    if (covered.some((c) => row.path.startsWith(c + "/"))) continue; // safety: protected-prefix-covers-siblings
    const p = `${workspace}/${row.path}`;
    const e = fs.lstat(p);
    // safety: protected-link-accepted
    if (e.kind === "link")
      throw new MosaicError(
        "protected-link",
        p,
        `is a symbolic link (to ${e.target}); a protected path must be a real file or directory, or absent`,
      );
    if (e.kind === "unreadable")
      throw new MosaicError("protected-unreadable", p, `cannot be examined (${e.why}), so it cannot be protected`);
    // Missing: a read-only stand-in, so the session cannot create it either.
    if (e.kind === "missing") {
      // safety: protected-absent-creatable
      const standIn = row.absent ?? "empty-dir";
      if (standIn === "none") continue;
      binds.push(
        standIn === "empty-dir"
          ? { source: null, inside: p, mode: "ro-empty", why: `absent, kept absent: ${row.why}` }
          : { source: "/dev/null", inside: p, mode: "ro", why: `absent, kept absent: ${row.why}` },
      );
      mountStubs.push({ path: p, kind: standIn === "empty-dir" ? "dir" : "file" });
      covered.push(row.path);
      continue;
    }
    // A worktree's .git is a file naming its gitdir: read-only, and nothing under it to protect.
    const writable = row.writable && e.kind === "dir";
    binds.push({ source: p, inside: p, mode: writable ? "rw" : "ro", why: row.why }); // safety: protected-writable
    if (!writable) covered.push(row.path);
  }
  return { binds, mountStubs };
}
