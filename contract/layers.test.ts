// The layer table: which part of the repository may import which. Every relative import of every
// TypeScript file (production, tests, scripts) is an arrow between two parts, and every arrow must
// be in the table; every arrow in the table must be used, so the table and the README's map stay
// the truth. src/core additionally imports no module that reaches the machine.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf } from "../src/core/imports.ts";

const ROOT = resolve(import.meta.dirname, "..");

type Part =
  | "core"
  | "host"
  | "cli"
  | "conformance"
  | "mutation"
  | "review"
  | "contract"
  | "live"
  | "matrix"
  | "scripts";

/** The parts, where each lives, what each may import, and why. A part may always import itself. */
const LAYERS: Record<Part, { dir: string; may: readonly Part[]; why: string }> = {
  core: { dir: "src/core", may: [], why: "the confinement's decisions over data: pure, so every one is a golden" },
  host: {
    dir: "src/host",
    may: ["core"],
    why: "the imperative shell that carries core's decisions out; production never reaches the verification engine",
  },
  cli: {
    dir: "src/cli",
    may: ["core", "host", "conformance"],
    why: "`plan` shows core's decisions on this host; `run` runs the scenarios",
  },
  conformance: {
    dir: "src/conformance",
    may: ["core", "host"],
    why: "the verification engine uses production, never the reverse",
  },
  mutation: { dir: "src/mutation", may: [], why: "a tool of its own: mutants on tree copies, run by any vitest suite" },
  review: {
    dir: "src/review",
    may: ["core", "host", "mutation", "conformance"],
    why: "reads goldens with core's vocabulary; its catalog self-test reuses the mutation runner's phases and drives the golden helper's log",
  },
  contract: {
    dir: "contract",
    may: ["core", "host", "cli", "conformance", "mutation", "review", "matrix"],
    why: "the contract tier tests every part; the README's Hosts table against the matrix's results",
  },
  live: {
    dir: "live",
    may: ["core", "host", "conformance"],
    why: "the live tier runs production in real sandboxes through the engine's worlds",
  },
  matrix: {
    dir: "matrix",
    may: ["core", "host", "conformance"],
    why: "the host matrix boots real hosts and runs production and the engine's worlds in each",
  },
  scripts: {
    dir: "scripts",
    may: ["core", "host", "conformance", "mutation", "review", "contract", "matrix"],
    why: "npm scripts: entry points into every tool; bench reuses the contract's launch cases, test:matrix the matrix's recipes",
  },
};

/** Modules that reach the machine; src/core decides over data and must not import them. */
const CORE_FORBIDDEN =
  /^(node:)?(fs|fs\/promises|child_process|net|os|dgram|cluster|worker_threads|http|https|dns|process)$/;
/** Packages src/core may import: pure computation only (node:crypto here only hashes). */
const CORE_PACKAGES = new Set(["zod", "node:crypto"]);
/** Test-only packages: production (core, host, cli) must run without them. */
const TEST_PACKAGES = /^(vitest|@vitest\/|fast-check|msw|mutation-testing-)/;
const PRODUCTION: readonly Part[] = ["core", "host", "cli"];

type SourceFile = { path: string; text: string };

/**
 * The helper StrykerJS puts at the top of each file it instruments (npm run mutants:sweep, in place),
 * sometimes on the line of a doc comment: it reads process.env for the active mutant. The sweep's,
 * not the file's, so the process.env rule looks past it; the rest of the file is checked as written.
 */
const STRYKER_HELPER = /function stryNS_9fa48\(\) \{\n[\s\S]*?\n\}\n/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (n === "node_modules" || n.startsWith(".")) return [];
    return statSync(p).isDirectory() ? tsFiles(p) : /\.(ts|mts|cts)$/.test(n) ? [p] : [];
  });
}

const partOf = (path: string): Part | undefined =>
  (Object.keys(LAYERS) as Part[]).find((p) => path === LAYERS[p].dir || path.startsWith(LAYERS[p].dir + "/"));

/**
 * Every problem of the given files against the layers, `path:line: why`, and the arrows used.
 * `exists` answers whether a repository path exists (a relative import of a missing file is a problem).
 */
