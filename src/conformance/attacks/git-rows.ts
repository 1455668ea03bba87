// The attack table's rows for git metadata that runs code on the host (issue 18, finding 2) and for
// setuid plants (finding 1). Each session script plants what a reviewer planted; then the host's own
// git runs as the founder would (as the world's uid, HOME the founder's stand-in, with
// `safe.directory=*` so git's ownership check does not mask the attack). `through` means the host's
// git ran the session's command (a marker appears) or wrote outside the workspace (the founder's
// ~/.bashrc gained the session's line), or a setuid file is left in the workspace.
// A function, not a constant: table.ts spreads it while this module may not be evaluated yet.
import { spawnSync } from "node:child_process";
import {
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { protectedRow, type AttackRow } from "./table.ts";
import type { AttackWorld } from "./world.ts";

/** The file the host's git makes when it runs the session's command. */
function marker(w: AttackWorld, id: string): string {
  return join(w.root, `host-ran-${id}`);
}

/** A command for git to run: it touches the marker and ignores the arguments git adds. */
function touchMarker(w: AttackWorld, id: string): string {
  return `touch ${marker(w, id)};:`;
}

/** A shell line run on the host as the founder: the world's uid, the founder's HOME, no system config. */
function asFounder(w: AttackWorld, cwd: string, line: string): { status: number | null; out: string } {
  const self = process.getuid?.() ?? -1;
  const r = spawnSync("/bin/sh", ["-c", line], {
    cwd,
    encoding: "utf8",
    timeout: 20_000,
    env: {
      PATH: "/usr/bin:/bin",
      HOME: w.stand.founderHome,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "founder",
      GIT_AUTHOR_EMAIL: "founder@invalid",
      GIT_COMMITTER_NAME: "founder",
      GIT_COMMITTER_EMAIL: "founder@invalid",
    },
    ...(self === 0 && w.uid !== 0 ? { uid: w.uid, gid: w.uid } : {}),
  });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

/** The founder's `git status` in dir (after `cd`, for a directory whose name no string can hold): true when the session's command ran. */
function hostGitRan(w: AttackWorld, id: string, dir: string, gitArgs = "status", cd = ""): boolean {
  rmSync(marker(w, id), { force: true });
  asFounder(w, dir, `${cd}git -c safe.directory='*' ${gitArgs}`);
  return existsSync(marker(w, id));
}

const pristine = (w: AttackWorld) => join(w.root, "pristine");

/** Copies the workspace (and the founder's ~/.bashrc) aside, owners and modes kept, before a row changes them. */
function savePristine(w: AttackWorld): void {
  rmSync(pristine(w), { recursive: true, force: true });
  const r = spawnSync("cp", ["-a", w.ws, join(pristine(w))], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cp -a ${w.ws}: ${r.stderr}`);
  copyFileSync(w.stand.files.bashrc, `${pristine(w)}.bashrc`);
}

/** Puts the workspace back exactly as savePristine() found it, and the founder's ~/.bashrc. */
function restorePristine(w: AttackWorld): void {
  if (!existsSync(pristine(w))) return;
  // Names as bytes: one that is not UTF-8 decodes to another name, which rm would not find.
  for (const n of readdirSync(w.ws, { encoding: "buffer" }))
    rmSync(Buffer.concat([Buffer.from(`${w.ws}/`), n]), { recursive: true, force: true });
  if (readdirSync(w.ws).length > 0) throw new Error(`${w.ws}: not emptied before the pristine copy`);
  const r = spawnSync("cp", ["-a", `${pristine(w)}/.`, `${w.ws}/`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cp -a back to ${w.ws}: ${r.stderr}`);
  copyFileSync(`${pristine(w)}.bashrc`, w.stand.files.bashrc);
  rmSync(pristine(w), { recursive: true, force: true });
  rmSync(`${pristine(w)}.bashrc`, { force: true });
  for (const n of readdirSync(w.root)) if (n.startsWith("host-ran-")) rmSync(join(w.root, n), { force: true });
}

/** A file the world's uid owns, as the founder would have made it. */
function writeOwned(w: AttackWorld, path: string, body: string): void {
  writeFileSync(path, body);
  if (w.uid !== (process.getuid?.() ?? -1)) chownSync(path, w.uid, w.uid);
}

/** Every regular file under dir with the setuid or setgid bit, never through a link. */
function setidFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    const st = lstatSync(p);
    if (st.isDirectory()) return setidFiles(p);
    return st.isFile() && (st.mode & 0o6000) !== 0 ? [p] : [];
  });
}

/** The session's repository of its own beside the workspace's, with core.fsmonitor, and commondir pointed at it. */
function plantCommondir(w: AttackWorld, id: string): string {
  return [
    `cd "${w.ws}" || exit 1`,
    "git init -q --bare .evil && cp -r .git/objects/. .evil/objects/ && cp -r .git/refs/. .evil/refs/",
    "[ -f .git/packed-refs ] && cp .git/packed-refs .evil/",
    "git config -f .evil/config core.bare false",
    `git config -f .evil/config core.fsmonitor '${touchMarker(w, id)}'`,
    "echo ../.evil > .git/commondir && echo POINTED",
  ].join("\n");
}

