// No long functions anywhere in src/, production or verification engine: a function a reviewer
// cannot hold in one screen hides its exits and its cleanup. Every function, method and arrow
// function is at most MAX_LINES lines, except the pure tables listed with their why.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const MAX_LINES = 80;
/** Every room of src/, so a new one is checked from its first commit. */
const CHECKED = readdirSync(join(ROOT, "src"))
  .map((d) => `src/${d}`)
  .filter((d) => statSync(join(ROOT, d)).isDirectory());

/** Functions allowed past MAX_LINES: pure tables, one row per case, where splitting would only scatter the rows. */
const LONG_TABLES: Record<string, string> = {
  "src/conformance/attacks/git-rows.ts gitRows":
    "the git metadata attack rows: a table of rows, each a what, its layers and its script",
};

type Long = { where: string; lines: number };

/** Every function-like node of the source longer than max lines, as `path name` with its length. */
function findLongFunctions(path: string, text: string, max: number): Long[] {
  const src = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: Long[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && "body" in n && n.body !== undefined) {
      const first = src.getLineAndCharacterOfPosition(n.getStart(src)).line;
      const last = src.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (last - first + 1 > max) out.push({ where: `${path} ${nameOf(n)}`, lines: last - first + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

function nameOf(n: ts.Node): string {
  const own = (n as { name?: ts.Node }).name;
  if (own !== undefined) return own.getText();
  const p = n.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText();
  return `(anonymous at line ${n.getSourceFile().getLineAndCharacterOfPosition(n.getStart()).line + 1})`;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith(".ts") ? [p] : [];
  });
}

describe("function length in the verification engine", () => {
  it(`no function in ${CHECKED.join(", ")} is over ${MAX_LINES} lines, but the listed tables`, () => {
    const long = CHECKED.flatMap((d) => tsFiles(join(ROOT, d))).flatMap((p) =>
      findLongFunctions(relative(ROOT, p), readFileSync(p, "utf8"), MAX_LINES),
    );
    const unlisted = long.filter((l) => !(l.where in LONG_TABLES)).map((l) => `${l.where}: ${l.lines} lines`);
    expect(
      unlisted,
      `split these into named steps of one job each (or, for a pure table, list it in LONG_TABLES with its why)`,
    ).toEqual([]);
    // A listed table that is gone or short again must leave the list, so the list stays the truth.
    expect(Object.keys(LONG_TABLES).filter((w) => !long.some((l) => l.where === w))).toEqual([]);
  });

  it("positive control: a planted long function, method and arrow are each found, by name", () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  step(${i});`).join("\n");
    const planted = [
      `export async function runEverything() {\n${body}\n}`,
      `class Pool {\n  drain() {\n${body}\n  }\n}`,
      `const judgeAll = (x: number) => {\n${body}\n};`,
      `function short() {\n  return 1;\n}`,
    ].join("\n");
    expect(findLongFunctions("planted.ts", planted, MAX_LINES).map((l) => l.where)).toEqual([
      "planted.ts runEverything",
      "planted.ts drain",
      "planted.ts judgeAll",
    ]);
    expect(
      findLongFunctions(
        "planted.ts",
        `function exactly() {\n${Array.from({ length: MAX_LINES - 2 }, () => "  x();").join("\n")}\n}`,
        MAX_LINES,
      ),
    ).toEqual([]);
  });
});
