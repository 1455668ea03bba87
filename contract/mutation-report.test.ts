// What the mutation run writes: the table, the schema report, diffs, and shard merging.
import { describe, expect, it } from "vitest";
import { locateFind, type Mutant } from "../src/mutation/catalog.ts";
import {
  buildHtml,
  buildMutationReport,
  listFailures,
  renderTable,
  renderDiff,
  listGoldenOnlyKills,
  type MutantRecord,
} from "../src/mutation/report.ts";
import { mergePartials, parseShard, selectShard, type PartialReport } from "../src/mutation/shard.ts";
import type { MutantVerdict } from "../src/mutation/verdict.ts";
import { findSchemaProblems } from "../src/mutation/schema-check.ts";

const SOURCE = "line one\nconst ok = check(a);\nline three\n";

function record(id: string, verdict: MutantVerdict, find = "check(a)"): MutantRecord {
  const mutant: Mutant = {
    id,
    file: "src/a.ts",
    find,
    replace: "true",
    undoes: `undoes ${id}`,
    killedBy: ["c.test.ts > d > t"],
    source: "mutants/a.json",
  };
  return { mutant, line: 2, site: locateFind(mutant, SOURCE), verdict, seconds: 0.25, testsRun: ["c.test.ts > d > t"] };
}

const KILLED = record("k", {
  kind: "killed",
  by: ["c.test.ts > d > t"],
  evidence: "assertion",
  message: "expected true to be false",
});
const GOLDEN = record("g", {
  kind: "killed",
  by: ["c.test.ts > d > t"],
  evidence: "golden-only",
  message: "Snapshot mismatched",
});
const SURVIVED = record("s", { kind: "survived", testsRun: 3 });
const STALE = record("st", { kind: "stale", why: "find matches 0 times in src/a.ts, not exactly once" }, "absent");

describe("renderTable", () => {
  it("has the six columns and one row per mutant, with the killing test and a marked golden-only kill", () => {
    const lines = renderTable([KILLED, GOLDEN, SURVIVED]).split("\n");
    expect(lines[0]).toBe("| mutant | file:line | what it undoes | killed by | verdict | seconds |");
    expect(lines[2]).toBe("| k | src/a.ts:2 | undoes k | c.test.ts > d > t | killed | 0.25 |");
    expect(lines[3]).toContain("| killed (golden only: weaker) |");
    expect(lines[4]).toBe("| s | src/a.ts:2 | undoes s | - | survived | 0.25 |");
  });
  it("fails the run with one reason per mutant not killed, and lists golden-only kills apart", () => {
    expect(listFailures([KILLED, GOLDEN, SURVIVED, STALE])).toEqual([
      "s (src/a.ts:2): survived 3 tests: no test notices this protection go",
      "st (src/a.ts:2): stale: find matches 0 times in src/a.ts, not exactly once",
    ]);
    expect(listGoldenOnlyKills([KILLED, GOLDEN, SURVIVED])).toEqual(["g"]);
  });
});

describe("buildMutationReport", () => {
  const report = buildMutationReport({
    records: [KILLED, SURVIVED, STALE],
    sources: new Map([["src/a.ts", SOURCE]]),
    tests: new Map([["c.test.ts", ["c.test.ts > d > t"]]]),
    projectRoot: "/p",
  });
  it("follows the mutation-testing-report-schema: files with source, mutants with location and status, test files", () => {
    expect(report.schemaVersion).toBe("2");
    const file = report.files["src/a.ts"]!;
    expect(file.source).toBe(SOURCE);
    expect(file.mutants.map((m) => [m.id, m.status])).toEqual([
      ["k", "Killed"],
      ["s", "Survived"],
      ["st", "Ignored"],
    ]);
    expect(file.mutants[0]).toMatchObject({
      mutatorName: "safety-line",
      replacement: "true",
      killedBy: ["c.test.ts > d > t"],
      location: { start: { line: 2, column: 12 }, end: { line: 2, column: 20 } },
    });
    expect(report.testFiles).toEqual({ "c.test.ts": { tests: [{ id: "c.test.ts > d > t", name: "d > t" }] } });
  });
  it("the HTML carries the viewer and the report inline, and no text of the report can close its script", () => {
    const html = buildHtml(
      { ...report, files: { "x</script><b>.ts": { language: "typescript", source: "</script>", mutants: [] } } },
      "/*viewer*/",
      "t",
    );
    expect(html).toContain("<script>/*viewer*/</script>");
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain("\\u003c/script>");
  });
});

