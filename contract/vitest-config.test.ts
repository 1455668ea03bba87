// The test configuration a verdict rests on: every tier fails a test that runs no assertion, so a
// test that returns before its checks, or whose only expect sits in a callback that never runs,
// is a failure, not a pass. Checked on the shipped config, and shown on a real vitest run.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("vitest-config");
afterAll(() => scratch.remove());

/** Each project's block of the shipped config, by name: the text from its name to the next. */
function projectBlocks(text: string): Record<string, string> {
  const parts = text.split(/\bname: "/).slice(1);
  return Object.fromEntries(parts.map((p) => [p.slice(0, p.indexOf('"')), p]));
}

describe("the tiers' vitest config", () => {
  it("every project requires an assertion in every test", () => {
    // Read as text: the layer table keeps the tiers from importing the root's configs.
    const text = readFileSync(join(REPO_ROOT, "vitest.config.ts"), "utf8").replace(/\/\/.*$/gm, "");
    expect(text, "one setting, shared").toMatch(/^const expect = \{ requireAssertions: true \};/m);
    const blocks = projectBlocks(text);
    expect(Object.keys(blocks)).toEqual(["contract", "selftest", "live", "matrix"]);
    for (const [name, block] of Object.entries(blocks))
      expect(block, `${name} uses it, unchanged`).toMatch(/^\s+expect,$/m);
    expect(text.match(/\bexpect\b/g)?.length, "named nowhere else, so no project overrides it").toBe(5);
  });

  it("on a real run, a test whose only assertion sits in a callback that never runs fails; control: the same test whose callback runs passes", () => {
    const dir = scratch.root;
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      "export default { test: { globals: true, include: ['*.test.mjs'], expect: { requireAssertions: true } } };\n",
    );
    const body = (calls: string) =>
      `it("checks the rows", () => {\n  const rows = [${calls}];\n  rows.forEach((r) => expect(r).toBe(1));\n});\n`;
    writeFileSync(join(dir, "neutered.test.mjs"), body(""));
    writeFileSync(join(dir, "control.test.mjs"), body("1"));
    const out = join(dir, "report.json");
    const r = spawnSync(
      join(REPO_ROOT, "node_modules/.bin/vitest"),
      ["run", "--root", dir, "--config", join(dir, "vitest.config.mjs"), "--reporter=json", `--outputFile.json=${out}`],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, CI: "true" } },
    );
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      testResults: { name: string; status: string }[];
    };
    const status = Object.fromEntries(report.testResults.map((t) => [t.name.slice(dir.length + 1), t.status]));
    expect(status).toEqual({ "neutered.test.mjs": "failed", "control.test.mjs": "passed" });
    expect(r.status, "the run fails").toBe(1);
  });
});
