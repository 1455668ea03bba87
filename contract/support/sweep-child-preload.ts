// Preloaded (node --import) into a contract test's child under StrykerJS's sweep only
// (contract/support/sweep-child.ts): at the child's exit, its mutant coverage goes to the file the
// test named, for the test to add to its own.
import { writeFileSync } from "node:fs";

const file = process.env.MOSAIC_SWEEP_COVERAGE_FILE;
if (file !== undefined && file !== "") {
  // The child's own code must not see the variable (the runner hands its environment on).
  delete process.env.MOSAIC_SWEEP_COVERAGE_FILE;
  process.on("exit", () => {
    const cov = (globalThis as { __stryker__?: { mutantCoverage?: unknown } }).__stryker__?.mutantCoverage;
    if (cov !== undefined) writeFileSync(file, JSON.stringify(cov));
  });
}
