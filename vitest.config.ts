import { defineConfig } from "vitest/config";

// Every project: a test that runs no assertion fails. A test that returns before its checks, or
// whose only expect sits in a callback that never runs, is not a pass.
const expect = { requireAssertions: true }; // safety: tests-require-assertions

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "contract",
          expect,
          include: ["contract/**/*.test.ts"],
          // Worker threads start faster than forks. No contract file keeps state past its own run (none
          // writes process.env or the cwd without restoring it), so one module graph serves every file
          // of a worker: the tier spends its CPU on tests, not on importing the same modules 50 times.
          pool: "threads",
          isolate: false,
          // Many files wait on child processes and sockets: two workers overlap them, even on two cores.
          maxWorkers: 2,
          // A whole mutation run on the fixture project: seconds of CPU, so not on every commit.
          exclude: ["contract/mutation-runner.test.ts"],
          globalSetup: ["contract/support/golden-log.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "selftest",
          expect,
          include: ["contract/mutation-runner.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: "live",
          expect,
          include: ["live/**/*.test.ts"],
          // A failed test keeps its file's scratch roots, for CI to upload.
          setupFiles: ["live/support/keep-failed-scratch.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Live tests start real sandboxes and CLIs; two cores do not take more at once.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "matrix",
          expect,
          // Real containers, one host row after another (npm run test:matrix starts the runtime).
          include: ["matrix/**/*.test.ts"],
          setupFiles: ["live/support/keep-failed-scratch.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
