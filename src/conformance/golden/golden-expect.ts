import { expect } from "vitest";
import { goldenPath, recordGolden, withHeader, type GoldenExt } from "./golden.ts";

/**
 * Compares body (with its header line) to goldens/<area>/<name>.<ext>. Under CI=true a missing
 * golden fails; locally it is written and shows in `git status` for review.
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
  await expect(withHeader(what, ext, body)).toMatchFileSnapshot(path);
}

export function jsonBody(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}
