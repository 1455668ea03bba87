// skips-check's verdict (skipsCheckOutcome, which scripts/skips-check.ts prints and exits with), in
// process on the junit reports vitest really wrote (contract/fixtures/junit/).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { skipsCheckOutcome } from "../src/mutation/junit.ts";

const FIXTURES = join(REPO_ROOT, "contract/fixtures/junit");
const reports: Record<string, string> = {
  "skippy.xml": readFileSync(join(FIXTURES, "skip-and-todo.xml"), "utf8"),
  "clean.xml": readFileSync(join(FIXTURES, "all-ran.xml"), "utf8"),
  "other-clean.xml": readFileSync(join(FIXTURES, "all-ran.xml"), "utf8"),
};
const read = (r: string) => reports[r] ?? null;

describe("skips-check's verdict", () => {
  it("no report named: exit 2 with the usage", () => {
    expect(skipsCheckOutcome([], read, true)).toEqual({
      code: 2,
      out: [],
      err: ["usage: node scripts/skips-check.ts <junit.xml>..."],
    });
  });

  it("every test of every report ran: exit 0, naming the reports", () => {
    expect(skipsCheckOutcome(["clean.xml", "other-clean.xml"], read, true)).toEqual({
      code: 0,
      out: ["skips-check: clean.xml, other-clean.xml: every test ran"],
      err: [],
    });
  });

  it("under CI a skip or todo in any report fails, each named, after a clean report", () => {
    expect(skipsCheckOutcome(["clean.xml", "skippy.xml"], read, true)).toEqual({
      code: 1,
      out: [],
      err: [
        "skips-check: skippy.xml: skipped or todo: a.test.ts > tier > is skipped",
        "skips-check: skippy.xml: skipped or todo: a.test.ts > tier > is todo",
        "skips-check: FAILED: under CI=true every test must run",
      ],
    });
  });

  it("under CI a missing report fails; locally it is listed and passes", () => {
    const missing = ["skips-check: gone.xml: no report (did the tier run with its junit reporter?)"];
    expect(skipsCheckOutcome(["gone.xml"], read, true)).toEqual({
      code: 1,
      out: [],
      err: [...missing, "skips-check: FAILED: under CI=true every test must run"],
    });
    expect(skipsCheckOutcome(["gone.xml"], read, false)).toEqual({
      code: 0,
      out: [],
      err: [...missing, "skips-check: (not CI: reported, not failed)"],
    });
  });
});
