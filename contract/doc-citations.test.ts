// Every document a comment or a doc cites exists, and every section cited as
// `docs/<doc>.md, "<Heading>"` is a heading of it (issue 19: comments cited a protocol document
// that was never written). Every repository path and every `name()` a Markdown document puts in
// backticks exists: a file moved or a function renamed leaves no doc pointing at nothing. The
// checkers are pure: files in, problems out as `file:line: ...`.
// Not checked: names in string literals (only comments cite), a path whose first directory is
// not one of the repository's (`ws/AGENTS.md` is a workspace's), and the names NOT_OURS lists.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

export interface SourceFile {
  /** Path from the repository root. */
  path: string;
  text: string;
}

export interface RepoDocs {
  /** Every `.md` file of the repository, path from the root, with its headings' texts. */
  docs: ReadonlyMap<string, readonly string[]>;
  /** The repository's top-level directories: a cited path that starts elsewhere is not ours. */
  roots: ReadonlySet<string>;
}

/**
 * Names ending `.md` that comments and docs use for files that are not documents of this
 * repository, so no citation of them can be checked here.
 */
export const NOT_OURS: ReadonlyMap<string, string> = new Map([
  ["CLAUDE.md", "Claude Code's memory file, in a session's workspace or HOME: named as what a session must not load"],
  ["CLAUDE.local.md", "Claude Code's local memory file, in a session's workspace"],
  ["AGENTS.md", "Pi's context file, in a session's workspace or agent directory"],
  ["MEMORY.md", "Claude Code's auto-memory file, under HOME"],
  ["prompt.md", "the bundle's prompt file, written per run to <run>/bundle/"],
  ["DESIGN.md", "the project's design document, kept beside the seeds outside this repository (../shared/DESIGN.md)"],
]);

/**
 * A cited `.md` path: a bare name (`README.md`) or a relative path (`docs/<doc>.md`). Not a piece of
 * a longer path, a placeholder path (`<run>/`, `{b}/`), a hidden directory's file or a URL: the
 * character before it must not be part of a path.
 */
