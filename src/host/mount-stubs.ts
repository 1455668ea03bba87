import { lstatSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import type { MountStub } from "../core/sandbox/protected.ts";

/**
 * Removes the mount points bwrap made in the host's workspace for protected paths that did not
 * exist, once the session is gone. Only what is still an empty file or directory of the planned
 * kind goes; anything else is left and reported, so nothing the host put there is ever lost.
 */
export function removeMountStubs(list: readonly MountStub[]): { removed: string[]; kept: string[] } {
  const removed: string[] = [];
  const kept: string[] = [];
  for (const p of list) {
    try {
      // lstat: a link the host put there is not the placeholder, whatever it points to.
      const st = lstatSync(p.path); // safety: placeholder-follows-link
      if (p.kind === "file" && st.isFile() && st.size === 0)
        unlinkSync(p.path); // safety: placeholder-deletes-host-file
      else if (p.kind === "dir" && st.isDirectory() && readdirSync(p.path).length === 0) rmdirSync(p.path);
      else {
        kept.push(p.path);
        continue;
      }
      removed.push(p.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") kept.push(p.path);
    }
  }
  return { removed, kept };
}
