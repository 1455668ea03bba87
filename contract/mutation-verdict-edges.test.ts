// The catalog runner's verdict at its edges: what a failure's message becomes, which runs count as
// a kill, and each verdict's line and label, so a mutant the runner cannot prove killed never reads
// as killed.
import { describe, expect, it } from "vitest";
import {
  classifyErrors,
  classifyMutant,
  explainFailure,
  findExpectedKills,
  labelVerdict,
  listKillingTests,
  needsTierRun,
  type RunOutcome,
  type TestOutcome,
} from "../src/mutation/verdict.ts";

const EXPECTED = ["t.test.ts > d > expected", "t.test.ts > d > also"];
const name = (n: string) => `t.test.ts > d > ${n}`;
const outcome = (n: string, state: TestOutcome["state"], failure?: TestOutcome["failure"]): TestOutcome => ({
  test: name(n),
  state,
  durationMs: 1,
  ...(failure ? { failure } : {}),
});
const run = (tests: TestOutcome[], extra: Partial<RunOutcome> = {}): RunOutcome => ({
  tests,
  loadErrors: [],
  unhandled: [],
  wallMs: 1,
  fileMs: 1,
  ...extra,
});
const assertion = { kind: "assertion" as const, message: "expected 1 to be 2" };
const golden = { kind: "golden" as const, message: "Snapshot `d > expected 1` mismatched" };
const crash = { kind: "crash" as const, message: "x is not a function" };
const timeout = { kind: "timeout" as const, message: "Test timed out in 5000ms." };

describe("a failure's kind and message", () => {
  it("the message is the error's first non-blank line, else its name, else empty", () => {
    expect(classifyErrors([{ name: "TypeError", message: "x is not a function" }])).toEqual(crash);
    expect(classifyErrors([{ name: "TypeError" }])).toEqual({ kind: "crash", message: "TypeError" });
    expect(classifyErrors([{}])).toEqual({ kind: "crash", message: "" });
    expect(classifyErrors([{ name: "Error", message: "\n  \nsecond line\nthird" }])).toEqual({
      kind: "crash",
      message: "second line",
    });
    expect(classifyErrors([{ name: "Error", message: " \nreal" }])).toEqual({ kind: "crash", message: "real" });
    expect(classifyErrors([{ name: "Error", message: "\n  \n" }])).toEqual({ kind: "crash", message: "" });
  });

  it("no error at all is a crash that says so", () => {
    expect(classifyErrors([])).toEqual({ kind: "crash", message: "failed without an error" });
  });

  it("a line over 200 characters is cut to 197 and an ellipsis; one of 200 is kept whole", () => {
    const long = "a".repeat(250);
    expect(classifyErrors([{ name: "Error", message: long }]).message).toBe(`${"a".repeat(197)}...`);
    expect(classifyErrors([{ name: "Error", message: "b".repeat(201) }]).message).toBe(`${"b".repeat(197)}...`);
    expect(classifyErrors([{ name: "Error", message: "c".repeat(200) }]).message).toBe("c".repeat(200));
  });

  it("only a message that starts with vitest's timeout line is a timeout", () => {
    expect(classifyErrors([{ name: "Error", message: "Hook timed out in 50ms." }]).kind).toBe("timeout");
    expect(classifyErrors([{ name: "Error", message: "Test timed out in 50ms." }]).kind).toBe("timeout");
    expect(classifyErrors([{ name: "Error", message: "got: Test timed out in 5ms" }]).kind).toBe("crash");
    expect(classifyErrors([{ name: "Error", message: "got: Hook timed out in 5ms" }]).kind).toBe("crash");
  });
});

describe("which test runs kill", () => {
  it("only a failed test with an assertion or golden failure; a passed one carrying a failure does not", () => {
    const r = run([outcome("expected", "passed", assertion), { test: name("also"), state: "failed", durationMs: 1 }]);
    expect(findExpectedKills(EXPECTED, r)).toEqual([]);
  });

  it("without blessing a golden mismatch kills, so the tier need not run", () => {
    const r = run([outcome("expected", "failed", golden)]);
    expect(findExpectedKills(EXPECTED, r).map((o) => o.test)).toEqual([name("expected")]);
    expect(needsTierRun(EXPECTED, r, false)).toBe(false);
  });
});

