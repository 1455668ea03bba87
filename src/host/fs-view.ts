import { lstatSync, readlinkSync } from "node:fs";
import type { FsEntry, FsView } from "../core/gate/fs-view.ts";

/** The gate's FsView over the real filesystem: lstat, and readlink for a link. Never throws. */
export function realFsView(): FsView {
  return { lstat: lstatReal };
}

function lstatReal(path: string): FsEntry {
  try {
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined) return { kind: "missing" };
    if (st.isSymbolicLink()) return { kind: "link", target: readlinkSync(path, "utf8") };
    if (st.isDirectory()) return { kind: "dir" };
    return { kind: "file" };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A name under a file: the kernel says ENOTDIR; for the gate there is nothing there.
    if (code === "ENOTDIR") return { kind: "missing" };
    return { kind: "unreadable", why: code ?? String(e) }; // safety: fs-view-error-as-missing
  }
}
