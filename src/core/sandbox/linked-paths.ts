import type { FsView } from "../gate/fs-view.ts";
import { MosaicError } from "../errors.ts";
import type { SandboxSpec } from "./types.ts";

/**
 * The first component of an absolute, normalised path that is a symbolic link, with its target, or
 * null. bwrap binds what a link points to, so every check made on the path's text (not in HOME,
 * not in the run directory, the workspace's lock) would judge one tree and bind another.
 */
export function linkOnPath(fs: FsView, path: string): { at: string; target: string } | null {
  const parts = path.split("/").filter((p) => p !== "");
  for (let i = 1; i <= parts.length; i++) {
    const at = `/${parts.slice(0, i).join("/")}`;
    const e = fs.lstat(at);
    if (e.kind === "link") return { at, target: e.target };
  }
  return null;
}

/** Refuses a workspace or run directory reached through a link, naming the link. */
export function refuseLinkedPaths(spec: Pick<SandboxSpec, "workspace" | "runDir">, fs: FsView): void {
  for (const [field, path] of [
    ["workspace", spec.workspace],
    ["runDir", spec.runDir],
  ] as const) {
    const link = linkOnPath(fs, path);
    // safety: path-through-link-accepted
    if (link !== null)
      throw new MosaicError(
        "path-through-link",
        field,
        `${path} goes through ${link.at}, a symbolic link to ${link.target}: the sandbox would bind the link's target, which no check of ${path} saw; name the directory itself`,
      );
  }
}
