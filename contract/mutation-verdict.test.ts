// Verdicts from test outcomes: only an expected test's assertion (or golden) failure is a kill.
import { describe, expect, it } from "vitest";
import {
  classifyErrors,
  classifyMutant,
  explainFailure,
  needsTierRun,
  type RunOutcome,
  type TestOutcome,
} from "../src/mutation/verdict.ts";

const EXPECTED = ["t.test.ts > d > expected"];

function test(name: string, failure?: TestOutcome["failure"]): TestOutcome {
  return {
    test: `t.test.ts > d > ${name}`,
    state: failure ? "failed" : "passed",
    durationMs: 1,
    ...(failure ? { failure } : {}),
  };
}
function run(tests: TestOutcome[], extra: Partial<RunOutcome> = {}): RunOutcome {
  return { tests, loadErrors: [], unhandled: [], wallMs: 1, fileMs: 1, ...extra };
}
const assertion = { kind: "assertion" as const, message: "expected 1 to be 2" };
const golden = { kind: "golden" as const, message: "Snapshot `d > expected 1` mismatched" };
const crash = { kind: "crash" as const, message: "x is not a function" };

describe("classifyErrors", () => {
  it.each([
    [[{ name: "AssertionError", message: "expected 1 to be 2" }], "assertion"],
    [[{ name: "Error", message: "Snapshot `a > b 1` mismatched" }], "golden"],
    [[{ name: "TypeError", message: "x is not a function" }], "crash"],
    [[{ name: "ReferenceError", message: "y is not defined" }], "crash"],
    [[{ name: "Error", message: "boom" }], "crash"],
    [[{ name: "Error", message: "Test timed out in 5000ms." }], "timeout"],
    [
      [
        { name: "TypeError", message: "t" },
        { name: "AssertionError", message: "a" },
      ],
      "assertion",
    ],
    [[], "crash"],
  ])("%j is %s", (errors, kind) => {
    expect(classifyErrors(errors).kind).toBe(kind);
  });
});

describe("classifyMutant", () => {
  it("killed: an expected test fails on an assertion", () => {
    const v = classifyMutant(EXPECTED, run([test("expected", assertion)]), undefined, undefined);
    expect(v).toEqual({ kind: "killed", by: EXPECTED, evidence: "assertion", message: assertion.message });
    expect(explainFailure(v)).toBeNull();
  });
  it("killed, golden only: weaker evidence, still a kill", () => {
    expect(classifyMutant(EXPECTED, run([test("expected", golden)]), undefined, undefined)).toMatchObject({
      kind: "killed",
      evidence: "golden-only",
    });
  });
  it("killed-by-other: the expected test passes, another fails on an assertion", () => {
    const v = classifyMutant(
      EXPECTED,
      run([test("expected")]),
      run([test("expected"), test("other", assertion)]),
      undefined,
    );
    expect(v).toMatchObject({ kind: "killed-by-other", by: ["t.test.ts > d > other"] });
    expect(explainFailure(v)).toContain("t.test.ts > d > other");
  });
  it("invalid-load: the test file did not load, and nothing else failed", () => {
    const broken = run([], { loadErrors: [{ file: "t.test.ts", message: "SyntaxError: Unexpected token" }] });
    expect(classifyMutant(EXPECTED, broken, broken, undefined)).toMatchObject({ kind: "invalid-load" });
  });
  it("invalid-crash: only TypeError-style failures are never a kill, not even of the expected test", () => {
    const v = classifyMutant(
      EXPECTED,
      run([test("expected", crash)]),
      run([test("expected", crash), test("other")]),
      undefined,
    );
    expect(v).toMatchObject({ kind: "invalid-crash", tests: ["t.test.ts > d > expected"] });
  });
  it("timeout: a run the runner stopped, or a test vitest timed out, is never a kill", () => {
    expect(classifyMutant(EXPECTED, run([]), undefined, "killers")).toMatchObject({ kind: "timeout" });
    expect(classifyMutant(EXPECTED, run([test("expected")]), run([]), "tier")).toMatchObject({ kind: "timeout" });
    const slow = run([test("expected", { kind: "timeout", message: "Test timed out in 5000ms." })]);
    expect(classifyMutant(EXPECTED, slow, run([test("other")]), undefined)).toMatchObject({ kind: "timeout" });
  });
  it("survived: every test passed", () => {
    expect(
      classifyMutant(EXPECTED, run([test("expected")]), run([test("expected"), test("other")]), undefined),
    ).toEqual({ kind: "survived", testsRun: 2 });
  });
  it("an unrelated test's assertion counts as a kill by another test, never as the expected kill", () => {
    const v = classifyMutant(
      EXPECTED,
      run([test("expected", crash)]),
      run([test("expected", crash), test("other", assertion)]),
      undefined,
    );
    expect(v.kind).toBe("killed-by-other");
  });
});

describe("classifyMutant with goldens blessed away", () => {
  const blessing = (...goldensWritten: string[]) => ({ goldensWritten });
  it("an assertion still kills, whatever goldens the run rewrote", () => {
    expect(
      classifyMutant(EXPECTED, run([test("expected", assertion)]), undefined, undefined, blessing("goldens/a.txt")),
    ).toMatchObject({ kind: "killed", evidence: "assertion" });
  });
  it("golden-only: no assertion failed, a golden was rewritten; the mode fails on it and names the golden", () => {
    const v = classifyMutant(
      EXPECTED,
      run([test("expected")]),
      run([test("expected"), test("other")]),
      undefined,
      blessing("goldens/b.txt", "goldens/a.txt"),
    );
    expect(v).toEqual({ kind: "golden-only", goldens: ["goldens/a.txt", "goldens/b.txt"], testsRun: 2 });
    expect(explainFailure(v)).toMatch(/golden only: .*goldens\/a\.txt, goldens\/b\.txt/);
  });
  it("a golden mismatch that still failed a test is no kill in this mode (negative control)", () => {
    expect(
      classifyMutant(EXPECTED, run([test("expected", golden)]), run([test("expected", golden)]), undefined, blessing()),
    ).toMatchObject({ kind: "invalid-crash" });
    expect(needsTierRun(EXPECTED, run([test("expected", golden)]), false, true)).toBe(true);
  });
  it("nothing rewritten and every test passed: survived, as without the mode", () => {
    expect(classifyMutant(EXPECTED, run([test("expected")]), run([test("expected")]), undefined, blessing())).toEqual({
      kind: "survived",
      testsRun: 1,
    });
  });
  it("another test's assertion is still a kill by another test", () => {
    expect(
      classifyMutant(
        EXPECTED,
        run([test("expected")]),
        run([test("other", assertion)]),
        undefined,
        blessing("goldens/a.txt"),
      ).kind,
    ).toBe("killed-by-other");
  });
});

describe("needsTierRun", () => {
  it("runs the rest of the tier only when the expected tests did not kill and nothing timed out", () => {
    expect(needsTierRun(EXPECTED, run([test("expected", assertion)]), false)).toBe(false);
    expect(needsTierRun(EXPECTED, run([test("expected")]), false)).toBe(true);
    expect(needsTierRun(EXPECTED, run([test("expected", crash)]), false)).toBe(true);
    expect(needsTierRun(EXPECTED, run([]), true)).toBe(false);
  });
});
