// npm run mutants:sweep: StrykerJS's generated mutants over the confinement modules and the
// verification engine's verdict code, killed (or not) by the contract tier. docs/mutants.md,
// "The generated sweep", says how to read it and how each survivor is triaged.
/**
 * The sweep's scope (issue 22): src/core, the runner, the launcher, recover, the model proxy, the
 * tool client, the hook, the Pi extension and the verification engine's verdict code. Every
 * survivor here is triaged; one without a test, a tagged line or an equivalent.md row fails the run.
 */
export const SWEPT = [
  "src/core/**/*.ts",
  "src/review/rules.ts",
  "src/mutation/verdict.ts",
  "src/conformance/scenario/verdict.ts",
  "src/conformance/scenario/assert.ts",
  "src/host/tool-client.ts",
  "src/host/claude-gate.ts",
  "src/host/gate-report.ts",
  "src/host/pi-extension.ts",
  "src/host/runner/broker-client.ts",
  "src/host/runner/model-forward.ts",
  "src/host/launcher.ts",
  "src/host/runner/main.ts",
  "src/host/runner/turn.ts",
  "src/host/runner/turn-files.ts",
  "src/host/runner/tool-server.ts",
  "src/host/recover.ts",
  "src/host/model-proxy.ts",
  "src/host/model-proxy-serve.ts",
  "src/host/model-proxy-main.ts",
  "src/conformance/scenario/run.ts",
  "src/conformance/golden/golden.ts",
  "src/mutation/junit.ts",
];

export default {
  testRunner: "vitest",
  // Each mutant runs only the tests that covered it in the dry run, by id. vitest's `related` would
  // narrow that further to test files importing the mutated file, and so ran no test at all for a
  // module that only runs as a process of its own (the model proxy's entry): every mutant of it
  // "survived" untested.
  vitest: { configFile: "vitest.sweep.config.ts", related: false },
  // Each mutant runs only the contract tests that reached its code in the dry run.
  coverageAnalysis: "perTest",
  mutate: SWEPT,
  // A static mutant (a module-level table's entry) reruns every covering test with the module
  // reloaded: hours over src/core. The tables that hold a protection are the catalog's mutants.
  ignoreStatic: true,
  // Vitest strips types without checking them, so the // @ts-nocheck StrykerJS would put atop each
  // file buys nothing, and it shifts the lines of the files tests read (the mutation fixture's).
  disableTypeChecks: false,
  reporters: ["clear-text", "progress-append-only", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/sweep/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/sweep/mutation.html" },
  // Kept in the repository, so CI's clean clone reuses it: a mutant whose code and covering tests did
  // not change keeps its verdict; any change reruns it, so a stale file costs time, never a verdict.
  incremental: true,
  incrementalFile: "mutants/sweep/stryker-incremental.json",
  ignorePatterns: ["runs", ".scratch", "reports", "/var"],
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  timeoutMS: 30_000,
  // The dry run is the whole contract tier in one process with per-test coverage: minutes, more on
  // a loaded machine; StrykerJS's default of 5 minutes failed it.
  dryRunTimeoutMinutes: 20,
  thresholds: { high: 90, low: 75, break: null },
};
