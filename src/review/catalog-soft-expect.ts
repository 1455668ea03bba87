// A vitest setup file for the golden review's catalog self-test only, loaded in its own tree copy:
// a failing expect is recorded instead of thrown, so a test goes on to write its golden the way the
// mutated code makes it, as a pull request would after editing the invariant that caught it.
// Never part of a test run that judges anything: no verdict is read from these tests.
import { appendFileSync, existsSync, statSync } from "node:fs";
import { relative } from "node:path";
import { afterEach, beforeEach, chai, expect } from "vitest";

type AssertFn = (...args: unknown[]) => unknown;
const original = chai.Assertion.prototype.assert as AssertFn;

chai.Assertion.prototype.assert = function softAssert(this: unknown, ...args: unknown[]): unknown {
  try {
    return original.apply(this, args);
  } catch (e) {
    if (e instanceof Error && e.name === "AssertionError") return undefined;
    throw e;
  }
} as typeof chai.Assertion.prototype.assert;

// Which tests write a golden: the first (unmutated) run records them, so each mutant's run can be
// limited to them. A test that grows the golden log while it runs is one; a test of another file
// appending at the same time can only add a name, never lose one.
const log = process.env.MOSAIC_GOLDEN_LOG;
const writers = process.env.MOSAIC_REVIEW_WRITERS;
let logSize = 0;
const sizeOf = (p: string) => (existsSync(p) ? statSync(p).size : 0);
beforeEach(() => {
  if (log) logSize = sizeOf(log);
});
afterEach(() => {
  const { testPath, currentTestName } = expect.getState();
  if (log && writers && testPath && currentTestName && sizeOf(log) > logSize)
    appendFileSync(writers, `${relative(process.cwd(), testPath)}\0${currentTestName}\n`);
});