describe("renderDiff", () => {
  it("shows the changed line with up to three lines of context", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n";
    expect(renderDiff("f.ts", before, before.replace("5", "five"))).toBe(
      "--- a/f.ts\n+++ b/f.ts\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
    );
  });
  it("shows a removed line, and counts no line after the file's final newline", () => {
    expect(renderDiff("f.ts", "a\nb\nc\n", "a\nc\n")).toBe("--- a/f.ts\n+++ b/f.ts\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
  });
  it("marks a file without a final newline", () => {
    expect(renderDiff("f.ts", "a\nb", "a\nc")).toBe(
      "--- a/f.ts\n+++ b/f.ts\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
    );
  });
});

describe("sharding", () => {
  it("parses k/n zero-based and refuses k >= n", () => {
    expect(parseShard("1/3")).toEqual({ k: 1, n: 3 });
    expect(parseShard("3/3")).toHaveProperty("error");
    expect(parseShard("1-3")).toHaveProperty("error");
  });
  it("the shards of a catalog are disjoint, cover it, and are the same every time", () => {
    const ids = ["a", "b", "c", "d", "e"];
    const parts = [0, 1].map((k) => selectShard(ids, { k, n: 2 }));
    expect(parts).toEqual([
      ["a", "c", "e"],
      ["b", "d"],
    ]);
    expect(parts.flat().sort()).toEqual(ids);
  });

  const partial = (k: number, n: number, records: MutantRecord[], hash = "h"): PartialReport => ({
    kind: "mosaic-mutants-partial",
    catalogHash: hash,
    shard: { k, n },
    ids: records.map((r) => r.mutant.id),
    records,
    tests: [],
    sources: [],
  });

  it("merges a complete set in catalog order", () => {
    const merged = mergePartials([partial(1, 2, [SURVIVED]), partial(0, 2, [KILLED])], ["k", "s"], "h");
    expect(merged.ok && merged.records.map((r) => r.mutant.id)).toEqual(["k", "s"]);
  });
  it("refuses to score an incomplete set, a shard given twice, or a shard of another catalog", () => {
    const missing = mergePartials([partial(0, 2, [KILLED])], ["k", "s"], "h");
    expect(missing.ok ? [] : missing.problems).toEqual(["shard 1/2 is missing", "no verdict for 1 mutant(s): s"]);
    const twice = mergePartials(
      [partial(0, 2, [KILLED]), partial(0, 2, [KILLED]), partial(1, 2, [SURVIVED])],
      ["k", "s"],
      "h",
    );
    expect(twice.ok ? [] : twice.problems).toEqual(["shard 0/2 is given 2 times"]);
    const other = mergePartials([partial(0, 1, [KILLED, SURVIVED], "old")], ["k", "s"], "h");
    expect(other.ok ? [] : other.problems.join("\n")).toContain("ran on another catalog");
    expect(mergePartials([], ["k"], "h").ok).toBe(false);
  });
  it("merges --both shards' bless-mode records too, and refuses a set where only some shards ran with --both", () => {
    const both = (k: number, records: MutantRecord[]) => ({ ...partial(k, 2, records), blessedRecords: records });
    const merged = mergePartials([both(1, [SURVIVED]), both(0, [KILLED])], ["k", "s"], "h");
    expect(merged.ok && merged.blessedRecords?.map((r) => r.mutant.id)).toEqual(["k", "s"]);
    const plain = mergePartials([partial(1, 2, [SURVIVED]), partial(0, 2, [KILLED])], ["k", "s"], "h");
    expect(plain.ok && plain.blessedRecords, "ordinary shards merge to ordinary records only").toBeUndefined();
    const mixed = mergePartials([both(0, [KILLED]), partial(1, 2, [SURVIVED])], ["k", "s"], "h");
    expect(mixed.ok ? [] : mixed.problems).toEqual(["1 of 2 shards ran with --both: run every shard the same way"]);
  });
});

describe("findSchemaProblems (the schema check the fixture report is held to)", () => {
  const schema = {
    type: "object",
    required: ["a"],
    properties: { a: { type: "array", items: { $ref: "#/definitions/p" } }, s: { enum: ["x"] } },
    additionalProperties: false,
    definitions: { p: { type: "object", required: ["line"], properties: { line: { type: "integer", minimum: 1 } } } },
  };
  it("accepts a conforming value", () => {
    expect(findSchemaProblems(schema, { a: [{ line: 1 }], s: "x" })).toEqual([]);
  });
  it("names each break: missing field, wrong type, enum, minimum, unexpected property", () => {
    expect(findSchemaProblems(schema, { a: [{ line: 0 }, { line: "1" }, {}], s: "y", z: 1 })).toEqual([
      "$.a[0].line: below 1",
      "$.a[1].line: expected integer, got string",
      "$.a[2]: missing line",
      '$.s: "y" is not one of ["x"]',
      "$: unexpected property z",
    ]);
  });
  it("refuses a schema keyword it does not know rather than ignoring it", () => {
    expect(findSchemaProblems({ oneOf: [] }, 1)).toEqual(["$: schema keyword(s) oneOf not supported by this check"]);
  });
});
