import { lstatSync, realpathSync } from "node:fs";
import type { PathStat } from "../core/sandbox/reach.ts";

/** Every component of `path`'s real path from the root down, as lstat() sees it. */
export function statChain(path: string): PathStat[] {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return [{ path, kind: "missing", mode: 0, uid: -1, gid: -1 }];
  }
  const parts = real.split("/").filter(Boolean);
  const out: PathStat[] = [];
  for (let i = 0; i <= parts.length; i++) {
    const p = "/" + parts.slice(0, i).join("/");
    try {
      const st = lstatSync(p);
      const kind = st.isDirectory()
        ? "dir"
        : st.isFile()
          ? "file"
          : st.isSocket()
            ? "socket"
            : st.isSymbolicLink()
              ? "link"
              : "other";
      out.push({ path: p, kind, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid });
    } catch {
      out.push({ path: p, kind: "missing", mode: 0, uid: -1, gid: -1 });
      break;
    }
  }
  return out;
}
