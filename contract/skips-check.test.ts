// The check that no tier passes CI on a skipped or todo test, on reports vitest's junit reporter
// really wrote (contract/fixtures/junit/): one with a skip and a todo, one where every test ran.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { findSkipProblems, readJunitCases } from "../src/mutation/junit.ts";

const FIXTURES = join(REPO_ROOT, "contract/fixtures/junit");
const SKIPPY = join(FIXTURES, "skip-and-todo.xml");
const CLEAN = join(FIXTURES, "all-ran.xml");
const check = (env: NodeJS.ProcessEnv, ...reports: string[]) =>
  spawnSync(process.execPath, [join(REPO_ROOT, "scripts/skips-check.ts"), ...reports], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, ...env },
  });

describe("no tier passes CI on a skipped or todo test", () => {
  it("reads every test case, its file and whether it was skipped", () => {
    const cases = readJunitCases(readFileSync(SKIPPY, "utf8"));
    expect(cases.map((c) => [c.suite, c.name, c.skipped])).toEqual([
      ["a.test.ts", "tier > passes", false],
      ["a.test.ts", "tier > is skipped", true],
      ["a.test.ts", "tier > is todo", true],
      ["a.test.ts", 'tier > has <xml> & "quotes"', false],
    ]);
  });
  it("names each skip and todo, a missing report and an empty one; nothing for a whole run", () => {
    expect(findSkipProblems("t.xml", readFileSync(SKIPPY, "utf8"))).toEqual([
      "t.xml: skipped or todo: a.test.ts > tier > is skipped",
      "t.xml: skipped or todo: a.test.ts > tier > is todo",
    ]);
    expect(findSkipProblems("t.xml", null)).toEqual([expect.stringMatching(/no report/)]);
    expect(findSkipProblems("t.xml", '<?xml version="1.0"?>\n<testsuites tests="0">\n</testsuites>\n')).toEqual([
      expect.stringMatching(/no test case/),
    ]);
    expect(findSkipProblems("t.xml", readFileSync(CLEAN, "utf8"))).toEqual([]);
  });
  it("the script fails under CI=true on a skip (positive control) and passes on a whole run", () => {
    const skipped = check({ CI: "true" }, CLEAN, SKIPPY);
    expect(skipped.status, skipped.stderr).toBe(1);
    expect(skipped.stderr).toContain("skipped or todo: a.test.ts > tier > is todo");
    expect(check({ CI: "true" }, join(FIXTURES, "absent.xml")).status, "a missing report fails under CI").toBe(1);
    const clean = check({ CI: "true" }, CLEAN);
    expect(clean.status, clean.stderr).toBe(0);
  });
  it("outside CI it lists the skips and does not fail", () => {
    const local = check({}, SKIPPY);
    expect(local.status).toBe(0);
    expect(local.stderr).toContain("skipped or todo: a.test.ts > tier > is skipped");
  });
});
