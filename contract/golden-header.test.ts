// A golden's header line: what it shows, the test that wrote it, how to regenerate it. The review
// prints the writer beside each changed golden, and goldens-check refuses a golden without one.
import { describe, expect, it } from "vitest";
import {
  findOrphans,
  findUnnamedWriters,
  goldensCheckOutcome,
  goldenHeader,
  readProvenance,
  withHeader,
} from "../src/conformance/golden/golden.ts";
import { reviewGoldens } from "../src/review/classify.ts";
import { renderJson, renderMarkdown, renderText } from "../src/review/render.ts";

const FROM = "contract/sandbox.test.ts > sandbox plan goldens > merged-usr / pi-coder";

describe("a golden's header names the test that wrote it", () => {
  it("writes what, writer and the regenerate command, in each comment syntax", () => {
    expect(goldenHeader("bwrap argv", "txt", FROM)).toBe(
      `# bwrap argv · from ${FROM} · regenerate: npm run goldens:update`,
    );
    expect(goldenHeader("policy", "jsonc", FROM)).toBe(`// policy · from ${FROM} · regenerate: npm run goldens:update`);
    expect(goldenHeader("doc", "md", FROM)).toBe(`<!-- doc · from ${FROM} · regenerate: npm run goldens:update -->`);
  });

  it("reads the writer back from the golden's first line, and only from there", () => {
    const text = withHeader("bwrap argv", "txt", "--ro-bind\n", FROM);
    expect(readProvenance(text)).toEqual({
      file: "contract/sandbox.test.ts",
      test: "sandbox plan goldens > merged-usr / pi-coder",
    });
    expect(readProvenance(withHeader("bwrap argv", "md", "x\n", FROM))?.file).toBe("contract/sandbox.test.ts");
    expect(readProvenance(withHeader("bwrap argv", "txt", "x\n"))).toBeNull();
    expect(
      readProvenance(
        `# x · regenerate: npm run goldens:update\n# y · from ${FROM} · regenerate: npm run goldens:update\n`,
      ),
    ).toBeNull();
  });

  it("refuses a header part that holds the separator, so the writer always reads back whole", () => {
    expect(() => goldenHeader("a · from b", "txt", FROM)).toThrow(/reword it/);
    expect(() => goldenHeader("a", "txt", "contract/x.test.ts > a · b")).toThrow(/reword it/);
  });

  it("goldens-check's rule: a golden without a writer, or naming a missing file, is listed; named ones pass", () => {
    const texts = new Map([
      ["goldens/a.txt", withHeader("a", "txt", "x\n", FROM)],
      ["goldens/b.txt", withHeader("b", "txt", "x\n")],
      ["goldens/c.txt", withHeader("c", "txt", "x\n", "contract/gone.test.ts > t")],
    ]);
    expect(findUnnamedWriters(texts, (f) => f === "contract/sandbox.test.ts")).toEqual([
      "goldens/b.txt: its header names no test that wrote it",
      "goldens/c.txt: its header names contract/gone.test.ts, which is not in the repository",
    ]);
    expect(findOrphans(["goldens/a.txt", "goldens/b.txt"], new Set(["goldens/a.txt"]))).toEqual(["goldens/b.txt"]);
  });

  it("goldens-check's verdict: one orphan fails under CI and is listed with its removal locally; none passes", () => {
    const onDisk = ["goldens/a.txt", "goldens/b.txt"];
    const all = new Set(onDisk);
    expect(goldensCheckOutcome(onDisk, all, [], true), "control: every golden written").toEqual({
      code: 0,
      out: ["goldens-check: 2 goldens written, no orphan"],
      err: [],
    });
    const one = new Set(["goldens/a.txt"]);
    expect(goldensCheckOutcome(onDisk, one, [], true)).toEqual({
      code: 1,
      out: [],
      err: [
        "goldens-check: 1 golden file(s) that no test wrote:",
        "  goldens/b.txt",
        "Remove them after review: git rm goldens/b.txt",
      ],
    });
    expect(goldensCheckOutcome(onDisk, one, [], false).code, "locally it is listed, not failed").toBe(0);
    expect(
      goldensCheckOutcome(onDisk, all, ["goldens/a.txt: its header names no test that wrote it"], false).code,
    ).toBe(1);
  });
});

describe("the review prints each changed golden's writer", () => {
  const before = withHeader("bind table", "txt", "source | inside | mode | why\n<run> | <run> | rw | the run\n", FROM);
  const report = reviewGoldens([
    { path: "goldens/sandbox/binds/a.txt", before, after: before.replace("| rw |", "| ro |") },
    { path: "goldens/other/unnamed.txt", before: "# x\na\n", after: "# x\nb\n" },
  ]);

  it("in the report, keyed by golden; a golden whose header names none has no row", () => {
    expect(report.writtenBy).toEqual({ "goldens/sandbox/binds/a.txt": FROM });
  });

  it("in text, Markdown and JSON", () => {
    expect(renderText(report)).toContain(
      `## the test that wrote each changed golden\ngoldens/sandbox/binds/a.txt ← ${FROM}\n`,
    );
    expect(renderMarkdown(report)).toContain(
      "- goldens/sandbox/binds/a.txt ← contract/sandbox.test.ts \\> sandbox plan goldens \\> merged-usr / pi-coder",
    );
    expect(JSON.parse(renderJson(report)).writtenBy).toEqual({ "goldens/sandbox/binds/a.txt": FROM });
  });

  it("a removed golden's writer comes from its last text", () => {
    const r = reviewGoldens([{ path: "goldens/gone.txt", before, after: null }]);
    expect(r.writtenBy).toEqual({ "goldens/gone.txt": FROM });
  });
});
