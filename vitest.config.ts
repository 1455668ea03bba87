import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "contract",
          include: ["contract/**/*.test.ts"],
          // Worker threads start faster than forks: the tier runs in about two thirds of the time.
          pool: "threads",
          // A whole mutation run on the fixture project: seconds of CPU, so not on every commit.
          exclude: ["contract/mutation-runner.test.ts"],
          globalSetup: ["contract/support/golden-log.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "selftest",
          include: ["contract/mutation-runner.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: "live",
          include: ["live/**/*.test.ts"],
          // A failed test keeps its file's scratch roots, for CI to upload.
          setupFiles: ["live/support/keep-failed-scratch.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Live tests start real sandboxes and CLIs; two cores do not take more at once.
          fileParallelism: false,
        },
      },
    ],
  },
});
