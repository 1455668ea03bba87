// The edges of paths.ts the generated sweep found untested: which absolute paths are normal. The
// sandbox's binds and the gate's policy refuse a path that is not, so each rule is pinned here.
import { describe, expect, it } from "vitest";
import { isNormalAbsolute } from "../src/core/paths.ts";

describe("a normal absolute path", () => {
  it("the root alone, or names below it with no empty, '.' or '..' segment and no trailing slash", () => {
    const cases: Array<[string, boolean]> = [
      ["/", true],
      ["/a", true],
      ["/a/b.c/..d", true],
      ["/a/", false],
      ["/a/./b", false],
      ["/a/.", false],
      ["/a/../b", false],
      ["/a//b", false],
      ["//", false],
      ["a/b", false],
      ["", false],
    ];
    expect(cases.map(([p]) => [p, isNormalAbsolute(p)])).toEqual(cases);
  });
});