describe("classifyMutant's verdicts", () => {
  it("killed names the assertion killers only; golden-only names the golden ones", () => {
    const both = run([outcome("expected", "failed", golden), outcome("also", "failed", assertion)]);
    expect(classifyMutant(EXPECTED, both, undefined, undefined)).toEqual({
      kind: "killed",
      by: [name("also")],
      evidence: "assertion",
      message: assertion.message,
    });
    const goldenOnly = run([outcome("expected", "failed", golden), outcome("also", "passed")]);
    expect(classifyMutant(EXPECTED, goldenOnly, undefined, undefined)).toEqual({
      kind: "killed",
      by: [name("expected")],
      evidence: "golden-only",
      message: golden.message,
    });
  });

  it("a timeout names which run did not finish", () => {
    expect(classifyMutant(EXPECTED, run([]), undefined, "killers")).toEqual({
      kind: "timeout",
      message: "the expected tests did not finish in the time budget",
    });
    expect(classifyMutant(EXPECTED, run([]), run([]), "tier")).toEqual({
      kind: "timeout",
      message: "the rest of the tier did not finish in the time budget",
    });
  });

  it("killed by another test names every expected test and the first other failure", () => {
    const tier = run([outcome("other", "failed", assertion)]);
    expect(classifyMutant(EXPECTED, run([outcome("expected", "passed")]), tier, undefined)).toEqual({
      kind: "killed-by-other",
      by: [name("other")],
      message: `not killed by ${EXPECTED[0]}, ${EXPECTED[1]}; ${name("other")} failed: ${assertion.message}`,
    });
  });

  it("survived counts the tests that ran, not the skipped ones", () => {
    const r = run([outcome("expected", "passed"), outcome("skipped", "skipped"), outcome("passed-late", "passed")]);
    expect(classifyMutant(EXPECTED, r, undefined, undefined)).toEqual({ kind: "survived", testsRun: 2 });
  });

  it("a test that failed without a failure, or passed carrying a timeout, is neither crash nor timeout", () => {
    const r = run([{ test: name("expected"), state: "failed", durationMs: 1 }, outcome("also", "passed", timeout)]);
    expect(classifyMutant(EXPECTED, r, undefined, undefined)).toEqual({ kind: "survived", testsRun: 2 });
    expect(classifyMutant(EXPECTED, run([outcome("x", "passed", crash)]), undefined, undefined)).toEqual({
      kind: "survived",
      testsRun: 1,
    });
  });

  it("blessed, a test that failed without a failure is no crash", () => {
    const r = run([{ test: name("x"), state: "failed", durationMs: 1 }]);
    expect(classifyMutant(EXPECTED, r, undefined, undefined, { goldensWritten: [] })).toEqual({
      kind: "survived",
      testsRun: 1,
    });
  });

  it("a file that does not load is named with its error", () => {
    const r = run([], { loadErrors: [{ file: "t.test.ts", message: "SyntaxError: Unexpected token" }] });
    expect(classifyMutant(EXPECTED, r, undefined, undefined)).toEqual({
      kind: "invalid-load",
      message: "t.test.ts: SyntaxError: Unexpected token",
    });
  });

  it("a crash is named by its own message; an error outside any test alone is a crash too", () => {
    expect(classifyMutant(EXPECTED, run([outcome("x", "failed", crash)]), undefined, undefined)).toEqual({
      kind: "invalid-crash",
      tests: [name("x")],
      message: crash.message,
    });
    expect(classifyMutant(EXPECTED, run([], { unhandled: ["boom outside"] }), undefined, undefined)).toEqual({
      kind: "invalid-crash",
      tests: [],
      message: "boom outside",
    });
  });

  it("blessed, a test that timed out stays a timeout: only a golden mismatch joins the crashes", () => {
    const r = run([outcome("slow", "failed", timeout)]);
    expect(classifyMutant(EXPECTED, r, undefined, undefined, { goldensWritten: [] })).toEqual({
      kind: "timeout",
      message: `${name("slow")}: ${timeout.message}`,
    });
    expect(classifyMutant(EXPECTED, r, undefined, undefined)).toEqual({
      kind: "timeout",
      message: `${name("slow")}: ${timeout.message}`,
    });
  });
});

describe("each verdict's line, label and killers", () => {
  const other = { kind: "killed-by-other" as const, by: [name("a"), name("b")], message: "m" };
  it("explains every failing kind in its own words", () => {
    expect(explainFailure(other)).toBe(
      `killed only by ${name("a")}, ${name("b")}, not by its killedBy: fix the catalog or the test`,
    );
    expect(explainFailure({ kind: "invalid-load", message: "SyntaxError" })).toBe(
      "the mutated code does not load (SyntaxError): fix the replacement",
    );
    expect(explainFailure({ kind: "invalid-crash", tests: [], message: "boom" })).toBe(
      "only crashes, no assertion (boom): a crash is not a kill",
    );
    expect(explainFailure({ kind: "timeout", message: "slow" })).toBe("timeout (slow): a timeout is not a kill");
  });

  it("labels each kind; golden-only says it is not killed", () => {
    expect(labelVerdict({ kind: "golden-only", goldens: ["g"], testsRun: 1 })).toBe("golden only: not killed");
    expect(labelVerdict({ kind: "invalid-load", message: "m" })).toBe("invalid-load");
    expect(labelVerdict(other)).toBe("killed-by-other");
  });

  it("a verdict killed by another test lists those tests; a survivor lists none", () => {
    expect(listKillingTests(other)).toEqual([name("a"), name("b")]);
    expect(listKillingTests({ kind: "survived", testsRun: 3 })).toEqual([]);
  });
});
