import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readProvenRun, treeHash, writeProof } from "../src/mutation/proven-run.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

// The mutation runner takes a green `npm test` instead of its own before- and after-runs only for
// the very tree that run was of: each way a report can fail to stand for this tree is refused here,
// with its reason, and a report that does stand gives the runner the tests and their times.
const scratch = makeScratch("proven-run");
afterAll(() => scratch.remove());

const junit = (cases: Array<{ file: string; name: string; body?: string }>) =>
  `<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites>\n${[...new Set(cases.map((c) => c.file))]
    .map(
      (f) =>
        `<testsuite name="${f}">\n${cases
          .filter((c) => c.file === f)
          .map(
            (c) =>
              `<testcase classname="${f}" name="${c.name.replaceAll(">", "&gt;")}" time="0.25">${c.body ?? ""}</testcase>`,
          )
          .join("\n")}\n</testsuite>`,
    )
    .join("\n")}\n</testsuites>\n`;

function repo(name: string): string {
  const root = join(scratch.root, name);
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, ".gitignore"), "reports/\n");
  execFileSync("git", ["init", "-q", root]);
  execFileSync("git", ["-C", root, "add", "."]);
  mkdirSync(join(root, "reports/junit"), { recursive: true });
  return root;
}

const FILES = ["contract/a.test.ts", "live/b.test.ts"];
const GREEN = [
  { file: "contract/a.test.ts", name: "a > one" },
  { file: "live/b.test.ts", name: "b > two" },
];

describe("readProvenRun", () => {
  it("a green report of this very tree stands for the run: every test passed, with its time", () => {
    const root = repo("green");
    writeFileSync(join(root, "reports/junit/all.xml"), junit(GREEN));
    writeProof(root, join(root, "reports/junit/all.xml"));
    const p = readProvenRun(root, ["reports/junit/all.xml"], FILES);
    expect(p.kind === "proven" && p.outcome.tests, "the tests, as the runner names them").toEqual([
      { test: "contract/a.test.ts > a > one", state: "passed", durationMs: 250 },
      { test: "live/b.test.ts > b > two", state: "passed", durationMs: 250 },
    ]);
  });
  it("a linked folder (a worktree's node_modules) hashes as its link, and a new target changes the hash", () => {
    const root = repo("linked");
    mkdirSync(join(scratch.root, "modules-a"), { recursive: true });
    symlinkSync(join(scratch.root, "modules-a"), join(root, "node_modules"));
    const linked = treeHash(root);
    expect(linked).toMatch(/^[0-9a-f]{64}$/);
    rmSync(join(root, "node_modules"));
    symlinkSync(join(scratch.root, "modules-b"), join(root, "node_modules"));
    expect(treeHash(root)).not.toBe(linked);
  });

  it("a changed file, even untracked, makes the report another tree's", () => {
    const root = repo("changed");
    writeFileSync(join(root, "reports/junit/all.xml"), junit(GREEN));
    writeProof(root, join(root, "reports/junit/all.xml"));
    const before = treeHash(root);
    writeFileSync(join(root, "src/a.ts"), "export const a = 2;\n");
    expect(treeHash(root), "one byte changes the hash").not.toBe(before);
    const p = readProvenRun(root, ["reports/junit/all.xml"], FILES);
    expect(p.kind === "unproven" && p.why).toMatch(/^reports\/junit\/all\.xml is of tree [0-9a-f]{12}, not this one/);
    writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
    writeFileSync(join(root, "src/new.ts"), "new\n");
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES).kind, "a new untracked file counts too").toBe(
      "unproven",
    );
  });
  it("a report with no proof beside it, a failed or skipped case, or a file it never ran is refused", () => {
    const root = repo("bad");
    const report = join(root, "reports/junit/all.xml");
    writeFileSync(report, junit(GREEN));
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES), "no proof").toEqual({
      kind: "unproven",
      why: expect.stringMatching(/is of an unrecorded tree/),
    });
    writeFileSync(report, junit([GREEN[0]!, { ...GREEN[1]!, body: '<failure message="x"/>' }]));
    writeProof(root, report);
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES), "a failed case").toEqual({
      kind: "unproven",
      why: "reports/junit/all.xml: live/b.test.ts > b > two failed",
    });
    writeFileSync(report, junit([GREEN[0]!, { ...GREEN[1]!, body: "<skipped/>" }]));
    writeProof(root, report);
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES), "a skipped case").toEqual({
      kind: "unproven",
      why: "reports/junit/all.xml: live/b.test.ts > b > two was skipped",
    });
    writeFileSync(report, junit([GREEN[0]!]));
    writeProof(root, report);
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES), "a file no report ran").toEqual({
      kind: "unproven",
      why: "no proven report ran live/b.test.ts",
    });
  });
  it("outside a git work tree nothing is proven", () => {
    const root = join(scratch.root, "no-git");
    mkdirSync(root, { recursive: true });
    expect(treeHash(root)).toBeNull();
    expect(readProvenRun(root, ["reports/junit/all.xml"], FILES).kind).toBe("unproven");
  });
});
