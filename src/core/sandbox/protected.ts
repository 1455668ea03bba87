import type { FsView } from "../gate/fs-view.ts";
import { MosaicError } from "../errors.ts";
import type { Bind } from "./types.ts";

type Kind = "dir" | "file";

/**
 * Paths inside the workspace that something on the host later runs or loads: the session may not
 * write them, and may not create them where they are missing. Seeded from sandbox-runtime's
 * mandatory deny list and Codex's protected `.git`. `.git` itself is listed so it is a mount point:
 * a mount point cannot be renamed or removed, so `.git` cannot be moved aside and replaced by a
 * fresh repository with hooks of the session's own.
 */
export const PROTECTED_PATHS: readonly { path: string; kind: Kind; writable: boolean; why: string }[] = [
  { path: ".git", kind: "dir", writable: true, why: "a mount point, so the repository cannot be moved aside and replaced; git add, commit and log still work" }, // safety: protect-git
  { path: ".git/hooks", kind: "dir", writable: false, why: "the host's git runs these on commit, checkout and merge" }, // safety: protect-git-hooks
  { path: ".git/config", kind: "file", writable: false, why: "core.hooksPath, core.fsmonitor, core.sshCommand, filters and aliases run on the host" }, // safety: protect-git-config
  { path: ".git/modules", kind: "dir", writable: false, why: "each submodule's own config and hooks" }, // safety: protect-git-modules
  { path: ".gitmodules", kind: "file", writable: false, why: "submodule URLs the host's git fetches" }, // safety: protect-gitmodules
  { path: ".mcp.json", kind: "file", writable: false, why: "MCP servers Claude Code starts when run in the workspace" }, // safety: protect-mcp-json
  { path: ".claude", kind: "dir", writable: false, why: "hooks, commands, agents and settings Claude Code loads on the host" }, // safety: protect-claude
  { path: ".pi", kind: "dir", writable: false, why: "extensions and settings Pi loads on the host" }, // safety: protect-pi
  { path: ".vscode", kind: "dir", writable: false, why: "tasks and settings VS Code runs on the host" }, // safety: protect-vscode
  { path: ".idea", kind: "dir", writable: false, why: "run configurations a JetBrains IDE runs on the host" }, // safety: protect-idea
  { path: ".devcontainer", kind: "dir", writable: false, why: "lifecycle commands an editor runs on the host" }, // safety: protect-devcontainer
  { path: ".envrc", kind: "file", writable: false, why: "direnv runs it on the host on cd" }, // safety: protect-envrc
];

/** A mount point bwrap creates on the host for a protected path that did not exist. */
export interface Placeholder {
  path: string;
  kind: Kind;
}

/**
 * The binds that protect the workspace's code-that-runs-later, in mount order, and the placeholders
 * bwrap will create on the host for missing paths (the launcher removes them when the session
 * ends, if they are still empty). A protected path that is a link is refused: a bind would land
 * on its target, and the link itself could be replaced.
 */
export function protectedBinds(workspace: string, fs: FsView): { binds: Array<Omit<Bind, "why" | "row"> & { why: string }>; placeholders: Placeholder[] } {
  const binds: Array<Omit<Bind, "why" | "row"> & { why: string }> = [];
  const placeholders: Placeholder[] = [];
  const covered: string[] = [];
  for (const row of PROTECTED_PATHS) {
    // Under a placeholder or a read-only parent there is nothing more to protect.
    if (covered.some((c) => row.path.startsWith(c + "/"))) continue;
    const p = `${workspace}/${row.path}`;
    const e = fs.lstat(p);
    if (e.kind === "link") throw new MosaicError("protected-link", p, `is a symbolic link (to ${e.target}); a protected path must be a real file or directory, or absent`);
    if (e.kind === "unreadable") throw new MosaicError("protected-unreadable", p, `cannot be examined (${e.why}), so it cannot be protected`);
    // Missing: a read-only empty stand-in, so the session cannot create it either.
    if (e.kind === "missing") { // safety: protected-absent-creatable
      binds.push(row.kind === "dir"
        ? { source: null, inside: p, mode: "ro-empty", why: `absent, kept absent: ${row.why}` }
        : { source: "/dev/null", inside: p, mode: "ro", why: `absent, kept absent: ${row.why}` });
      placeholders.push({ path: p, kind: row.kind });
      covered.push(row.path);
      continue;
    }
    // A worktree's .git is a file naming its gitdir: read-only, and nothing under it to protect.
    const writable = row.writable && e.kind === "dir";
    binds.push({ source: p, inside: p, mode: writable ? "rw" : "ro", why: row.why }); // safety: protected-writable
    if (!writable) covered.push(row.path);
  }
  return { binds, placeholders };
}