const CITATION = /(?<![\w./<>{}~$@\\-])((?:[\w-][\w.-]*\/)*[\w-][\w.-]*\.md)(?![\w/-])/g;
/** `, "Section"` (or ` "Section"`) right after a citation, a closing backtick or parenthesis allowed. */
const SECTION = /^[`)]?,?\s*"([^"\n]+)"/;
/** A citation that ends its line, its section on the next: `docs/<doc>.md,` then `"<Heading>"`. */
const SECTION_NEXT = { end: /^[`)]?,?\s*$/, start: /^\s*\*?\s*"([^"\n]+)"/ };
const URL = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/** Where TypeScript's lexical state can change; what lies between is plain code. */
const LEXICAL = /[\n/"'`{}]/g;
/** What can end a string, a template literal's text, or a regex literal, escapes and newlines included. */
const CLOSERS = { '"': /[\\\n"]/g, "'": /[\\\n']/g, "`": /[\\\n`]|\$\{/g, "/": /[\\\n/[\]]/g } as const;
/** After one of these, a `/` begins a regex literal, not a division. */
const BEFORE_REGEX = "(,=:[!&|?{};+-*%<>~^";

/** The comments of TypeScript source, line by line: the text after `//`, or of a `/* *\/` line. */
export function tsComments(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let line = 1;
  let prev = ""; // the last code character: decides whether a `/` begins a regex literal
  const templates: number[] = []; // brace depth inside each open `${`
  // The index of what closes a string, template text or regex begun before `i`, or of the newline
  // that ends an unclosed string or regex. Escapes are skipped; the lines passed are counted.
  const close = (i: number, kind: keyof typeof CLOSERS): number => {
    const re = CLOSERS[kind];
    let inClass = false;
    re.lastIndex = i;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const t = m[0];
      if (t === "\\") {
        if (text[m.index + 1] === "\n") line++;
        re.lastIndex = m.index + 2;
      } else if (t === "\n") {
        if (kind !== "`") return m.index;
        line++;
      } else if (t === "[") inClass = true;
      else if (t === "]") inClass = false;
      else if (!(inClass && t === "/")) return m.index;
    }
    return text.length;
  };
  const past = (j: number): number => (text[j] === "\n" ? j : j + 1); // an unclosed one's newline is the main loop's
  const template = (i: number): number => {
    const j = close(i, "`");
    if (!text.startsWith("${", j)) return j + 1;
    templates.push(0);
    return j + 2;
  };
  for (let i = 0; i < text.length; ) {
    LEXICAL.lastIndex = i;
    const j = LEXICAL.exec(text)?.index ?? text.length;
    if (j > i) {
      const code = text.slice(i, j).trimEnd();
      if (code !== "") prev = code[code.length - 1]!;
      i = j;
      continue;
    }
    const c = text[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      const e = end === -1 ? text.length : end;
      out.push({ line, text: text.slice(i + 2, e) });
      i = e;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const e = end === -1 ? text.length : end;
      for (const piece of text.slice(i + 2, e).split("\n")) out.push({ line: line++, text: piece });
      line--;
      i = e + 2;
    } else if (c === '"' || c === "'") {
      i = past(close(i + 1, c));
      prev = "a";
    } else if (c === "`") {
      i = template(i + 1);
      prev = "a";
    } else if (
      c === "/" &&
      (prev === "" || BEFORE_REGEX.includes(prev) || /\breturn\s*$/.test(text.slice(Math.max(0, i - 8), i)))
    ) {
      i = past(close(i + 1, "/"));
      prev = "a";
    } else if (c === "}" && templates.at(-1) === 0) {
      templates.pop();
      i = template(i + 1);
      prev = "a";
    } else {
      if (templates.length > 0 && (c === "{" || c === "}")) templates[templates.length - 1]! += c === "{" ? 1 : -1;
      prev = c;
      i++;
    }
  }
  return out;
}

/**
 * Names cited as `name()` in docs that are not this repository's functions: each with what it is.
 * A name here is exempt; a name in neither this table nor the sources is a problem.
 */
export const NOT_OUR_NAMES: ReadonlyMap<string, string> = new Map([
  ["enableSnapshotUpdate", "vitest's snapshot state API, which the mutation worker calls"],
  ["resetSnapshotUpdate", "vitest's snapshot state API, which the mutation worker calls"],
  ["toString", "JavaScript's own Object.prototype.toString"],
  ["pause", "node's Readable.prototype.pause"],
]);

/** A backticked span, outside fenced code: its text and its line. */
function backticked(text: string): Array<{ line: number; text: string }> {
  let fenced = false;
  return text.split("\n").flatMap((l, i) => {
    if (/^\s*(```|~~~)/.test(l)) fenced = !fenced;
    return fenced ? [] : [...l.matchAll(/`([^`\n]+)`/g)].map((m) => ({ line: i + 1, text: m[1]!.trim() }));
  });
}

/** `a/{b,c}.ts` as a/b.ts and a/c.ts. */
function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (m === null) return [path];
  const [before, after] = [path.slice(0, m.index), path.slice(m.index + m[0].length)];
  return m[1]!.split(",").flatMap((alt) => expandBraces(before + alt + after));
}

/** A backticked repository path (`src/x.ts`, `src/x.ts:12`, `docs/<doc>.md#heading`, `src/{a,b}.ts`, `live/`), or null. */
function citedPath(span: string, roots: ReadonlySet<string>): string | null {
  const path = span.replace(/:\d+(-\d+)?$/, "").replace(/#.*$/, "");
  if (!/^[\w.-]+(\/[\w.{},*-]*)+$/.test(path)) return null;
  return roots.has(path.split("/")[0]!) ? path : null;
}

/**
 * Every backticked repository path in the documents exists (a `*` segment is not looked up; the
 * rest is), and every backticked `name()` is a function, method or const the sources define, or
 * NOT_OUR_NAMES says what it is.
 */
export function referenceProblems(
  docs: readonly SourceFile[],
  repo: { roots: ReadonlySet<string>; exists: (path: string) => boolean; defines: (name: string) => boolean },
): string[] {
  return docs.flatMap((d) =>
    backticked(d.text).flatMap(({ line, text }) => {
      const path = citedPath(text, repo.roots);
      if (path !== null)
        return expandBraces(path)
          .filter((p) => !p.includes("*") && !repo.exists(p))
          .map((p) => `${d.path}:${line}: cites ${p}, which does not exist`);
      const name = /^([A-Za-z_$][\w$]*)\(\)$/.exec(text)?.[1];
      if (name === undefined || NOT_OUR_NAMES.has(name) || repo.defines(name)) return [];
      return [`${d.path}:${line}: cites ${name}(), which no source defines (or NOT_OUR_NAMES exempts)`];
    }),
  );
}

/** Whether the sources define `name`: a function, a const or let, or a method or property written as one. */
export function definesName(sources: string, name: string): boolean {
  const n = name.replace(/\$/g, "\\$");
  return new RegExp(
    `\\bfunction\\*?\\s+${n}\\b|\\b(?:const|let|var)\\s+${n}\\s*[=:]|^\\s*(?:export\\s+)?(?:async\\s+)?(?:static\\s+)?(?:private\\s+)?(?:readonly\\s+)?${n}\\s*[(<=:]`,
    "m",
  ).test(sources);
}

/** A Markdown document's headings, outside fenced code. */
export function markdownHeadings(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const l of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(l)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** The lines a file cites from: a TypeScript file's comments, a Markdown file's every line outside fenced code. */
function citingLines(f: SourceFile): Array<{ line: number; text: string }> {
  if (f.path.endsWith(".ts")) return tsComments(f.text);
  let fenced = false;
  return f.text.split("\n").flatMap((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    return fenced ? [] : [{ line: i + 1, text }];
  });
}

/** Where a citation points: null when it is not a document of this repository (NOT_OURS, another root). */
function resolve(cited: string, repo: RepoDocs): string[] | null {
  if (!cited.includes("/")) return NOT_OURS.has(cited) ? null : [cited, `docs/${cited}`];
  return repo.roots.has(cited.split("/")[0]!) ? [cited] : null;
}

/** Every citation of a missing document, or of a heading its document does not have, as `file:line: ...`. */
export function citationProblems(files: readonly SourceFile[], repo: RepoDocs): string[] {
  const problems: string[] = [];
  for (const f of files) {
    const lines = citingLines(f).map((l) => ({ ...l, text: l.text.replace(URL, (u) => " ".repeat(u.length)) }));
    for (const [k, { line, text: plain }] of lines.entries()) {
      for (const m of plain.matchAll(CITATION)) {
        const cited = m[1]!;
        const candidates = resolve(cited, repo);
        if (candidates === null) continue;
        const doc = candidates.find((c) => repo.docs.has(c));
        if (doc === undefined) {
          problems.push(
            `${f.path}:${line}: cites ${cited}, which does not exist (looked for ${candidates.join(", ")})`,
          );
          continue;
        }
        const rest = plain.slice(m.index + cited.length);
        const next = lines[k + 1];
        const section =
          SECTION.exec(rest)?.[1] ??
          (SECTION_NEXT.end.test(rest) && next?.line === line + 1
            ? SECTION_NEXT.start.exec(next.text)?.[1]
            : undefined);
        if (section !== undefined && !repo.docs.get(doc)!.includes(section)) {
          problems.push(`${f.path}:${line}: cites ${doc}, "${section}", which is not a heading of ${doc}`);
        }
      }
    }
  }
  return problems;
}

// ---- the repository as it is ----

const ROOT = join(import.meta.dirname, "..");
// The ignored trees (.gitignore) hold what runs write; other tests create and remove files there
// while this one walks, and nothing in them is cited.
const SKIP = new Set(["node_modules", ".git", "reports", ".scratch", "runs", ".stryker-tmp"]);

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.isFile() ? [relative(ROOT, p)] : [];
  });
}

function readRepo(): { files: SourceFile[]; repo: RepoDocs } {
  const all = walk(ROOT);
  const read = (path: string): SourceFile => ({ path, text: readFileSync(join(ROOT, path), "utf8") });
  const docs = new Map(all.filter((p) => p.endsWith(".md")).map((p) => [p, markdownHeadings(read(p).text)] as const));
  const roots = new Set(
    readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !SKIP.has(e.name))
      .map((e) => e.name),
  );
  const cites = (p: string) =>
    (/^(src|scripts|contract|live)\//.test(p) && p.endsWith(".ts")) ||
    /^docs\/[^/]+\.md$/.test(p) ||
    p === "README.md" ||
    p === "mutants/README.md";
  return { files: all.filter(cites).map(read), repo: { docs, roots } };
}

describe("the documents comments and docs cite exist", () => {
  const { files, repo } = readRepo();

  it("reads the sources it is meant to: TypeScript under src, scripts, contract, live; docs, README.md, mutants/README.md", () => {
    for (const p of [
      "src/core/tools/tool-wire.ts",
      "scripts/mutants.ts",
      "contract/doc-citations.test.ts",
      "docs/protocols.md",
      "README.md",
      "mutants/README.md",
    ]) {
      expect(files.map((f) => f.path)).toContain(p);
    }
    expect(files.some((f) => f.path.startsWith("live/"))).toBe(true);
  });

  it("every cited .md document exists, and every cited section is a heading of it", () => {
    expect(citationProblems(files, repo)).toEqual([]);
  });

  it("every repository path and name() a document cites in backticks exists", () => {
    const all = walk(ROOT);
    const docs = all
      .filter((p) => p.endsWith(".md"))
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
    const sources = all
      .filter((p) => /\.(ts|mjs|cjs|js)$/.test(p))
      .map((p) => readFileSync(join(ROOT, p), "utf8"))
      .join("\n");
    const known = new Set(all);
    const exists = (p: string) =>
      known.has(p.replace(/\/$/, "")) || all.some((f) => f.startsWith(p.endsWith("/") ? p : `${p}/`));
    expect(docs.length, "every .md of the repository").toBeGreaterThan(20);
    expect(referenceProblems(docs, { roots: repo.roots, exists, defines: (n) => definesName(sources, n) })).toEqual([]);
    for (const name of NOT_OUR_NAMES.keys())
      expect(
        docs.some((d) => d.text.includes(`\`${name}()\``)),
        `${name}() is still cited: an exemption nothing needs is stale`,
      ).toBe(true);
  });

  it("every name NOT_OURS exempts is still cited somewhere: an exemption nothing needs is stale", () => {
    const cited = new Set(
      files.flatMap((f) => citingLines(f).flatMap(({ text }) => [...text.matchAll(CITATION)].map((m) => m[1]!))),
    );
    for (const name of NOT_OURS.keys()) expect(cited, name).toContain(name);
  });

  it("docs/protocols.md has the sections the code cites, and nothing cites PROTOCOLS any more", () => {
    expect(repo.docs.get("docs/protocols.md")).toEqual(
      expect.arrayContaining(["Tool socket", "Broker", "Launch socket", "Limits"]),
    );
    expect(files.some((f) => /PROTOCOLS(\.md)?\b/.test(f.text) && f.path !== "contract/doc-citations.test.ts")).toBe(
      false,
    );
  });
});

describe("the checker itself (positive control)", () => {
  const repo: RepoDocs = {
    docs: new Map([
      ["docs/protocols.md", ["Wire protocols", "Tool socket"]],
      ["README.md", ["mosaic-harness"]],
    ]),
    roots: new Set(["docs", "src"]),
  };
  const files: SourceFile[] = [
    {
      path: "src/a.ts",
      text: [
        '// The wire (docs/protocols.md, "Tool socket"): fine.',
        'const s = "docs/gone-in-a-string.md"; // a string is not a comment',
        "/** See docs/missing.md. */",
        'const re = /"/; // after a regex with a quote: docs/protocols.md, "No such section"',
        "const t = `${'x'} docs/in-a-template.md`;",
        "/*",
        " * MISSING.md and CLAUDE.md, <run>/bundle/prompt.md, ~/x/y.md, https://example.com/README.md",
        " */",
      ].join("\n"),
    },
    {
      path: "docs/b.md",
      text: '# B\n\nSee README.md and GONE.md.\n\n```sh\ncat fenced-away.md\n```\nThe wire: docs/protocols.md,\n"Tool sockets".\n',
    },
  ];

  it("reports a missing document and a missing section with file:line, and nothing else", () => {
    expect(citationProblems(files, repo)).toEqual([
      "src/a.ts:3: cites docs/missing.md, which does not exist (looked for docs/missing.md)",
      'src/a.ts:4: cites docs/protocols.md, "No such section", which is not a heading of docs/protocols.md',
      "src/a.ts:7: cites MISSING.md, which does not exist (looked for MISSING.md, docs/MISSING.md)",
      "docs/b.md:3: cites GONE.md, which does not exist (looked for GONE.md, docs/GONE.md)",
      'docs/b.md:8: cites docs/protocols.md, "Tool sockets", which is not a heading of docs/protocols.md',
    ]);
  });

  it("reports a backticked path or name() that does not exist, and nothing else", () => {
    const doc: SourceFile = {
      path: "docs/c.md",
      text: [
        "`src/a.ts` and `src/a.ts:12` and `docs/c.md#x` and `src/{a,gone}.ts` and `src/*.ts`.",
        "`src/gone/` and `ws/AGENTS.md` (not ours) and `<run>/x.json` and `npm test`.",
        "`planBundle()` and `renamed()` and `toString()` and `planBundle(x)`.",
        "```",
        "`src/fenced-away.ts`",
        "```",
      ].join("\n"),
    };
    const present = new Set(["src/a.ts", "docs/c.md"]);
    expect(
      referenceProblems([doc], {
        roots: new Set(["src", "docs"]),
        exists: (p) => present.has(p),
        defines: (n) => definesName("export function planBundle(x) {}", n),
      }),
    ).toEqual([
      "docs/c.md:1: cites src/gone.ts, which does not exist",
      "docs/c.md:2: cites src/gone/, which does not exist",
      "docs/c.md:3: cites renamed(), which no source defines (or NOT_OUR_NAMES exempts)",
    ]);
  });

  it("a definition is a function, a const, or a method written as one; a call is not", () => {
    expect(definesName("function planBundle() {}", "planBundle")).toBe(true);
    expect(definesName("export const decide = (x) => x;", "decide")).toBe(true);
    expect(definesName("class A {\n  async close(): Promise<void> {}\n}", "close")).toBe(true);
    expect(definesName("const x = planBundle();", "planBundle")).toBe(false);
  });

  it("finds comments, not strings, templates or regexes", () => {
    expect(tsComments(files[0]!.text).map((c) => c.line)).toEqual([1, 2, 3, 4, 6, 7, 8]);
  });
});
