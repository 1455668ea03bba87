// `npm run mutants -- --since <ref>`: a pull request's own mutants. The selection is pure over the
// changes; the changes are read from a real git repository with commits, an uncommitted edit, an
// untracked file and a changed catalog entry.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Mutant } from "../src/mutation/catalog.ts";
import { main } from "../src/mutation/cli.ts";
import { readChanges, selectSince, type Changes } from "../src/mutation/since.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const FIXTURE = join(import.meta.dirname, "fixtures/mutation-project");

const mutant = (id: string, file: string, killer: string): Mutant => ({
  id,
  file,
  find: "x",
  replace: "y",
  undoes: "a protection",
  killedBy: [`${killer} > a test`],
  source: "mutants/x.json",
});

const CATALOG = [
  mutant("in-a", "src/a.ts", "tests/a.spec.ts"),
  mutant("in-b", "src/b.ts", "tests/b.spec.ts"),
  mutant("in-c", "src/c.ts", "tests/c.spec.ts"),
];
const none: Changes = { files: new Set(), entries: new Set() };
const ids = (changes: Changes) => selectSince(CATALOG, changes).map((s) => `${s.mutant.id}: ${s.why}`);

describe("--since selects a mutant when", () => {
  it("nothing of it changed: it is not selected (the control for the three below)", () => {
    expect(ids(none)).toEqual([]);
    expect(ids({ files: new Set(["README.md", "src/other.ts"]), entries: new Set(["gone"]) })).toEqual([]);
  });

  it("its mutated file changed", () => {
    expect(ids({ ...none, files: new Set(["src/b.ts"]) })).toEqual(["in-b: mutated file"]);
  });

  it("a killer test file of it changed", () => {
    expect(ids({ ...none, files: new Set(["tests/c.spec.ts"]) })).toEqual(["in-c: killer test file"]);
  });

  it("its catalog entry is new or changed", () => {
    expect(ids({ ...none, entries: new Set(["in-a"]) })).toEqual(["in-a: catalog entry"]);
  });

  it("the verdict cache cannot answer it, though nothing of it changed", () => {
    const picked = selectSince(CATALOG, { ...none, files: new Set(["src/a.ts"]) }, new Set(["in-a", "in-c"]));
    expect(picked.map((s) => `${s.mutant.id}: ${s.why}`)).toEqual(["in-a: mutated file", "in-c: cache miss"]);
  });
});

describe("--since reads the changes from git", () => {
  const scratch = makeScratch("since");
  afterAll(() => scratch.remove());
  const repo = join(scratch.root, "repo");
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@invalid", ...args], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch.root, GIT_CONFIG_NOSYSTEM: "1" },
    });
  const write = (path: string, text: string) => {
    mkdirSync(join(repo, path, ".."), { recursive: true });
    writeFileSync(join(repo, path), text);
  };
  const entry = (id: string, undoes: string) => ({ ...mutant(id, `src/${id}.ts`, `tests/${id}.spec.ts`), undoes });

  it("committed, uncommitted and untracked changes, and a changed or new catalog entry; nothing else", () => {
    mkdirSync(repo, { recursive: true });
    git("init", "-q");
    for (const f of ["src/a.ts", "src/b.ts", "tests/a.spec.ts", "tests/b.spec.ts", "README.md"]) write(f, "one\n");
    write("mutants/x.json", JSON.stringify([entry("a", "one"), entry("b", "one")], null, 2));
    git("add", ".");
    git("commit", "-qm", "base");
    git("tag", "base");
    write("src/a.ts", "two\n");
    git("commit", "-qam", "a commit after the base");
    write("tests/b.spec.ts", "two\n");
    write("tests/new.spec.ts", "untracked\n");
    write("mutants/x.json", JSON.stringify([entry("a", "one"), entry("b", "two"), entry("c", "new")], null, 2));
    const changes = readChanges(repo, "base");
    if ("error" in changes) throw new Error(changes.error);
    expect([...changes.files].sort()).toEqual(["mutants/x.json", "src/a.ts", "tests/b.spec.ts", "tests/new.spec.ts"]);
    expect([...changes.entries].sort(), "b changed, c is new, a is as it was").toEqual(["b", "c"]);
    const head = readChanges(repo, "HEAD");
    expect(head).toMatchObject({ entries: new Set(["b", "c"]) });
    expect([...(head as Changes).files].sort(), "against HEAD the committed change is no change").toEqual([
      "mutants/x.json",
      "tests/b.spec.ts",
      "tests/new.spec.ts",
    ]);
  });

  it("a ref git cannot find is refused, naming it, and the run exits 2", async () => {
    expect(readChanges(repo, "no-such-ref")).toEqual({
      error: `--since no-such-ref: not a commit git can find in ${repo}`,
    });
    const out: string[] = [];
    // The fixture project's catalog: this checkout's own may read as stale where its files are
    // instrumented (the generated sweep runs this test on StrykerJS's copy), which exits 1 first.
    expect(await main(["--since", "no-such-ref"], FIXTURE, (s) => out.push(s)), out.join("\n")).toBe(2);
    expect(out.join("\n")).toContain("--since no-such-ref: not a commit git can find");
  });
});