export function gitRows(): AttackRow[] {
  return [
    {
      id: "git-commondir",
      klass: "git metadata",
      what: ".git/commondir pointed at a repository of the session's own runs nothing on the host's git status",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      script: (w) => plantCommondir(w, "git-commondir"),
      through: (_r, w) => hostGitRan(w, "git-commondir", w.ws),
    },
    {
      id: "git-commondir-rewrite",
      klass: "git metadata",
      what: "an existing .git/commondir cannot be pointed at a repository of the session's own",
      layers: ["protected:.git/commondir", "end-check"],
      // The host's own commondir saying "." (the git directory itself): read-only to the session.
      setup: (w) => {
        savePristine(w);
        writeOwned(w, join(w.ws, ".git/commondir"), ".\n");
      },
      teardown: restorePristine,
      script: (w) => plantCommondir(w, "git-commondir-rewrite"),
      through: (_r, w) => hostGitRan(w, "git-commondir-rewrite", w.ws),
    },
    {
      id: "git-config-worktree",
      klass: "git metadata",
      what: "an existing .git/config.worktree (extensions.worktreeConfig on) cannot name a core.fsmonitor",
      // The end-of-session check moves a config.worktree git would not have written aside too.
      layers: ["protected:.git/config.worktree", "end-check"],
      setup: (w) => {
        savePristine(w);
        writeOwned(
          w,
          join(w.ws, ".git/config"),
          `${readFileSync(join(w.ws, ".git/config"), "utf8")}[extensions]\n\tworktreeConfig = true\n`,
        );
        writeOwned(w, join(w.ws, ".git/config.worktree"), "");
      },
      teardown: restorePristine,
      script: (w) =>
        `printf '[core]\\n\\tfsmonitor = %s\\n' '${touchMarker(w, "git-config-worktree")}' >> "${w.ws}/.git/config.worktree" && echo WROTE`,
      through: (_r, w) => hostGitRan(w, "git-config-worktree", w.ws),
    },
    {
      id: "git-logs-link",
      klass: "git metadata",
      what: "a link in .git/logs to the founder's ~/.bashrc gets no line from the host's git stash",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      // The stash's reflog line ends with HEAD's subject, which the session chose.
      script: (w) =>
        [
          `cd "${w.ws}" || exit 1`,
          "git -c user.name=s -c user.email=s@invalid commit -q --allow-empty -m '; echo planted-by-the-session #'",
          "mkdir -p .git/logs/refs",
          `ln -s "${w.stand.files.bashrc}" .git/logs/refs/stash && echo LINKED`,
        ].join("\n"),
      through: (_r, w) => {
        asFounder(w, w.ws, `echo "the founder's own edit" >> inside.txt && git -c safe.directory='*' stash`);
        return readFileSync(w.stand.files.bashrc, "utf8").includes("planted-by-the-session");
      },
    },
    {
      id: "git-nested-repo",
      klass: "git metadata",
      what: "a nested sub/.git with core.fsmonitor runs nothing on the host's git status in sub/",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      script: (w) =>
        `cd "${w.ws}" && git init -q sub && git -C sub config core.fsmonitor '${touchMarker(w, "git-nested-repo")}' && echo NESTED`,
      through: (_r, w) => hostGitRan(w, "git-nested-repo", join(w.ws, "sub")),
    },
    {
      id: "git-root-repo",
      klass: "git metadata",
      what: "a workspace without .git cannot be made a repository (HEAD, config, objects, refs) that the host's git status obeys",
      layers: ["end-check"],
      setup: (w) => {
        savePristine(w);
        rmSync(join(w.ws, ".git"), { recursive: true, force: true });
      },
      teardown: restorePristine,
      script: (w) =>
        [
          `cd "${w.ws}" || exit 1`,
          "printf 'ref: refs/heads/main\\n' > HEAD && mkdir -p objects refs/heads",
          `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = %s\\n\\tfsmonitor = %s\\n' '${w.ws}' '${touchMarker(w, "git-root-repo")}' > config && echo PLANTED`,
        ].join("\n"),
      through: (_r, w) => hostGitRan(w, "git-root-repo", w.ws),
    },
    {
      id: "git-fifo-head",
      klass: "host code on the session's tree",
      what: "a FIFO named HEAD beside objects/ and refs/ does not hang the host's git status there (git discovers the directory and opens the FIFO)",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      script: (w) => `cd "${w.ws}" && mkdir -p fifo/objects fifo/refs && mkfifo fifo/HEAD && echo PLANTED`,
      through: (_r, w) => asFounder(w, w.ws, `cd fifo && timeout 5 git -c safe.directory='*' status`).status === 124,
    },
    {
      id: "name-not-utf8",
      klass: "host code on the session's tree",
      what: "under a name that is not UTF-8, a nested repository with core.fsmonitor runs nothing on the host's git status, and a setuid file loses its bit",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      script: (w) =>
        [
          `cd "${w.ws}" && mkdir "$(printf 'bad\\377')" && cd "$(printf 'bad\\377')"`,
          "cp /usr/bin/id id-copy && chmod 4755 id-copy",
          `git init -q sub && git -C sub config core.fsmonitor '${touchMarker(w, "name-not-utf8")}' && echo PLANTED`,
        ].join(" && "),
      // Either is through: the nested repository's command ran, or a setuid file is left (find reads names as bytes).
      through: (_r, w) =>
        hostGitRan(w, "name-not-utf8", w.ws, "status", `cd "$(printf 'bad\\377')/sub" && `) ||
        asFounder(w, w.ws, "find . -type f -perm -4000 -print | grep -q .").status === 0,
    },
    {
      id: "setid-plant",
      klass: "setuid",
      what: "a file the session makes setuid and setgid in the workspace loses the bits when the session ends",
      layers: ["end-check"],
      setup: savePristine,
      teardown: restorePristine,
      script: (w) => `cp /usr/bin/id "${w.ws}/id-copy" && chmod 6755 "${w.ws}/id-copy" && ls -ln "${w.ws}/id-copy"`,
      through: (_r, w) => setidFiles(w.ws).length > 0,
    },
    // The protected paths the anchors and the tools a founder runs add: written, or created, never.
    protectedRow("git-info", ".git/info/attributes", ".git/info", "which filter and diff drivers the host's git runs"),
    protectedRow("git-worktrees", ".git/worktrees/evil/locked", ".git/worktrees", "a linked worktree's git directory"),
    protectedRow("gitattributes", ".gitattributes", ".gitattributes", "filter and diff drivers the host's git runs"),
    protectedRow("lfsconfig", ".lfsconfig", ".lfsconfig", "where git-lfs sends the founder's credentials"),
    protectedRow("gitconfig", ".gitconfig", ".gitconfig", "a config the repository's may include"),
    protectedRow("husky", ".husky/pre-commit", ".husky", "husky's hooks"),
    protectedRow("pre-commit-config", ".pre-commit-config.yaml", ".pre-commit-config.yaml", "pre-commit's hooks"),
    protectedRow("lefthook", "lefthook.yml", "lefthook.yml", "lefthook's commands"),
    protectedRow("lefthook-dot", ".lefthook.yml", ".lefthook.yml", "lefthook's commands"),
    protectedRow("github-workflows", ".github/workflows/ci.yml", ".github", "workflows CI runs with secrets"),
    protectedRow("npmrc", ".npmrc", ".npmrc", "programs npm runs"),
    protectedRow("yarnrc", ".yarnrc", ".yarnrc", "yarn 1's yarn-path"),
    protectedRow("yarnrc-yml", ".yarnrc.yml", ".yarnrc.yml", "yarnPath and plugins"),
    protectedRow("pnpmfile", ".pnpmfile.cjs", ".pnpmfile.cjs", "pnpm's install hooks"),
    protectedRow("cargo-config", ".cargo/config.toml", ".cargo", "cargo's wrappers, runners and aliases"),
    protectedRow("mise", "mise.toml", "mise.toml", "mise's tasks and hooks"),
    protectedRow("mise-dot", ".mise.toml", ".mise.toml", "mise's tasks and hooks"),
    protectedRow("tool-versions", ".tool-versions", ".tool-versions", "the plugins asdf and mise run"),
    protectedRow("codex-config", ".codex/config.toml", ".codex", "Codex's project config"),
    protectedRow("agents-skills", ".agents/skills/evil/SKILL.md", ".agents", "the skills Codex loads"),
    protectedRow("gemini-settings", ".gemini/settings.json", ".gemini", "Gemini CLI's MCP servers and hooks"),
    protectedRow("cursor-mcp", ".cursor/mcp.json", ".cursor", "Cursor's MCP servers"),
    protectedRow("dot-bashrc", ".bashrc", ".bashrc", "what a shell runs where this is a HOME"),
    protectedRow("dot-bash-profile", ".bash_profile", ".bash_profile", "what a login shell runs where this is a HOME"),
    protectedRow("dot-profile", ".profile", ".profile", "what a login shell runs where this is a HOME"),
    protectedRow("dot-zshrc", ".zshrc", ".zshrc", "what zsh runs where this is a HOME"),
    protectedRow("dot-zprofile", ".zprofile", ".zprofile", "what a zsh login shell runs where this is a HOME"),
    protectedRow("dot-ripgreprc", ".ripgreprc", ".ripgreprc", "ripgrep's --pre programs"),
  ];
}
