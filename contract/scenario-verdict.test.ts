import { describe, expect, it } from "vitest";
import { runExitCode, scenarioVerdict } from "../src/conformance/scenario/verdict.ts";

describe("the verdicts that decide whether npm start is green", () => {
  it("a scenario with an unobserved assertion fails, even with every other one passing", () => {
    expect(scenarioVerdict([{ verdict: "pass" }, { verdict: "pass" }]), "control: all pass").toBe("pass");
    expect(scenarioVerdict([{ verdict: "pass" }, { verdict: "unobserved" }])).toBe("fail");
    expect(scenarioVerdict([{ verdict: "unobserved" }]), "a session that never ran").toBe("fail");
    expect(scenarioVerdict([{ verdict: "pass" }, { verdict: "fail" }])).toBe("fail");
  });
  it("--repeat: one failed run in N fails the whole run; every run passing exits 0", () => {
    const runs = (...v: Array<"pass" | "fail">) => ({ runs: v.map((verdict) => ({ verdict })) });
    expect(runExitCode([runs("pass", "pass", "pass"), runs("pass")]), "control: every run passed").toBe(0);
    expect(runExitCode([runs("pass", "fail", "pass"), runs("pass")])).toBe(1);
    expect(runExitCode([runs("fail", "fail", "pass")]), "one good run in three").toBe(1);
    expect(runExitCode([runs("pass"), runs("fail")])).toBe(1);
  });
});
