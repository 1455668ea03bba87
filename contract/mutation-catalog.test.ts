// The catalog checks: pure functions over catalog entries and source text, and the real catalog.
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import {
  applyMutant,
  sortCatalog,
  locateFind,
  pairTags,
  parseCatalogFile,
  scanTags,
  type Mutant,
  type Site,
} from "../src/mutation/catalog.ts";
import { loadCatalog } from "../src/mutation/load.ts";

// Tags are assembled so this test file itself holds none.
const TAG = "// " + "safety: ";

function mutant(over: Partial<Mutant>): Mutant {
  return {
    id: "m",
    file: "src/a.ts",
    find: "x",
    replace: "y",
    undoes: "u",
    killedBy: ["contract/a.test.ts > d > t"],
    source: "mutants/a.json",
    ...over,
  };
}

function sitesOf(mutants: Mutant[], files: Record<string, string>): Map<string, Site> {
  return new Map(mutants.map((m) => [m.id, locateFind(m, files[m.file])]));
}

describe("parseCatalogFile", () => {
  it("accepts a well-formed entry and records its catalog file", () => {
    const r = parseCatalogFile("mutants/a.json", [
      { id: "a-b", file: "src/a.ts", find: "x", replace: "", undoes: "u", killedBy: ["contract/a.test.ts > d > t"] },
    ]);
    expect(r.problems).toEqual([]);
    expect(r.mutants.map((m) => [m.id, m.source])).toEqual([["a-b", "mutants/a.json"]]);
  });
  it.each([
    ["not an array", { id: "a" }, "must be a JSON array"],
    ["a missing killedBy", [{ id: "a", file: "f", find: "x", replace: "y", undoes: "u" }], "killedBy"],
    [
      "a killedBy without a test file",
      [{ id: "a", file: "f", find: "x", replace: "y", undoes: "u", killedBy: ["d > t"] }],
      "<test file> > <describe> > <test>",
    ],
    [
      "an unknown field",
      [{ id: "a", file: "f", find: "x", replace: "y", undoes: "u", killedBy: ["c.test.ts > t"], extra: 1 }],
      "extra",
    ],
    [
      "replace equal to find",
      [{ id: "a", file: "f", find: "x", replace: "x", undoes: "u", killedBy: ["c.test.ts > t"] }],
      "nothing is mutated",
    ],
  ])("refuses %s, naming the problem", (_n, json, words) => {
    const r = parseCatalogFile("mutants/a.json", json);
    expect(r.mutants).toEqual([]);
    expect(r.problems.join("\n")).toContain(words);
  });
});

describe("locateFind", () => {
  it("is stale when the find matches twice or not at all", () => {
    expect(locateFind(mutant({ find: "a" }), "a\na\n")).toMatchObject({ kind: "stale", matches: 2 });
    expect(locateFind(mutant({ find: "b" }), "a\n")).toMatchObject({ kind: "stale", matches: 0 });
    expect(locateFind(mutant({}), undefined)).toMatchObject({ kind: "stale", why: "src/a.ts does not exist" });
  });
  it("gives the lines a multi-line find spans", () => {
    expect(locateFind(mutant({ find: "b\nc" }), "a\nb\nc\nd")).toEqual({
      kind: "found",
      offset: 2,
      startLine: 2,
      endLine: 3,
    });
  });
  it("applyMutant replaces exactly the found text", () => {
    const m = mutant({ find: "b\nc", replace: "X" });
    const site = locateFind(m, "a\nb\nc\nd");
    expect(site.kind === "found" && applyMutant(m, "a\nb\nc\nd", site)).toBe("a\nX\nd");
  });
});

describe("scanTags and pairTags", () => {
  it("a trailing tag protects its own line; a tag on its own line protects the next; a line may carry two", () => {
    const text = ["a();", `b(); ${TAG}one`, `  ${TAG}two`, `c(); ${TAG}three ${TAG}four`].join("\n");
    expect(scanTags("src/a.ts", text).map((t) => [t.id, t.line, t.commentLine])).toEqual([
      ["one", 2, 2],
      ["two", 4, 3],
      ["three", 4, 4],
      ["four", 4, 4],
    ]);
  });
  it("accepts a catalog where every tag has its mutant, every mutant its tag, and each find covers its line", () => {
    const files = { "src/a.ts": `keep();\nguard(); ${TAG}m\n` };
    const ms = [mutant({ find: "guard();" })];
    expect(pairTags(ms, scanTags("src/a.ts", files["src/a.ts"]), sitesOf(ms, files))).toEqual([]);
  });
  it("refuses a tag with no mutant, a mutant with no tag, a find that misses its tagged line, and a tag in another file", () => {
    const files = { "src/a.ts": `keep();\nguard(); ${TAG}m\nx ${TAG}orphan\n`, "src/b.ts": `y ${TAG}elsewhere\n` };
    const ms = [
      mutant({ find: "keep();" }),
      mutant({ id: "untagged", find: "keep" }),
      mutant({ id: "elsewhere", find: "keep();" }),
    ];
    const tags = [...scanTags("src/a.ts", files["src/a.ts"]), ...scanTags("src/b.ts", files["src/b.ts"])];
    const problems = pairTags(ms, tags, sitesOf(ms, files)).join("\n");
    expect(problems).toContain("src/a.ts:3: tag orphan has no mutant");
    expect(problems).toContain("untagged: no safety tag names this mutant");
    expect(problems).toContain("m: find covers src/a.ts:1-1 but the tagged line is 2");
    expect(problems).toContain("elsewhere: tagged in src/b.ts:1 but mutates src/a.ts");
  });
  it("refuses a mutant tagged twice", () => {
    const files = { "src/a.ts": `a(); ${TAG}m\nb(); ${TAG}m\n` };
    const ms = [mutant({ find: "a();" })];
    expect(pairTags(ms, scanTags("src/a.ts", files["src/a.ts"]), sitesOf(ms, files)).join("\n")).toContain(
      "m: tagged 2 times",
    );
  });
});

describe("sortCatalog", () => {
  it("orders by catalog file, then by position in the file, so shards are stable", () => {
    const ms = [
      mutant({ id: "z", source: "mutants/b.json" }),
      mutant({ id: "y", source: "mutants/a.json" }),
      mutant({ id: "x", source: "mutants/b.json" }),
    ];
    expect(sortCatalog(ms).map((m) => m.id)).toEqual(["y", "z", "x"]);
  });
});

describe("this project's catalog", () => {
  it("pairs every safety tag in src with a mutant whose find matches once and covers the tagged line", () => {
    const c = loadCatalog(REPO_ROOT);
    expect(c.problems).toEqual([]);
    expect(c.mutants.length).toBeGreaterThan(0);
    for (const m of c.mutants) expect(c.sites.get(m.id)?.kind, m.id).toBe("found");
  });
});