function checkLayers(
  files: readonly SourceFile[],
  layers: typeof LAYERS,
  exists: (path: string) => boolean,
): { problems: string[]; used: Set<string> } {
  const problems: string[] = [];
  const used = new Set<string>();
  for (const f of files) {
    const from = partOf(f.path);
    if (!from) {
      problems.push(`${f.path}: in no part of the layer table`);
      continue;
    }
    const lines = f.text.split("\n");
    const lineOf = (spec: string) => 1 + lines.findIndex((l) => l.includes(`"${spec}"`) || l.includes(`'${spec}'`));
    if (
      from === "core" &&
      /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*["']env["']\s*\]/.test(f.text.replace(STRYKER_HELPER, "\n"))
    )
      problems.push(`${f.path}: reads process.env in src/core`);
    for (const spec of importsOf(f.text)) {
      const at = `${f.path}:${lineOf(spec)}`;
      if (!spec.startsWith(".")) {
        if (from === "core" && CORE_FORBIDDEN.test(spec))
          problems.push(`${at}: src/core imports ${spec}, which reaches the machine`);
        else if (from === "core" && !CORE_PACKAGES.has(spec))
          problems.push(`${at}: src/core imports package ${spec}, not on the pure list`);
        else if (PRODUCTION.includes(from) && TEST_PACKAGES.test(spec))
          problems.push(`${at}: production (${from}) imports the test package ${spec}`);
        continue;
      }
      const target = relative(ROOT, resolve(ROOT, dirname(f.path), spec));
      if (!exists(target)) {
        problems.push(`${at}: imports ${spec}, which does not exist`);
        continue;
      }
      const to = partOf(target);
      if (to === undefined) problems.push(`${at}: imports ${target}, in no part of the layer table`);
      else if (to !== from && !layers[from].may.includes(to))
        problems.push(
          `${at}: ${from} imports ${to} (${spec}); the layer table allows ${from} only ${layers[from].may.join(", ") || "itself"}`,
        );
      else if (to !== from) used.add(`${from} -> ${to}`);
    }
  }
  return { problems, used };
}

const readRepo = (): SourceFile[] =>
  Object.values(LAYERS)
    .map((l) => l.dir)
    .flatMap((d) => tsFiles(join(ROOT, d)))
    .map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, "utf8") }));

const declared = (layers: typeof LAYERS) =>
  (Object.keys(layers) as Part[]).flatMap((p) => layers[p].may.map((q) => `${p} -> ${q}`));

/** The README's "Where things are" table: part, folder, what it may import. */
function readReadmeLayers(): Map<string, { dir: string; may: string[] }> {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = text.slice(text.indexOf("## Where things are"));
  const rows = new Map<string, { dir: string; may: string[] }>();
  for (const line of section.slice(0, section.indexOf("\n## ", 3) >>> 0).split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 5 || cells[1] === "part" || cells[1]!.startsWith("---")) continue;
    const may = cells[3]!
      .replace(/`/g, "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "" && s !== "nothing");
    rows.set(cells[1]!.replace(/`/g, ""), { dir: cells[2]!.replace(/`/g, "").replace(/\/$/, ""), may: may.sort() });
  }
  return rows;
}

describe("the layer table", () => {
  const files = readRepo();
  const result = checkLayers(files, LAYERS, (p) => existsSync(join(ROOT, p)));

  it("every import of every source, test and script file follows the layer table, with no exception", () => {
    expect(files.length).toBeGreaterThan(250);
    expect(result.problems).toEqual([]);
  });

  it("every arrow the table allows is used: the table says what each part needs, no more", () => {
    expect(declared(LAYERS).filter((a) => !result.used.has(a))).toEqual([]);
  });

  it("the README's map of the parts is the layer table", () => {
    const readme = readReadmeLayers();
    const table = new Map(
      (Object.keys(LAYERS) as Part[]).map((p) => [p, { dir: LAYERS[p].dir, may: [...LAYERS[p].may].sort() }]),
    );
    expect(Object.fromEntries(readme)).toEqual(Object.fromEntries(table));
  });

  it("a planted wrong-way import is caught with its file and line (positive control)", () => {
    const planted: SourceFile[] = [
      { path: "src/host/launcher.ts", text: `// a launcher\nimport { x } from "../conformance/golden.ts";\n` },
      {
        path: "src/core/sandbox/binds.ts",
        text: `import { readFileSync } from "node:fs";\nconst a = process.env.HOME;\nimport { y } from "../../host/launcher.ts";\n`,
      },
      { path: "src/host/runner/main.ts", text: `import { z } from "vitest";\nimport { w } from "./gone.ts";\n` },
      { path: "src/mutation/runner.ts", text: `import { v } from "../conformance/junit.ts";\n` },
    ];
    const exists = (p: string) => p !== "src/host/runner/gone.ts";
    expect(checkLayers(planted, LAYERS, exists).problems).toEqual([
      "src/host/launcher.ts:2: host imports conformance (../conformance/golden.ts); the layer table allows host only core",
      "src/core/sandbox/binds.ts: reads process.env in src/core",
      "src/core/sandbox/binds.ts:1: src/core imports node:fs, which reaches the machine",
      "src/core/sandbox/binds.ts:3: core imports host (../../host/launcher.ts); the layer table allows core only itself",
      "src/host/runner/main.ts:1: production (host) imports the test package vitest",
      "src/host/runner/main.ts:2: imports ./gone.ts, which does not exist",
      "src/mutation/runner.ts:1: mutation imports conformance (../conformance/junit.ts); the layer table allows mutation only itself",
    ]);
  });

  it("the import scanner sees every import form (positive control)", () => {
    const src = [
      `import { readFileSync } from "node:fs";`,
      `import type { X } from "./x.ts";`,
      `export { y } from "./y.ts";`,
      `const m = await import("child_process");`,
      `import "node:net";`,
      `import {\n  a,\n  b,\n} from "os";`,
    ].join("\n");
    expect(importsOf(src)).toEqual(["node:fs", "./x.ts", "./y.ts", "child_process", "node:net", "os"]);
  });
});
