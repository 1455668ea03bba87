import { MosaicError } from "../errors.ts";
import { shownPath } from "../workspace/bytes.ts";
import type { SessionIdentity } from "./types.ts";

/** One entry under a tree the launcher hands to the session, as lstat() saw it. */
export interface OwnedEntry {
  /** As bytes (src/core/workspace/bytes.ts): a name need not be UTF-8. */
  path: string;
  kind: "dir" | "file" | "link" | "other";
  uid: number;
  gid: number;
  /** Hard links to the inode; chown changes every one of them. */
  nlink: number;
}

/**
 * Which entries the launcher must chown (never following a link) so a root caller's session owns
 * its workspace and run directory. A file with another hard link that the session does not own
 * already is refused: the chown would hand over the other name too, which may lie anywhere on the
 * same filesystem (a root file linked in by the host).
 */
export function planHandover(id: SessionIdentity, entries: readonly OwnedEntry[]): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (e.uid === id.uid && e.gid === id.gid) continue;
    if (e.kind !== "dir" && e.kind !== "link" && e.nlink > 1)
      // safety: handover-follows-hardlinks
      throw new MosaicError(
        "handover-hardlink",
        shownPath(e.path),
        `has ${e.nlink} hard links and belongs to ${e.uid}:${e.gid}; handing it to the session (${id.uid}:${id.gid}) would hand over its other names too. Remove the extra link or copy the file`,
      );
    out.push(e.path);
  }
  return out;
}
