import { describe, expect, it } from "vitest";
import { checkoutProblem, liveMode } from "../src/conformance/tiers/live-gate.ts";

describe("live tests never pass on a skip", () => {
  it.each([
    [null, {}, "run"],
    [null, { CI: "true" }, "run"],
    ["bwrap is missing", { CI: "true" }, "fail"],
    ["bwrap is missing", {}, "skip"],
    ["bwrap is missing", { CI: "1" }, "fail"],
    ["bwrap is missing", { CI: "false" }, "skip"],
    ["bwrap is missing", { CI: "" }, "skip"],
  ] as const)("problem %j with env %j: %s", (problem, env, mode) => {
    expect(liveMode(problem, env)).toBe(mode);
  });
  it("a checkout under /tmp is named as the cause; one elsewhere is no problem", () => {
    expect(checkoutProblem("/tmp/ci/mosaic-harness")).toMatch(/lies under \/tmp/);
    expect(checkoutProblem("/tmpfoo/mosaic-harness")).toBeNull();
    expect(checkoutProblem("/work/mosaic-harness")).toBeNull();
  });
});
