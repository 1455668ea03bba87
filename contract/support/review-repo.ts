// A real git repository for the review's forgery tests: files committed on main, a topic branch
// whose commits a test makes, and the review's command line run in it.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { main } from "../../src/review/cli.ts";

export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  }).toString();
}

/** Writes files (a null removes one) and commits them on the current branch; the new commit. */
export function commit(dir: string, files: Record<string, string | null>, message = "change"): string {
  for (const [p, text] of Object.entries(files)) {
    const file = join(dir, p);
    if (text === null) rmSync(file, { force: true });
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "--allow-empty", "-m", message);
  return git(dir, "rev-parse", "HEAD").trim();
}

/** A repository at dir with files on main, checked out on a new branch `topic`; main's commit. */
export function makeRepo(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "review@example.invalid");
  git(dir, "config", "user.name", "review");
  const base = commit(dir, files, "base");
  git(dir, "checkout", "-q", "-b", "topic");
  return base;
}

export function review(dir: string, ...args: string[]): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = main(
    args,
    dir,
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}
