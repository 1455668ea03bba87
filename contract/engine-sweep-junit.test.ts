// The junit reader behind skips-check (src/mutation/junit.ts) on the edges of the shape vitest's
// junit reporter writes: every entity, a failure and an error, a case's time, a self-closing case,
// several suites, attributes in any order, and skips-check's verdict on a report with no case.
import { describe, expect, it } from "vitest";
import { findSkipProblems, readJunitCases, skipsCheckOutcome } from "../src/mutation/junit.ts";

const suite = (name: string, ...cases: string[]) =>
  `    <testsuite name="${name}" timestamp="2026-12-02T20:31:11.425Z" tests="${cases.length}">\n${cases.join("\n")}\n    </testsuite>`;
const report = (...suites: string[]) =>
  `<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites name="vitest tests" tests="9">\n${suites.join("\n")}\n</testsuites>\n`;

describe("readJunitCases on the edges of vitest's shape", () => {
  it("a case's failure or error marks it failed; a plain, skipped or self-closing one is not", () => {
    const xml = report(
      suite(
        "f.test.ts",
        '        <testcase classname="f.test.ts" name="plain" time="0.25">\n        </testcase>',
        '        <testcase classname="f.test.ts" name="fails" time="0.5">\n            <failure message="expected 1 to be 2" type="AssertionError">\nAssertionError: expected 1 to be 2\n            </failure>\n        </testcase>',
        '        <testcase classname="f.test.ts" name="errs" time="0">\n            <error message="boom" type="Error"/>\n        </testcase>',
        '        <testcase classname="f.test.ts" name="skips" time="0">\n            <skipped/>\n        </testcase>',
        '        <testcase classname="f.test.ts" name="self-closing" time="1.5"/>',
        '        <testcase classname="f.test.ts" name="longer names" time="0">\n            <skippedness/>\n            <failures/>\n            <errors/>\n        </testcase>',
      ),
    );
    expect(readJunitCases(xml)).toEqual([
      { suite: "f.test.ts", name: "plain", skipped: false, failed: false, timeMs: 250 },
      { suite: "f.test.ts", name: "fails", skipped: false, failed: true, timeMs: 500 },
      { suite: "f.test.ts", name: "errs", skipped: false, failed: true, timeMs: 0 },
      { suite: "f.test.ts", name: "skips", skipped: true, failed: false, timeMs: 0 },
      { suite: "f.test.ts", name: "self-closing", skipped: false, failed: false, timeMs: 1500 },
      { suite: "f.test.ts", name: "longer names", skipped: false, failed: false, timeMs: 0 },
    ]);
  });

  it("a self-closing case takes nothing from the next case's body", () => {
    const xml = report(
      suite(
        "s.test.ts",
        '<testcase classname="s.test.ts" name="first" time="0.001"/>',
        '<testcase classname="s.test.ts" name="second" time="0.002">\n<skipped/>\n<failure message="m"/>\n</testcase>',
        '<testcase classname="s.test.ts" name="third" time="0.003"/>',
      ),
    );
    expect(readJunitCases(xml).map((c) => [c.name, c.skipped, c.failed])).toEqual([
      ["first", false, false],
      ["second", true, true],
      ["third", false, false],
    ]);
  });

  it("each case sits in the suite before it, across several suites", () => {
    const xml = report(
      suite("a.test.ts", '<testcase classname="a.test.ts" name="one" time="0"/>'),
      suite(
        "b.test.ts",
        '<testcase classname="b.test.ts" name="two" time="0"/>',
        '<testcase classname="b.test.ts" name="three" time="0"/>',
      ),
    );
    expect(readJunitCases(xml).map((c) => `${c.suite} > ${c.name}`)).toEqual([
      "a.test.ts > one",
      "b.test.ts > two",
      "b.test.ts > three",
    ]);
  });

  it("an attribute is read by its whole name, wherever it sits in the tag, and only from the tag", () => {
    const xml = report(
      suite(
        "o.test.ts",
        '<testcase time="2" name="named last" classname="o.test.ts"/>',
        '<testcase classname="o.test.ts" runtime="9" name="no time"/>',
        '<testcase classname="o.test.ts" time="0.125">\n<properties><property name="inner" value="x"/></properties>\n</testcase>',
      ),
    );
    expect(readJunitCases(xml)).toEqual([
      { suite: "o.test.ts", name: "named last", skipped: false, failed: false, timeMs: 2000 },
      { suite: "o.test.ts", name: "no time", skipped: false, failed: false, timeMs: 0 },
      { suite: "o.test.ts", name: "", skipped: false, failed: false, timeMs: 125 },
    ]);
  });

  it("unescapes each of the five entities, once", () => {
    const xml = report(
      suite("e.test.ts", '<testcase name="&lt;a&gt; &quot;b&quot; &apos;c&apos; &amp; &amp;lt; &#38;" time="0"/>'),
    );
    expect(readJunitCases(xml)[0]!.name).toBe(`<a> "b" 'c' & &lt; &#38;`);
  });

  it("a suite's name comes from its own tag; a suite with no name reads as empty", () => {
    const xml = report(
      '<testsuite tests="1">\n<testcase name="orphan" time="0"/>\n</testsuite>',
      '<testsuite\ttests="1" name="tab.test.ts">\n<testcase\tname="tabbed" time="0"/>\n</testsuite>',
    );
    expect(readJunitCases(xml).map((c) => [c.suite, c.name])).toEqual([
      ["", "orphan"],
      ["tab.test.ts", "tabbed"],
    ]);
  });

  it("a case before any suite sits in none", () => {
    const xml = '<testcase name="loose" time="0"/>\n' + report(suite("a.test.ts", '<testcase name="held" time="0"/>'));
    expect(readJunitCases(xml).map((c) => [c.suite, c.name])).toEqual([
      ["", "loose"],
      ["a.test.ts", "held"],
    ]);
  });

  it("the <testsuites> wrapper and a <testcaseX> tag are no case", () => {
    expect(readJunitCases('<testsuites name="x">\n<testcases name="y"/>\n</testsuites>\n')).toEqual([]);
  });
});

describe("skips-check on a report with no case", () => {
  it("an empty report is a problem, and under CI a failure", () => {
    const empty = report();
    expect(findSkipProblems("e.xml", empty)).toEqual(["e.xml: no test case in the report"]);
    expect(skipsCheckOutcome(["e.xml"], () => empty, true)).toEqual({
      code: 1,
      out: [],
      err: ["skips-check: e.xml: no test case in the report", "skips-check: FAILED: under CI=true every test must run"],
    });
  });
});
