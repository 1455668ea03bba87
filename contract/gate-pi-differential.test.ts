import { accessSync, readFileSync, readdirSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPathLikePi, resolveToCwdLikePi } from "../src/core/gate/pi-paths.ts";
import { resolvePhysical } from "../src/core/gate/resolve.ts";
import { realFsView } from "../src/host/fs-view.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { NAMES } from "../src/conformance/gate/gate-fuzz.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const PI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent");
const RECHECK =
  "Pi's path handling differs from the gate's copy of it. Recheck, in node_modules/@earendil-works/pi-coding-agent: " +
  "dist/utils/paths.js (normalizePath, resolvePath), dist/core/tools/path-utils.js (resolveToCwd, resolveReadPathAsync), " +
  "which tools in dist/core/tools/ call resolveReadPath*, and the bundled copy under dist/bundle/ that the pi binary runs; " +
  "then update src/core/gate/pi-paths.ts and src/core/gate/file-tools.ts";

type PiPathUtils = {
  resolveToCwd: (p: string, cwd: string) => string;
  resolveReadPathAsync: (p: string, cwd: string) => Promise<string>;
};
let pi: PiPathUtils;

const scratch = makeScratch("gate-pi-diff");
// Pi expands "~" with os.homedir(), which reads the process's real HOME: setting process.env.HOME
// would not reach it in a worker thread. Both sides are asked about the same real home instead;
// a differential test needs agreement, not a particular tree there.
const home = homedir();
const cwd = join(scratch.root, "ws");

beforeAll(async () => {
  pi = (await import(pathToFileURL(join(PI, "dist/core/tools/path-utils.js")).href)) as PiPathUtils;
  mkdirSync(join(cwd, "sub"), { recursive: true });
  // Each name in some spellings, as files, a link inside and a dangling link, so every one of
  // read's choices is taken somewhere in the corpus.
  NAMES.forEach((n, i) => {
    if (n === "~") return;
    const where = [cwd, join(cwd, "sub")][i % 2]!;
    if (i % 3 === 0) writeFileSync(join(where, n), n);
    else if (i % 3 === 1) symlinkSync(join(cwd, "sub"), join(where, n));
    else symlinkSync(join(cwd, "missing"), join(where, n));
  });
  writeFileSync(join(cwd, "Shot 9.41 AM.png"), "as given");
  writeFileSync(join(cwd, "Shot 9.41\u202FAM.png"), "twin");
  // Each spelling present alone, so each step of read's order is the one Pi takes somewhere.
  for (const only of ONLY_SPELLINGS) writeFileSync(join(cwd, only.onDisk), only.onDisk);
});
afterAll(() => {
  scratch.remove();
});

/** Pi's answer, or "throws" when Pi throws (a file URL it cannot convert). */
function piResolve(input: string): string {
  try {
    return pi.resolveToCwd(input, cwd);
  } catch {
    return "throws";
  }
}
function gateResolve(input: string): string {
  const r = resolveToCwdLikePi(input, cwd, home);
  return r.ok ? r.path : "throws";
}

/** Names typed as the model would (NFC, straight apostrophe), on disk only under one other spelling. */
const ONLY_SPELLINGS = [
  { typed: "Solo 1 PM.png", onDisk: "Solo 1\u202FPM.png" },
  { typed: "Solo 2 pm.png", onDisk: "Solo 2\u202Fpm.png" },
  { typed: "O'n\u00E9e", onDisk: "O'ne\u0301e" },
  { typed: "Ga\u00EBl's", onDisk: "Ga\u00EBl\u2019s" },
  { typed: "Capture d'\u00E9cran", onDisk: "Capture d\u2019e\u0301cran" },
];

const PREFIXES = [
  "",
  "./",
  "../",
  "@",
  "@@",
  "~",
  "~/",
  "@~/",
  "~/../",
  "file://",
  "file://localhost",
  "/",
  "sub/",
  "sub/../",
  "./sub/./",
];
const SPACES = [" ", "\u00A0", "\u2000", "\u2007", "\u200A", "\u202F", "\u205F", "\u3000", "\u2028", "\u200B"];

function corpus(): string[] {
  const out = new Set<string>();
  for (const pre of PREFIXES)
    for (const n of [
      ...NAMES,
      ...ONLY_SPELLINGS.map((o) => o.typed),
      "Shot 9.41 AM.png",
      "Shot 9.41 am.png",
      "a%20b",
      "%2e%2e/x",
      "x%2Fy",
      "",
    ])
      for (const sp of SPACES.slice(0, 3)) {
        const name = n.replace(/ /g, sp);
        out.add(pre.startsWith("file://") ? `${pre}${cwd}/${name}` : pre + name);
      }
  for (const sp of SPACES) out.add(`sub/x${sp}y`).add(`${sp}@x`).add(`@${sp}x`).add(`~${sp}/x`);
  return [...out];
}

