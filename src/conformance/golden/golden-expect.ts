import { expect } from "vitest";
import { relative } from "node:path";
import { REPO_ROOT, goldenPath, recordGolden, withHeader, type GoldenExt } from "./golden.ts";

/**
 * Compares body (with its header line) to goldens/<area>/<name>.<ext>. Under CI=true a missing
 * golden fails; locally it is written and shows in `git status` for review. The header names the
 * test that wrote it.
 */
export async function matchGolden(
  area: string,
  name: string,
  ext: GoldenExt,
  what: string,
  body: string,
): Promise<void> {
  const path = goldenPath(area, name, ext);
  recordGolden(path);
  await expect(withHeader(what, ext, body, writerOf())).toMatchFileSnapshot(path);
}

export function jsonBody(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/** The running test as `<file from the repository> > <describe > test name>`. */
function writerOf(): string {
  const { testPath, currentTestName } = expect.getState();
  if (!testPath || !currentTestName) throw new Error("matchGolden: called outside a test; a golden names its writer");
  return `${relative(REPO_ROOT, testPath)} > ${currentTestName}`;
}
