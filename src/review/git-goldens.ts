// The review's shell: which goldens differ between a base revision and the work tree, and their two
// texts. Read-only: git runs with optional locks off, so not even the index's stat cache is written.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { GoldenPair } from "./classify.ts";

export class GitError extends Error {}

const GIT_ENV = { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };

function git(root: string, args: readonly string[], input?: string): Buffer {
  const r = spawnSync("git", args, { cwd: root, env: GIT_ENV, input, maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw new GitError(`git ${args[0]}: ${r.error.message}`);
  if (r.status !== 0) throw new GitError(`git ${args.join(" ")}: ${r.stderr.toString().trim() || `exit ${r.status}`}`);
  return r.stdout;
}

const tryGit = (root: string, args: readonly string[]): string | null => {
  try {
    return git(root, args).toString().trim();
  } catch {
    return null;
  }
};

export function findRepoRoot(cwd: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--show-toplevel"], {
      cwd,
      env: GIT_ENV,
      stdio: ["ignore", "pipe", "pipe"],
    })
      .toString()
      .trim();
  } catch {
    throw new GitError(`${cwd} is not inside a git work tree`);
  }
}

/** The commit the work tree is compared with, and how it was chosen. */
export type Base = { commit: string; label: string };

/** The commit a revision names; a GitError naming `what` when there is none. */
export function requireCommit(root: string, rev: string, what: string): string {
  const commit = tryGit(root, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  if (!commit) throw new GitError(`${what} ${rev}: not a commit in this repository`);
  return commit;
}

/** `--head REV`: the commit compared, or null for the work tree. */
export function resolveHead(root: string, rev: string | undefined): string | null {
  return rev === undefined ? null : requireCommit(root, rev, "--head");
}

/**
 * `--base REF`: the merge base of REF and the head (HEAD for the work tree), or REF itself when
 * history is too shallow to find one. No REF: the merge base with main (origin/main when there is
 * no local main), else HEAD.
 */
export function resolveBase(root: string, ref: string | undefined, head: string | null = null): Base {
  const short = (c: string) => c.slice(0, 12);
  const against = head ?? "HEAD";
  const name = head === null ? "HEAD" : short(head);
  if (ref !== undefined) {
    const commit = tryGit(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    if (!commit) throw new GitError(`--base ${ref}: not a commit in this repository`);
    const mb = tryGit(root, ["merge-base", commit, against]);
    if (!mb) return { commit, label: `${ref} (${short(commit)}; no merge base with ${name} in this history)` };
    return {
      commit: mb,
      label: mb === commit ? `${ref} (${short(mb)})` : `${short(mb)}, the merge base of ${ref} and ${name}`,
    };
  }
  if (head !== null) throw new GitError("--head needs --base: the revision it is compared with");
  const tip = tryGit(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (!tip) throw new GitError("HEAD is not a commit: nothing to compare the work tree with");
  for (const main of ["main", "origin/main"]) {
    if (!tryGit(root, ["rev-parse", "--verify", "--quiet", `${main}^{commit}`])) continue;
    const mb = tryGit(root, ["merge-base", main, "HEAD"]);
    if (mb)
      return {
        commit: mb,
        label: mb === tip ? `HEAD (${short(tip)})` : `${short(mb)}, the merge base of ${main} and HEAD`,
      };
  }
  return { commit: tip, label: `HEAD (${short(tip)})` };
}

/** Texts of many `<commit>:<path>` objects from one `git cat-file --batch`. */
function readBlobs(root: string, commit: string, paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const buf = git(root, ["cat-file", "--batch"], paths.map((p) => `${commit}:${p}`).join("\n") + "\n");
  let at = 0;
  for (const p of paths) {
    const nl = buf.indexOf(10, at);
    const head = buf.subarray(at, nl).toString();
    at = nl + 1;
    if (head.endsWith(" missing")) continue;
    const size = Number(head.split(" ")[2]);
    out.set(p, buf.subarray(at, at + size).toString("utf8"));
    at += size + 1;
  }
  return out;
}

/**
 * Every file under `dir` (the whole tree when "") that differs between the base and the head, with
 * both texts: the head is a commit, or the work tree (tracked or not) when null. `keep` picks the
 * paths whose texts are read.
 */
export function readChangedFiles(
  root: string,
  base: Base,
  head: string | null,
  keep: (path: string) => boolean = () => true,
  dir = "",
): GoldenPair[] {
  const z = (b: Buffer) => b.toString("utf8").split("\0").filter(Boolean);
  const range = head === null ? [base.commit] : [base.commit, head];
  const spec = dir === "" ? ["."] : [dir];
  const status = z(git(root, ["diff", "--name-status", "--no-renames", "-z", ...range, "--", ...spec]));
  const paths = new Set<string>();
  for (let i = 0; i + 1 < status.length; i += 2) paths.add(status[i + 1]!);
  if (head === null)
    for (const p of z(git(root, ["ls-files", "-z", "--others", "--exclude-standard", "--", ...spec]))) paths.add(p);
  const sorted = [...paths].filter(keep).sort();
  const before = readBlobs(root, base.commit, sorted);
  const after = head === null ? null : readBlobs(root, head, sorted);
  return sorted.map((path) => {
    const file = join(root, path);
    const now = after ? (after.get(path) ?? null) : existsSync(file) ? readFileSync(file, "utf8") : null;
    return { path, before: before.get(path) ?? null, after: now };
  });
}

/** Every golden that differs between the base and the work tree (tracked or not), with both texts. */
export function readChangedGoldens(
  root: string,
  base: Base,
  dir = "goldens",
  head: string | null = null,
): GoldenPair[] {
  return readChangedFiles(root, base, head, () => true, dir);
}

/** A file's text at a commit, or null where it has none. */
export function readAt(root: string, commit: string, path: string): string | null {
  return readBlobs(root, commit, [path]).get(path) ?? null;
}

/** Files under dir (goldens/ by default), from root, sorted. */
export function listGoldenFiles(root: string, dir = "goldens"): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out;
}

/** The goldens that differ between two trees on disk (the catalog self-test's checkout and copy). */
export function readTreeGoldens(beforeRoot: string, afterRoot: string, dir = "goldens"): GoldenPair[] {
  const paths = [...new Set([...listGoldenFiles(beforeRoot, dir), ...listGoldenFiles(afterRoot, dir)])].sort();
  const read = (root: string, p: string) => (existsSync(join(root, p)) ? readFileSync(join(root, p), "utf8") : null);
  return paths
    .map((path) => ({ path, before: read(beforeRoot, path), after: read(afterRoot, path) }))
    .filter((p) => p.before !== p.after);
}
