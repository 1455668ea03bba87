import { defineConfig } from "vitest/config";

// The contract tier as one project, for StrykerJS's vitest runner (npm run mutants:sweep): it
// runs a config's tests, not a project of a projects list. The selftest and live tiers stay out:
// a live test's sandbox does not pass Stryker's active-mutant switch to the code it runs.
export default defineConfig({
  test: {
    include: ["contract/**/*.test.ts"],
    // The tests that read this checkout's own source as text (the catalog's tags and finds, the
    // equivalent rows' code, function lengths, the docs' citations, the inert paths of --changed)
    // are left out: under the sweep they would read the instrumented copy, and none of them tests a
    // swept file. The contract tier runs them.
    exclude: [
      "contract/mutation-runner.test.ts",
      "contract/mutation-catalog.test.ts",
      "contract/sweep-triage.test.ts",
      "contract/sweep-scope.test.ts",
      "contract/function-length.test.ts",
      "contract/doc-citations.test.ts",
      // It runs the shipped code only in processes of its own (check-loop.ts), which no active
      // mutant reaches, so it can kill none; its races take half a minute of the dry run.
      "contract/workspace-race.test.ts",
    ],
    pool: "threads",
    isolate: false,
    maxWorkers: 2,
    globalSetup: ["contract/support/golden-log.ts", "contract/support/sweep-sandbox.ts"],
    // Instrumented code is slower: the golden review's every-line edit test, about 5 s plain, passes
    // 20 s instrumented on a loaded machine. StrykerJS's own timeoutMS bounds each mutant's run.
    testTimeout: 120_000,
  },
});
