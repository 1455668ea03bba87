// The end-of-session check's shell: walks the real workspace (never following a link), applies the
// remedies src/core/workspace decides, looks again, and returns the report. Called when a session
// ends (the launcher's exit handler) and by recover() for a session a dead host left behind.
import {
  chmodSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { inspectWorkspace } from "../core/workspace/inspect.ts";
import {
  planRemedies,
  relativeTo,
  reportOf,
  type Done,
  type Failed,
  type Remedy,
  type WorkspaceCheck,
} from "../core/workspace/remedy.ts";
import type { TreeStat, TreeView } from "../core/workspace/tree-view.ts";

/** The workspace as the check sees it: lstat, readdir, and a file's first bytes, never through a link. */
export function realTreeView(): TreeView {
  return {
    lstat(path) {
      try {
        const st = lstatSync(path); // safety: ws-view-no-follow
        const kind: TreeStat["kind"] = st.isSymbolicLink()
          ? "link"
          : st.isDirectory()
            ? "dir"
            : st.isFile()
              ? "file"
              : "other";
        return { kind, mode: st.mode & 0o7777 };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") return null;
        return { kind: "unreadable", mode: 0 };
      }
    },
    readdir(path) {
      try {
        return readdirSync(path).sort();
      } catch {
        return null;
      }
    },
    head(path, bytes) {
      let fd: number | null = null;
      try {
        // O_NOFOLLOW: never through a link; O_NONBLOCK: a fifo cannot hang the host.
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        if (!fstatSync(fd).isFile()) return null;
        const buf = Buffer.alloc(bytes);
        const n = readSync(fd, buf, 0, bytes, 0);
        return buf.subarray(0, n).toString("utf8");
      } catch {
        return null;
      } finally {
        if (fd !== null) closeSync(fd);
      }
    },
  };
}

/** A free name for `to`: itself, or with `~1`, `~2`... so an earlier move is never overwritten. */
function freeName(to: string): string {
  if (!existsSync(to)) return to;
  for (let i = 1; ; i++) if (!existsSync(`${to}~${i}`)) return `${to}~${i}`;
}

function apply(workspace: string, quarantine: string, r: Remedy): Done | Failed {
  const path = relativeTo(workspace, r.op === "move" ? r.from : r.path);
  try {
    if (r.op === "none") return { kind: r.kind, path, error: r.detail };
    if (r.op === "move") {
      mkdirSync(dirname(r.to), { recursive: true, mode: 0o700 });
      const to = freeName(r.to);
      try {
        renameSync(r.from, to); // safety: ws-move
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
        // Another filesystem: copy links as links, then remove the original.
        cpSync(r.from, to, {
          recursive: true,
          verbatimSymlinks: true,
          errorOnExist: true,
          force: false,
          preserveTimestamps: true,
        });
        rmSync(r.from, { recursive: true, force: true });
      }
      return { kind: r.kind, path, did: "moved", to: relativeTo(quarantine, to), detail: r.detail };
    }
    const st = lstatSync(r.path);
    if (!st.isFile()) return { kind: r.kind, path, error: "no longer a regular file" };
    chmodSync(r.path, st.mode & 0o7777 & ~0o6000); // safety: ws-clear-setid
    return {
      kind: r.kind,
      path,
      did: "cleared-setid",
      detail: `${r.detail} → ${(st.mode & 0o7777 & ~0o6000).toString(8)}`,
    };
  } catch (e) {
    return { kind: r.kind, path, error: (e as Error).message };
  }
}

/**
 * Checks a workspace whose session has ended, quarantines what the host's git would run or write
 * through under `quarantine` (made 0700; the founder's to read, nobody else's), clears setuid and
 * setgid bits, and looks again. Never throws: a check that cannot run reports `unsafe`.
 */
export function checkWorkspace(workspace: string, quarantine: string): WorkspaceCheck {
  try {
    const view = realTreeView();
    const remedies = planRemedies(workspace, quarantine, inspectWorkspace(workspace, view));
    if (remedies.length > 0) {
      mkdirSync(quarantine, { recursive: true, mode: 0o700 });
      chmodSync(dirname(quarantine), 0o700);
      chmodSync(quarantine, 0o700);
    }
    const results = remedies.map((r) => apply(workspace, quarantine, r));
    const done = results.filter((x): x is Done => "did" in x);
    const failed = results.filter((x): x is Failed => "error" in x);
    const report = reportOf(workspace, quarantine, done, failed, inspectWorkspace(workspace, view));
    if (report.verdict !== "clean") {
      mkdirSync(quarantine, { recursive: true, mode: 0o700 });
      writeFileSync(`${quarantine}/report.json`, JSON.stringify(report, null, 2) + "\n", { mode: 0o600 });
    }
    return report;
  } catch (e) {
    return {
      verdict: "unsafe",
      workspace,
      quarantine,
      done: [],
      failed: [{ kind: "check", path: ".", error: (e as Error).message }],
    };
  }
}
