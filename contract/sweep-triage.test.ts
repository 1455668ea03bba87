import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { catalogTaggedLines } from "../src/mutation/sweep-tags.ts";
import {
  describeSurvivor,
  describeUnused,
  matchRows,
  readEquivalents,
  readSweepSurvivors,
  renderScores,
  sweepScores,
  triageVerdict,
  untriaged,
  type SweepMutant,
} from "../src/mutation/sweep-triage.ts";

const SOURCE = 'const a = 1;\nif (x === "y") go();\n';
const report = (status: string) =>
  JSON.stringify({
    files: {
      "src/core/x.ts": {
        source: SOURCE,
        mutants: [
          {
            mutatorName: "StringLiteral",
            replacement: '""',
            status,
            location: { start: { line: 2, column: 11 }, end: { line: 2, column: 14 } },
          },
          {
            mutatorName: "BooleanLiteral",
            replacement: "false",
            status: "Killed",
            location: { start: { line: 1, column: 1 }, end: { line: 1, column: 2 } },
          },
        ],
      },
    },
  });
const ROW = '| src/core/x.ts | StringLiteral | `"y"` | `""` | a reason |';

describe("the sweep's triage: every survivor has a test or an argued row", () => {
  it("reads survived and uncovered mutants with the code they change; killed ones are not its business", () => {
    for (const status of ["Survived", "NoCoverage"])
      expect(readSweepSurvivors(report(status))).toEqual([
        { file: "src/core/x.ts", line: 2, mutator: "StringLiteral", original: '"y"', replacement: '""', status },
      ]);
    expect(readSweepSurvivors(report("Killed"))).toEqual([]);
    expect(readSweepSurvivors("{")).toEqual({ problem: "mutation.json is not JSON" });
  });
  it("a row for the same file, mutator, code and replacement triages it; without it the survivor is named as the row it needs", () => {
    const survivors = readSweepSurvivors(report("Survived")) as SweepMutant[];
    const rows = readEquivalents(`| file | mutator | code | replacement | why |\n|---|---|---|---|---|\n${ROW}\n`);
    expect(untriaged(survivors, rows as never)).toEqual([]);
    const left = untriaged(survivors, []);
    expect(left.length, "control: no row, one survivor left").toBe(1);
    expect(describeSurvivor(left[0]!)).toBe(`Survived src/core/x.ts:2: ${ROW.replace("a reason", "<why>")}`);
    for (const other of [
      ROW.replace("StringLiteral", "BooleanLiteral"),
      ROW.replace('`""`', '`"z"`'),
      ROW.replace("x.ts", "w.ts"),
    ])
      expect(untriaged(survivors, readEquivalents(other) as never).length, other).toBe(1);
  });
  it("a row answers as many survivors as the places it names: one more identical mutant stays open, one fewer leaves the row unused", () => {
    const one = (readSweepSurvivors(report("Survived")) as SweepMutant[])[0]!;
    const twin = { ...one, line: 9 };
    const rows = (places: string) => readEquivalents(ROW.replace("StringLiteral", `StringLiteral${places}`)) as never;
    expect(matchRows([one, twin], rows(""))).toEqual({
      open: [twin],
      onTag: [],
      unused: [],
    });
    expect(matchRows([one, twin], rows(" ×2")), "control: a row for both places answers both").toEqual({
      open: [],
      onTag: [],
      unused: [],
    });
    const unused = matchRows([one], rows(" ×3")).unused;
    expect(unused.map((u) => u.left)).toEqual([2]);
    expect(describeUnused(unused[0]!)).toBe(
      '| src/core/x.ts | StringLiteral ×3 | `"y"` | `""` | … answers 1 of its 3 places',
    );
    expect(describeUnused(matchRows([], rows("")).unused[0]!)).toBe(
      '| src/core/x.ts | StringLiteral | `"y"` | `""` | … answers no survivor',
    );
  });
  it("the verdict: an open survivor fails; a row with places left fails under CI and only warns outside it", () => {
    const one = (readSweepSurvivors(report("Survived")) as SweepMutant[])[0]!;
    const spare = matchRows([], readEquivalents(ROW) as never).unused;
    const ok = "sweep-triage: 1 survivors, each argued equivalent in mutants/equivalent.md or on a catalog-tagged line";
    const warn = [
      "sweep-triage: 1 row(s) of mutants/equivalent.md name more places than they answer; lower ×N or delete the row (CI fails on them):",
      '  | src/core/x.ts | StringLiteral | `"y"` | `""` | … answers no survivor',
    ];
    expect(triageVerdict(1, { open: [], unused: [] }, true), "control: all answered").toEqual({
      exit: 0,
      out: [ok],
      err: [],
    });
    expect(triageVerdict(1, { open: [], unused: spare }, true)).toEqual({ exit: 1, out: [], err: warn });
    expect(triageVerdict(1, { open: [], unused: spare }, false)).toEqual({ exit: 0, out: [...warn, ok], err: [] });
    expect(triageVerdict(1, { open: [one], unused: [] }, false)).toEqual({
      exit: 1,
      out: [],
      err: ["sweep-triage: 1 survivors without a test or an equivalent.md row:", `  ${describeSurvivor(one)}`],
    });
  });
  it("a row answers before a tagged line does, so a tagged line's survivor with an argument counts as argued", () => {
    const one = (readSweepSurvivors(report("Survived")) as SweepMutant[])[0]!;
    const tagged = new Map([["src/core/x.ts", new Set([2])]]);
    expect(matchRows([one], readEquivalents(ROW) as never, tagged)).toEqual({ open: [], onTag: [], unused: [] });
    expect(matchRows([one], [], tagged)).toEqual({ open: [], onTag: [one], unused: [] });
  });
  it("a mutator cell is a mutator, or a mutator and ×N for N places from 1 up; anything else is refused, naming its line", () => {
    expect(
      (readEquivalents(ROW.replace("StringLiteral", "StringLiteral ×12")) as { places: number }[])[0]!.places,
    ).toBe(12);
    for (const bad of ["StringLiteral ×0", "StringLiteral ×", "StringLiteral x2", "String Literal"])
      expect(readEquivalents(`\n${ROW.replace("StringLiteral", bad)}`), bad).toEqual({
        problem: `equivalent.md line 2: "${bad}" is not a mutator, or a mutator and ×N for the places the row answers`,
      });
  });
  it("a file's score is killed over killed plus untriaged: an argued row leaves the score, an open survivor lowers it", () => {
    const rows = readEquivalents(ROW) as never;
    expect(sweepScores(report("Survived"), rows)).toEqual([
      { file: "src/core/x.ts", killed: 1, equivalent: 1, tagged: 0, untriaged: 0, score: 100 },
    ]);
    expect(sweepScores(report("Survived"), [])).toEqual([
      { file: "src/core/x.ts", killed: 1, equivalent: 0, tagged: 0, untriaged: 1, score: 50 },
    ]);
    expect(sweepScores(report("Timeout"), []), "a timeout counts as killed").toEqual([
      { file: "src/core/x.ts", killed: 2, equivalent: 0, tagged: 0, untriaged: 0, score: 100 },
    ]);
    expect(
      renderScores(sweepScores(report("NoCoverage"), []) as never)
        .split("\n")
        .at(-1),
    ).toBe("| src/core/x.ts | 1 | 0 | 0 | 1 | 50% |");
  });
  it("a survivor on a line whose safety tag has a catalog mutant is triaged by that mutant, and leaves the score", () => {
    const survivors = readSweepSurvivors(report("NoCoverage")) as SweepMutant[];
    const tagged = new Map([["src/core/x.ts", new Set([2])]]);
    expect(untriaged(survivors, [], tagged)).toEqual([]);
    expect(untriaged(survivors, [], new Map([["src/core/x.ts", new Set([1])]])).length, "another line's tag").toBe(1);
    expect(untriaged(survivors, [], new Map([["src/core/y.ts", new Set([2])]])).length, "another file's tag").toBe(1);
    expect(sweepScores(report("NoCoverage"), [], tagged)).toEqual([
      { file: "src/core/x.ts", killed: 1, equivalent: 0, tagged: 1, untriaged: 0, score: 100 },
    ]);
  });
  it("catalogTaggedLines: the lines of a swept file whose tag names one of the catalog's mutants of that file", () => {
    const file = "src/conformance/scenario/run.ts";
    const source = readFileSync(join(REPO_ROOT, file), "utf8");
    const added = source.split("\n").length; // the line appended below
    const withTag = (id: string) =>
      catalogTaggedLines(
        REPO_ROOT,
        JSON.stringify({ files: { [file]: { source: `${source}z(); // safety: ${id}\n` } } }),
      )
        .get(file)
        ?.has(added);
    expect(withTag("leak-check-drops-canary"), "a tag naming a catalog mutant of this file counts").toBe(true);
    expect(withTag("no-such-mutant"), "a tag with no catalog mutant does not").toBe(false);
    expect(withTag("host-facts-split-usr"), "nor one whose mutant is in another file").toBe(false);
  });
  it("a row with a cell missing or empty is refused, naming its line", () => {
    expect(readEquivalents('\n| src/core/x.ts | StringLiteral | `"y"` | `""` |  |')).toEqual({
      problem: "equivalent.md line 2: a row needs five cells (file, mutator, code, replacement, why), all filled",
    });
  });
  it("every row of mutants/equivalent.md names a file that holds its code today, at as many places as the row names: a stale row is caught", () => {
    const rows = readEquivalents(readFileSync(join(REPO_ROOT, "mutants/equivalent.md"), "utf8"));
    if ("problem" in rows) throw new Error(rows.problem);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const text = readFileSync(join(REPO_ROOT, r.file), "utf8").replace(/\s*\n\s*/g, " ⏎ ");
      expect(
        text.split(r.original).length - 1,
        `${r.file}: ${r.original}, at ${r.places} places at least`,
      ).toBeGreaterThanOrEqual(r.places);
      expect(r.why.length, `${r.file}: ${r.original}: a why worth reading`).toBeGreaterThan(40);
    }
  });
});
