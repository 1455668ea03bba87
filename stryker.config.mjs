// npm run mutants:sweep: StrykerJS's generated mutants over the confinement modules and the
// verification engine's verdict code, killed (or not) by the contract tier. docs/mutants.md,
// "The generated sweep", says how to read it and how each survivor is triaged.
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.sweep.config.ts" },
  // Each mutant runs only the contract tests that reached its code in the dry run.
  coverageAnalysis: "perTest",
  mutate: [
    "src/core/**/*.ts",
    "src/host/runner/**/*.ts",
    "src/host/launcher.ts",
    "src/host/recover.ts",
    "src/host/model-proxy.ts",
    "src/host/tool-client.ts",
    "src/host/claude-gate.ts",
    "src/host/pi-extension.ts",
    "src/host/gate-report.ts",
    "src/conformance/scenario/assert.ts",
    "src/conformance/scenario/run.ts",
    "src/conformance/scenario/verdict.ts",
    "src/mutation/verdict.ts",
    "src/review/rules.ts",
    "scripts/goldens-check.ts",
    "scripts/skips-check.ts",
  ],
  // A static mutant (a module-level table's entry) reruns every covering test with the module
  // reloaded: hours over src/core. The tables that hold a protection are the catalog's mutants.
  ignoreStatic: true,
  reporters: ["clear-text", "progress-append-only", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/sweep/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/sweep/mutation.html" },
  // Kept between runs under reports/: a mutant whose code and covering tests did not change keeps its verdict.
  incremental: true,
  incrementalFile: "reports/mutation/sweep/stryker-incremental.json",
  ignorePatterns: ["runs", ".scratch", "reports", "/var"],
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  timeoutMS: 30_000,
  thresholds: { high: 90, low: 75, break: null },
};
