// The proof review against forgeries a hostile pull request can make, each on a real git
// repository: a catalog mutant and its tag deleted, an equivalence argued into the sweep's table,
// tests neutered (`it.fails`, an early return under a variable, a describe under a condition, a
// test renamed away, a knob lowered), a verdict input edited. Each forgery must make the review
// exit 1 naming the rule; each control, the same steps without the forgery, exits 0.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { diffTestFile } from "../src/review/proof-tests.ts";
import { readTestInventory } from "../src/review/test-inventory.ts";
import { commit, makeRepo, review } from "./support/review-repo.ts";

const scratch = makeScratch("review-proof");
afterAll(() => scratch.remove());

const TAG = ["//", "safety:"].join(" ");
// The scratch repository's table; built from parts, since this checkout's own table is a path the
// sweep's --changed treats as inert and this test does not read it.
const EQUIVALENT_MD = ["mutants", "equivalent.md"].join("/");
const LOCK = `export function lock(s: { locked: boolean }): void {\n  s.locked = true; ${TAG} keep-lock\n}\n\nexport const other = 1;\n`;
const MUTANT = {
  id: "keep-lock",
  file: "src/lock.ts",
  find: `  s.locked = true; ${TAG} keep-lock`,
  replace: `  s.locked = false; ${TAG} keep-lock`,
  undoes: "The lock is taken.",
  killedBy: ["contract/lock.test.ts > lock > locks"],
};
const EQUIVALENT = `# Equivalent mutants\n\n| file | mutator | code | replacement | why |\n|---|---|---|---|---|\n| src/lock.ts | BooleanLiteral | \`true\` | \`false\` | no caller reads it |\n`;
const TESTS = `const lock = (s: { locked: boolean }) => (s.locked = true);

const N = Number(process.env.MOSAIC_LOAD_N ?? 16);

describe("lock", () => {
  it("locks", () => {
    const s = { locked: false };
    lock(s);
    expect(s.locked).toBe(true);
  });

  it("locks many", () => {
    for (let i = 0; i < N; i++) expect(i).toBeLessThan(N);
  }, 30_000);
});
`;
const FILES = {
  "src/lock.ts": LOCK,
  "mutants/engine.json": `${JSON.stringify([MUTANT], null, 2)}\n`,
  [EQUIVALENT_MD]: EQUIVALENT,
  "contract/lock.test.ts": TESTS,
  "docs/notes.md": "notes\n",
};

let n = 0;
/** A repository with FILES on main and the topic branch checked out. */
function repo(): string {
  const dir = join(scratch.root, `r${n++}`);
  makeRepo(dir, FILES);
  return dir;
}

/** The proof findings of the review, as `verdict rule case`, and its exit code. */
function proofOf(dir: string): { code: number; lines: string[] } {
  const r = review(dir, "--base", "main", "--head", "HEAD", "--json");
  const json = JSON.parse(r.out) as { proof: { findings: { verdict: string; rule: string | null; case: string }[] } };
  return { code: r.code, lines: json.proof.findings.map((f) => `${f.verdict} ${f.rule} ${f.case}`) };
}

describe("the proof review: a control with no forgery passes", () => {
  it("a pull request that edits the tagged file and a doc, keeps every mutant, tag, row and test, exits 0", () => {
    const dir = repo();
    commit(dir, { "src/lock.ts": LOCK.replace("other = 1", "other = 2"), "docs/notes.md": "more notes\n" });
    expect(proofOf(dir)).toEqual({ code: 0, lines: [] });
  });
});

