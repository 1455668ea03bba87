// Tree copies for the mutation runner and the golden review's catalog self-test: a copy of the
// project without dependencies, history or outputs, and the byte checks that prove a copy is back
// to the checkout's files after a mutant.
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";

/** Names kept out of a tree copy: dependencies are linked, history and outputs are not needed. */
const NOT_COPIED = new Set(["node_modules", ".git", ".scratch", "reports", ".vite-cache"]);

function nearestNodeModules(root: string): string | null {
  for (let d = root; ; d = dirname(d)) {
    const p = join(d, "node_modules");
    if (existsSync(p)) return realpathSync(p);
    if (dirname(d) === d) return null;
  }
}

/** A copy of the project without its dependencies, history and outputs; node_modules is linked. */
export function copyTree(root: string, dest: string): void {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  for (const name of readdirSync(root)) {
    if (NOT_COPIED.has(name)) continue;
    cpSync(join(root, name), join(dest, name), { recursive: true, filter: (src) => !NOT_COPIED.has(basename(src)) });
  }
  const nm = nearestNodeModules(root);
  if (nm) symlinkSync(nm, join(dest, "node_modules"), "dir");
}

/** A hash of every file under dir (paths and bytes), so any golden written or removed shows. */
export function hashDir(dir: string): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else
        h.update(relative(dir, p) + "\0")
          .update(readFileSync(p))
          .update("\0");
    }
  };
  walk(dir);
  return h.digest("hex");
}

/** Every file under dir by its path relative to dir, with its bytes. */
export function readFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/**
 * Puts dir back to the files in want (bytes, and no file more or less); returns the paths that
 * differed, under the prefix, sorted. Bless mode calls it after every run on a tree copy.
 */
export function restoreFiles(dir: string, want: ReadonlyMap<string, Buffer>, prefix: string): string[] {
  const have = readFiles(dir);
  const changed: string[] = [];
  for (const [rel, bytes] of want) {
    if (have.get(rel)?.equals(bytes)) continue;
    changed.push(rel);
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), bytes);
  }
  for (const rel of have.keys()) {
    if (want.has(rel)) continue;
    changed.push(rel);
    rmSync(join(dir, rel));
  }
  return changed.sort().map((r) => join(prefix, r));
}
