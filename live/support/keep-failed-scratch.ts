// Live setup file: a failed test marks its file, so the file's scratch roots (the sessions' homes,
// workspaces and turn logs) are kept for CI to upload instead of removed.
import { beforeEach } from "vitest";
import { markTestFailed } from "../../src/conformance/worlds/scratch.ts";

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => markTestFailed());
});