describe("the proof review flags what a pull request can hide from the proof", () => {
  it("a catalog mutant and its safety tag deleted together: both are weakenings", () => {
    const dir = repo();
    commit(dir, { "mutants/engine.json": "[]\n", "src/lock.ts": LOCK.replace(` ${TAG} keep-lock`, "") });
    const r = proofOf(dir);
    expect(r.lines, "the mutant and its tag, each named").toEqual([
      "weakens mutant-removed mutant keep-lock",
      "weakens safety-tag-removed safety tag keep-lock",
    ]);
    expect(r.code).toBe(1);
  });

  it("a mutant's find, replace or killers changed: each is a weakening", () => {
    const dir = repo();
    const weaker = {
      ...MUTANT,
      replace: MUTANT.replace.replace("false", "!!1"),
      killedBy: ["contract/lock.test.ts > lock > locks many"],
    };
    commit(dir, { "mutants/engine.json": `${JSON.stringify([weaker], null, 2)}\n` });
    expect(proofOf(dir)).toEqual({
      code: 1,
      lines: [
        "weakens mutant-replace-changed mutant keep-lock: replace",
        "weakens mutant-killer-changed mutant keep-lock: killedBy",
      ],
    });
  });

  it("a new argued-equivalent row, made up, is a weakening a reviewer must read", () => {
    const dir = repo();
    const row = "| src/lock.ts | BlockStatement | `{ ⏎ s.locked = true; ⏎ }` | `{}` | the lock is taken elsewhere |\n";
    commit(dir, { [EQUIVALENT_MD]: EQUIVALENT + row });
    const r = proofOf(dir);
    expect(r.lines).toEqual([
      "weakens equivalent-row-added row src/lock.ts · BlockStatement · { ⏎ s.locked = true; ⏎ } → {}",
    ]);
    expect(r.code).toBe(1);
  });

  it("an argued row that answers more places, or whose argument changed, is a weakening", () => {
    const dir = repo();
    const row = "| src/lock.ts | BooleanLiteral | `true` | `false` | no caller reads it |";
    commit(dir, {
      [EQUIVALENT_MD]: EQUIVALENT.replace(row, row.replace("BooleanLiteral", "BooleanLiteral ×2")),
    });
    expect(proofOf(dir).lines).toEqual([
      "weakens equivalent-places-raised row src/lock.ts · BooleanLiteral · true → false",
    ]);
    const other = repo();
    commit(other, { [EQUIVALENT_MD]: EQUIVALENT.replace("no caller reads it", "it does not matter") });
    expect(proofOf(other).lines).toEqual([
      "weakens equivalent-argument-changed row src/lock.ts · BooleanLiteral · true → false",
    ]);
  });

  it("a StrykerJS disable comment is a weakening", () => {
    const dir = repo();
    commit(dir, { "src/lock.ts": `// Stryker disable all\n${LOCK}` });
    expect(proofOf(dir)).toEqual({ code: 1, lines: ["weakens stryker-disable-added stryker disable"] });
  });

  it("it.fails, an early return under a variable, a describe under a condition, a renamed test and a lowered knob: each flagged", () => {
    const dir = repo();
    const neutered = TESTS.replace('it("locks", () => {\n', 'it.fails("locks", () => {\n')
      .replace("    for (let i", "    if (process.env.FAST) return;\n    for (let i")
      .replace('describe("lock", () => {', 'if (!process.env.SKIP_LOCK)\ndescribe("lock", () => {')
      .replace("?? 16", "?? 2")
      .replace('"locks many"', '"locks several"');
    commit(dir, { "contract/lock.test.ts": neutered });
    const r = proofOf(dir);
    expect(r.lines).toEqual([
      "weakens test-removed test lock > locks many",
      "weakens test-registered-under-condition describe lock",
      "weakens test-modifier-added test lock > locks",
      "weakens test-early-return test lock > locks several",
      "weakens test-env-read-added env SKIP_LOCK",
      "weakens test-env-read-added env FAST",
      "weakens test-knob-lowered knob default of MOSAIC_LOAD_N",
      "weakens test-knob-removed knob timeout of lock > locks many",
    ]);
    expect(r.code).toBe(1);
  });

  it("a test file removed: each of its tests is a weakening", () => {
    const dir = repo();
    commit(dir, { "contract/lock.test.ts": null });
    expect(proofOf(dir).lines).toEqual([
      "weakens test-removed test lock > locks",
      "weakens test-removed test lock > locks many",
    ]);
  });

  it("a verdict input changed (the test config, the sweep's committed report) is unknown until read", () => {
    const dir = repo();
    // The scratch repository's record, not this checkout's (which the sweep's --changed treats as inert).
    const record = ["mutants", "sweep", "inputs.json"].join("/");
    commit(dir, { "vitest.config.ts": "export default {};\n", [record]: "{}\n" });
    const r = proofOf(dir);
    expect(r.lines).toEqual(["unknown null file", "unknown null file"]);
    expect(r.code).toBe(1);
  });

  it("a helper, a fixture or a project setting tests rest on, changed with no test's own text changed, is unknown until read; control: a source beside them is not", () => {
    const dir = repo();
    const helpers = [
      "live/support/tool-socket-attack.cjs",
      "contract/support/proxy-host.ts",
      "contract/fixtures/case.json",
      "tsconfig.json",
      ".npmrc",
    ];
    commit(dir, Object.fromEntries(helpers.map((f) => [f, "weakened\n"])));
    const r = proofOf(dir);
    expect(r.lines, "one finding each").toEqual(helpers.map(() => "unknown null file"));
    expect(r.code).toBe(1);
    const control = repo();
    commit(control, { "src/core/notes.ts": "export const x = 1;\n", "docs/notes.md": "text\n" });
    expect(proofOf(control).lines, "control: no finding").toEqual([]);
  });
});

describe("a test file's inventory, read without running it", () => {
  it("names tests under their describes, their modifiers, conditions, loops, tables and knobs", () => {
    const inv = readTestInventory(
      "contract/x.test.ts",
      `const ROWS = [1, 2, 3] as const;\nconst BUDGET_MS = 5 * 1_000;\ndescribe.concurrent("d", () => {\n  for (const r of ROWS) it(\`row \${r}\`, () => { expect(r).toBe(r); });\n  it.skipIf(process.env.X)("s", () => {}, 10_000);\n  it("p", () => { fc.assert(p, { numRuns: 200 }); });\n});\n`,
    );
    expect(inv.sites.map((s) => [s.kind, s.name, s.modifiers.join(","), s.under.join(","), s.rows])).toEqual([
      ["describe", "d", "concurrent", "", null],
      ["test", "d > `row ${r}`", "", "for (const r of ROWS)", 3],
      ["test", "d > s", "skipIf(process.env.X)", "", null],
      ["test", "d > p", "", "", null],
    ]);
    expect(inv.envReads).toEqual({ X: 1 });
    expect(inv.knobs.map((k) => [k.key, k.value])).toEqual([
      ["const BUDGET_MS", 5000],
      ["timeout of d > s", 10_000],
      ["numRuns in d > p", 200],
    ]);
  });

  it("a table with fewer rows, and a raised retry, weaken; a raised bound needs a reader too", () => {
    const before = `const ROWS = [1, 2, 3];\nconst LIMIT = 10;\nfor (const r of ROWS) it(\`r\${r}\`, () => { expect(r).toBeLessThan(LIMIT); }, { retry: 0 });\n`;
    const after = before
      .replace("[1, 2, 3]", "[1]")
      .replace("LIMIT = 10", "LIMIT = 100")
      .replace("retry: 0", "retry: 3");
    expect(diffTestFile("contract/x.test.ts", before, after).map((f) => `${f.verdict} ${f.rule} ${f.case}`)).toEqual([
      "weakens test-rows-removed test `r${r}`",
      "weakens test-knob-raised knob const LIMIT",
      "weakens test-knob-lowered knob retry in `r${r}`",
    ]);
  });
});
