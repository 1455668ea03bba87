// What a mutant's run loaded, seen from outside the processes: every file and folder under a tree
// copy has its access time set far in the past before a run, and the kernel moves it when any
// process of the run (the test, a node it spawns, a copy or listing it makes) opens the file or
// lists the folder. A read through a read-only mount (inside a sandbox) does not move it: the
// vitest module graph and the key's walk of named paths cover what a sandbox loads.
import { lstatSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { RecordedLoads } from "./cache-key.ts";

/** The access time every entry is set to before a run (seconds; far older than a day, so relatime moves it). */
const UNREAD = 1;
/** Not the tree's own files: linked packages, the host's vite cache, scratch. */
const SKIPPED = new Set(["node_modules", ".vite-cache", ".scratch", ".git", "reports"]);

type Entry = { rel: string; abs: string; dir: boolean; atime: number; mtime: number };

function walk(root: string): Entry[] {
  const out: Entry[] = [];
  const visit = (abs: string, rel: string) => {
    for (const d of readdirSync(abs, { withFileTypes: true })) {
      if (SKIPPED.has(d.name) || !(d.isFile() || d.isDirectory())) continue;
      const p = join(abs, d.name);
      const st = lstatSync(p);
      const r = rel ? `${rel}/${d.name}` : d.name;
      out.push({ rel: r, abs: p, dir: d.isDirectory(), atime: st.atimeMs / 1000, mtime: st.mtimeMs / 1000 });
      if (d.isDirectory()) visit(p, r);
    }
  };
  visit(root, "");
  return out;
}

/** Sets every entry that was read since (or never set) back to unread: the next run starts clean. */
export function armReads(root: string): void {
  for (const e of walk(root)) if (e.atime !== UNREAD) utimesSync(e.abs, UNREAD, e.mtime);
}

/** The files and folders read since the tree was last armed, each set unread again: one walk per run. */
export function takeReads(root: string): RecordedLoads {
  const read = walk(root).filter((e) => e.atime !== UNREAD);
  for (const e of read) utimesSync(e.abs, UNREAD, e.mtime);
  return { files: read.filter((e) => !e.dir).map((e) => e.rel), folders: read.filter((e) => e.dir).map((e) => e.rel) };
}

/**
 * Whether a read moves the access time on this file system (a noatime mount does not): written,
 * set unread, read, looked at. When it does not, no run's loads are known, and no verdict is kept.
 */
export function readsAreVisible(dir: string): boolean {
  const probe = join(dir, ".atime-probe");
  writeFileSync(probe, "probe");
  utimesSync(probe, UNREAD, lstatSync(probe).mtimeMs / 1000);
  readFileSync(probe);
  return lstatSync(probe).atimeMs / 1000 !== UNREAD;
}

/** Both runs' loads as one, each path once; the module graph's absolute paths made relative to root. */
export function mergeLoads(root: string, a: RecordedLoads | undefined, b: RecordedLoads): RecordedLoads {
  const rel = (p: string) => (p.startsWith("/") ? relative(root, p) : p);
  return {
    files: [...new Set([...(a?.files ?? []), ...b.files.map(rel)])].filter((f) => !f.startsWith("..")).sort(),
    folders: [...new Set([...(a?.folders ?? []), ...b.folders.map(rel)])].sort(),
  };
}
