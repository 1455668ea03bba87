// The golden review's shell and faces: its command line, git reading a real scratch repository
// (and writing nothing, not even the index), the Markdown and JSON reports, and the catalog
// self-test's verdict on one mutant.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { reviewGoldens, type GoldenPair } from "../src/review/classify.ts";
import { EXPECTED_WITHOUT_WEAKENS, isFailure, judgeMutant } from "../src/review/catalog-verdict.ts";
import { main, parseReviewArgs } from "../src/review/cli.ts";
import { GitError, readChangedGoldens, resolveBase } from "../src/review/git-goldens.ts";
import { COMMENT_MARKER, renderJson, renderMarkdown } from "../src/review/render.ts";

const scratch = makeScratch("review-git");
afterAll(() => scratch.remove());

const H = " · regenerate: npm run goldens:update";
const BINDS = `# bind table: fixture${H}\nsource | inside | mode | why\n<run> | <run> | rw | the run\n<run>/bundle | <run>/bundle | ro | stays as written\n`;
const ENV = `# ENV_ALLOW: the only host variables a session gets${H}\nvariable | why\nPATH | finding sh\n`;

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  }).toString();
}

/** A repository with goldens committed on main, then a branch whose work tree changes them. */
function makeRepo(name: string): string {
  const dir = join(scratch.root, name);
  mkdirSync(join(dir, "goldens/sandbox/binds"), { recursive: true });
  mkdirSync(join(dir, "goldens/session"), { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "review@example.invalid");
  git(dir, "config", "user.name", "review");
  writeFileSync(join(dir, "goldens/sandbox/binds/a.txt"), BINDS);
  writeFileSync(join(dir, "goldens/session/env-allow.txt"), ENV);
  writeFileSync(join(dir, "goldens/session/gone.txt"), "# a golden that goes\nx\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "goldens");
  git(dir, "checkout", "-q", "-b", "topic");
  // Committed on the branch: the bundle becomes writable.
  writeFileSync(join(dir, "goldens/sandbox/binds/a.txt"), BINDS.replace("<run>/bundle | ro", "<run>/bundle | rw"));
  git(dir, "commit", "-q", "-am", "bundle rw");
  // In the work tree only: an allowed variable, a new golden, a removed one.
  writeFileSync(join(dir, "goldens/session/env-allow.txt"), ENV + "GH_TOKEN | convenient\n");
  writeFileSync(join(dir, "goldens/session/new.txt"), "# a new golden\ny\n");
  rmSync(join(dir, "goldens/session/gone.txt"));
  return dir;
}

function run(dir: string, ...args: string[]): { code: number; out: string; err: string } {
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

describe("goldens:review command line", () => {
  it("reads --base, --head, --markdown, --json and --github, and refuses the rest", () => {
    expect(parseReviewArgs([])).toEqual({
      kind: "review",
      base: undefined,
      head: undefined,
      format: "text",
      github: undefined,
    });
    expect(parseReviewArgs(["--base", "origin/main", "--head=abc", "--markdown", "--github", "d"])).toEqual({
      kind: "review",
      base: "origin/main",
      head: "abc",
      format: "markdown",
      github: "d",
    });
    expect(parseReviewArgs(["--base=HEAD~1", "--json"])).toMatchObject({ base: "HEAD~1", format: "json" });
    expect(parseReviewArgs(["--base"])).toMatchObject({ kind: "usage-error" });
    expect(parseReviewArgs(["--base", "--json"])).toMatchObject({ kind: "usage-error" });
    expect(parseReviewArgs(["--head", "x"]), "a head needs a base").toMatchObject({ kind: "usage-error" });
    expect(parseReviewArgs(["--markdown", "--json"])).toMatchObject({ kind: "usage-error" });
    expect(
      parseReviewArgs(["--approve", "goldens/a.txt", "--why", "w"]),
      "no approval is written by a flag",
    ).toMatchObject({
      kind: "usage-error",
      message: 'unknown argument "--approve"',
    });
    expect(parseReviewArgs(["--frobnicate"])).toMatchObject({
      kind: "usage-error",
      message: 'unknown argument "--frobnicate"',
    });
  });

  it("exits 2 on a usage error and on a base that is no commit", () => {
    const dir = makeRepo("usage");
    expect(run(dir, "--nope").code).toBe(2);
    const bad = run(dir, "--base", "no-such-ref");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--base no-such-ref: not a commit");
    expect(run("/", "--json").code, "outside a git work tree").toBe(2);
  });
});

describe("goldens:review against git", () => {
  it("compares the work tree with the merge base of main: committed, changed, new and removed goldens", () => {
    const dir = makeRepo("merge-base");
    const base = resolveBase(dir, undefined);
    expect(base.commit).toBe(git(dir, "rev-parse", "main").trim());
    expect(base.label).toContain("the merge base of main and HEAD");
    const pairs = readChangedGoldens(dir, base);
    expect(pairs.map((p) => [p.path, p.before !== null, p.after !== null])).toEqual([
      ["goldens/sandbox/binds/a.txt", true, true],
      ["goldens/session/env-allow.txt", true, true],
      ["goldens/session/gone.txt", true, false],
      ["goldens/session/new.txt", false, true],
    ]);
    const rules = reviewGoldens(pairs).findings.map((f) => `${f.verdict} ${f.rule}`);
    expect(rules).toEqual([
      "weakens mount-widened",
      "weakens env-allow-added",
      "weakens golden-removed",
      "unknown null",
    ]);
  });

  it("--base names any commit; on main with nothing changed the review is empty and exits 0", () => {
    const dir = makeRepo("on-main");
    expect(run(dir, "--base", "HEAD").out).toContain("3 goldens changed");
    git(dir, "stash", "-q", "-u");
    git(dir, "checkout", "-q", "main");
    const r = run(dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain("golden review: 0 weakens · 0 unknown · 0 strengthens · 0 neutral · 0 goldens changed");
    expect(r.out).toContain("base: HEAD (");
  });

  it("exits 1 when something weakens, and writes neither the work tree nor the index", () => {
    const dir = makeRepo("read-only");
    const status = git(dir, "status", "--porcelain");
    const index = readFileSync(join(dir, ".git/index"));
    const mtime = statSync(join(dir, ".git/index")).mtimeMs;
    const r = run(dir, "--json");
    expect(r.code).toBe(1);
    const json = JSON.parse(r.out) as { counts: Record<string, number>; findings: { verdict: string }[] };
    expect(json.counts.weakens).toBe(3);
    // Read before git status below, which refreshes the index itself.
    expect(readFileSync(join(dir, ".git/index")).equals(index), "the index is byte for byte what it was").toBe(true);
    expect(statSync(join(dir, ".git/index")).mtimeMs, "the index was not rewritten").toBe(mtime);
    expect(git(dir, "status", "--porcelain")).toBe(status);
  });

  it("throws a GitError, not a crash, for a base it cannot resolve", () => {
    expect(() => resolveBase(makeRepo("bad-base"), "nope^{tree}")).toThrow(GitError);
  });
});

describe("the report's faces", () => {
  const pairs: GoldenPair[] = [
    {
      path: "goldens/sandbox/binds/a.txt",
      before: BINDS,
      after: BINDS.replace("<run>/bundle | ro", "<run>/bundle | rw").replace("stays as written", "stays | as written"),
    },
    { path: "goldens/other/x.txt", before: "# x\n`a`\n", after: "# x\n`b`\n" },
  ];
  const report = reviewGoldens(pairs);

  it("Markdown: marked for the comment, weakens first, pipes escaped, backticks fenced, neutral folded", () => {
    const md = renderMarkdown(report, "abc (test)");
    expect(md.startsWith(COMMENT_MARKER)).toBe(true);
    expect(md.indexOf("#### weakens")).toBeLessThan(md.indexOf("#### unknown"));
    expect(md).toContain("`stays \\| as written`");
    expect(md).toContain("`` `b` ``");
    expect(md).toMatch(/<details><summary>neutral \(1\)<\/summary>/);
    // Every table row has the six cells of its heading: no unescaped pipe splits a cell.
    for (const row of md.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| golden")))
      expect(row.replace(/\\\|/g, "").split("|").length, row).toBe(8);
  });

  it("JSON: counts and findings for scripts", () => {
    const j = JSON.parse(renderJson(report, "b")) as {
      base: string;
      counts: Record<string, number>;
      findings: unknown[];
    };
    expect(j.base).toBe("b");
    expect(j.counts).toEqual({ weakens: 1, unknown: 2, strengthens: 0, neutral: 1 });
    expect(j.findings).toHaveLength(4);
  });
});

describe("the catalog self-test's verdict on a mutant", () => {
  const weakening = reviewGoldens([
    {
      path: "goldens/sandbox/binds/a.txt",
      before: BINDS,
      after: BINDS.replace("<run>/bundle | ro", "<run>/bundle | rw"),
    },
  ]);
  const neutralOnly = reviewGoldens([
    { path: "goldens/session/env-allow.txt", before: ENV, after: ENV.replace("finding sh", "finding the shell") },
  ]);
  const strengthening = reviewGoldens([
    {
      path: "goldens/sandbox/binds/a.txt",
      before: BINDS,
      after: BINDS.replace("<run> | <run> | rw", "<run> | <run> | ro"),
    },
  ]);

  it("a weakens line passes; only neutral is a finding; no golden change is neither", () => {
    expect(judgeMutant("m", weakening)).toEqual({ kind: "weakens", lines: 1, goneOnly: false });
    expect(isFailure(judgeMutant("m", neutralOnly)), "only neutral: a rule to add").toBe(true);
    expect(judgeMutant("m", reviewGoldens([]))).toEqual({ kind: "no-golden-change" });
    expect(isFailure(judgeMutant("m", reviewGoldens([])))).toBe(false);
  });

  it("only strengthens is a finding unless the mutant is listed, with its why, as rightly no weakening", () => {
    expect(isFailure(judgeMutant("m", strengthening))).toBe(true);
    const listed = Object.keys(EXPECTED_WITHOUT_WEAKENS).find(
      (k) => EXPECTED_WITHOUT_WEAKENS[k]!.verdict === "strengthens",
    )!;
    expect(judgeMutant(listed, strengthening)).toMatchObject({ kind: "expected", verdict: "strengthens" });
    expect(
      isFailure(judgeMutant(listed, neutralOnly)),
      "a listed mutant that shows only neutral is still a finding",
    ).toBe(true);
    const neutral = Object.keys(EXPECTED_WITHOUT_WEAKENS).find(
      (k) => EXPECTED_WITHOUT_WEAKENS[k]!.verdict === "neutral",
    )!;
    expect(judgeMutant(neutral, neutralOnly)).toMatchObject({ kind: "expected", verdict: "neutral" });
    expect(
      isFailure(judgeMutant(neutral, strengthening)),
      "a mutant listed as neutral that shows strengthens is a finding",
    ).toBe(true);
  });
});