describe("the gate's model of Pi 0.85.1's path resolution", () => {
  it("pins the Pi version the model was read from", () => {
    const pkg = JSON.parse(readFileSync(join(PI, "package.json"), "utf8")) as { version: string };
    expect(pkg.version, RECHECK).toBe("0.85.1");
  });

  it("resolveToCwd: the same path for every name in the corpus", () => {
    const diffs = corpus()
      .map((s) => ({ input: s, pi: piResolve(s), gate: gateResolve(s) }))
      .filter((d) => d.pi !== d.gate);
    expect(diffs, RECHECK).toEqual([]);
  });

  it("resolveToCwd: the same path for generated strings (fixed seed)", () => {
    const piece = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.constantFrom(
        "@",
        "~",
        "~/",
        "/",
        "..",
        ".",
        "file://",
        "file:///",
        "%2e",
        "%2F",
        "%",
        " ",
        "\u00A0",
        "\u202F",
        "\u3000",
        "'",
        "\u2019",
        "AM.",
        " PM.",
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (parts) => {
        const s = parts.join("");
        expect(gateResolve(s), `${JSON.stringify(s)}: ${RECHECK}`).toBe(piResolve(s));
      }),
      { seed: 8501, numRuns: 3000 },
    );
  });

  it("resolveReadPathAsync: the same spelling picked, over names laid out on disk", async () => {
    const fs = realFsView();
    // access(2) follows links: a dangling link is "not there" for Pi.
    const exists = (p: string) => {
      const r = resolvePhysical(fs, p);
      return r.kind === "resolved" && r.exists;
    };
    const diffs: unknown[] = [];
    let picked = 0;
    for (const s of corpus()) {
      const resolved = piResolve(s);
      if (resolved === "throws") continue;
      const piPick = await pi.resolveReadPathAsync(s, cwd);
      const gatePick = readPathLikePi(gateResolve(s), exists);
      if (piPick !== resolved) picked++;
      if (piPick !== gatePick) diffs.push({ input: s, pi: piPick, gate: gatePick });
    }
    expect(diffs, RECHECK).toEqual([]);
    // The corpus must make Pi pick another spelling, or this proves nothing about the spellings.
    expect(picked).toBeGreaterThan(5);
  });

  it("the existence check the model uses agrees with access(2)", () => {
    const fs = realFsView();
    for (const n of readdirSync(cwd).concat(readdirSync(join(cwd, "sub")).map((x) => `sub/${x}`))) {
      const p = join(cwd, n);
      const r = resolvePhysical(fs, p);
      let kernel = true;
      try {
        accessSync(p);
      } catch {
        kernel = false;
      }
      expect(r.kind === "resolved" && r.exists, `${p}: ${RECHECK}`).toBe(kernel);
    }
  });

  it("only read resolves other spellings, every file tool resolves with resolveToCwd, and the bundle holds the same code", () => {
    const dir = join(PI, "dist/core/tools");
    const calling = (fn: string) =>
      readdirSync(dir)
        .filter((f) => f.endsWith(".js") && f !== "path-utils.js" && readFileSync(join(dir, f), "utf8").includes(fn))
        .sort();
    expect(calling("resolveReadPath"), RECHECK).toEqual(["read.js"]);
    // edit-diff.js is edit's TUI preview (computeEditsDiff), on the same path as edit itself.
    expect(calling("resolveToCwd"), RECHECK).toEqual([
      "edit-diff.js",
      "edit.js",
      "find.js",
      "grep.js",
      "ls.js",
      "write.js",
    ]);
    const bundle = readdirSync(join(PI, "dist/bundle/chunks"))
      .map((f) => readFileSync(join(PI, "dist/bundle/chunks", f), "utf8"))
      .join("\n");
    for (const fragment of [
      "function resolveToCwd(filePath,cwd){return resolvePath(filePath,cwd,{normalizeUnicodeSpaces:!0,stripAtPrefix:!0})}",
      "let amPmVariant=tryMacOSScreenshotPath(resolved);if(amPmVariant!==resolved&&await pathExists(amPmVariant))return amPmVariant;let nfdVariant=tryNFDVariant(resolved);if(nfdVariant!==resolved&&await pathExists(nfdVariant))return nfdVariant;let curlyVariant=tryCurlyQuoteVariant(resolved);if(curlyVariant!==resolved&&await pathExists(curlyVariant))return curlyVariant;let nfdCurlyVariant=tryCurlyQuoteVariant(nfdVariant);",
      "return filePath.replace(/ (AM|PM)\\./gi,`${NARROW_NO_BREAK_SPACE2}$1.`)",
      'return filePath.replace(/\'/g,"\\u2019")',
    ])
      expect(
        bundle.includes(fragment),
        `the pi binary's bundle no longer holds ${JSON.stringify(fragment.slice(0, 60))}...: ${RECHECK}`,
      ).toBe(true);
  });

  it("find hands its pattern to fd as a filter under the path it resolved, so the pattern never names where fd walks", () => {
    // The gate's pattern rules are a second line for Pi: fd walks searchPath only, whatever
    // groups, escapes or absolute alternatives the pattern holds (docs/gate.md). When this
    // changes, the rules become the only line: recheck them against the new find.
    const source = readFileSync(join(PI, "dist/core/tools/find.js"), "utf8");
    const bundle = readdirSync(join(PI, "dist/bundle/chunks"))
      .map((f) => readFileSync(join(PI, "dist/bundle/chunks", f), "utf8"))
      .join("\n");
    expect(source, RECHECK).toContain('const searchPath = resolveToCwd(searchDir || ".", ctx?.cwd || cwd);');
    expect(source, RECHECK).toContain('args.push("--", effectivePattern, searchPath);');
    // --no-require-git, --max-results, --full-path and the operands: no other argument reaches fd.
    expect(source.match(/args\.push\(/g)?.length, `fd gets another argument: ${RECHECK}`).toBe(4);
    expect(bundle, RECHECK).toContain('args.push("--",effectivePattern,searchPath)');
  });
});
