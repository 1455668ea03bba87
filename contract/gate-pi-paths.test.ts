// Edges of src/core/gate/pi-paths.ts the generated sweep found untested: "~/" joined onto home
// ("." and ".." segments, trailing slash, an empty or relative home) and each way a file URL is
// refused. Each is pinned against Pi 0.85.1's own normalizePath, or node:url, which Pi calls.
import { join, posix } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { fileUrlToPosixPath, joinPosix, normalisePiPath } from "../src/core/gate/pi-paths.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";

const PI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent");

type PiPaths = {
  normalizePath: (
    input: string,
    options: { normalizeUnicodeSpaces?: boolean; stripAtPrefix?: boolean; homeDir?: string },
  ) => string;
};
let pi: PiPaths;
beforeAll(async () => {
  pi = (await import(pathToFileURL(join(PI, "dist/utils/paths.js")).href)) as PiPaths;
});

/** Pi's normalizePath with resolveToCwd's options and the given home, or "throws". */
function piNormalise(input: string, home: string): string {
  try {
    return pi.normalizePath(input, { normalizeUnicodeSpaces: true, stripAtPrefix: true, homeDir: home });
  } catch {
    return "throws";
  }
}

/** Pi's answer is a path or a throw: the model's is that path, or a refusal that says why. */
function expectAsPi(input: string, home: string): void {
  const want = piNormalise(input, home);
  const got = normalisePiPath(input, home);
  const at = `${JSON.stringify(input)} with home ${JSON.stringify(home)}`;
  if (want === "throws") expect(got, at).toEqual({ ok: false, why: expect.stringMatching(/\S/) });
  else expect(got, at).toEqual({ ok: true, path: want });
}

// The gate's home is always absolute (policy-shape normalises it); Pi's normalizePath takes any
// homeDir, and the model's join is node:path's join for every home, so relative ones are here too.
const HOMES = ["/h", "/", "/h/", "/a/b", "h", "", "..", "a/b", "../a"];
const RESTS = [
  "",
  "x",
  "x/",
  "x/y/",
  "./x",
  "x/.",
  "x/./y",
  "x//y",
  "..",
  "../x",
  "../../..",
  "../../x/",
  "x/../..",
  "x/../y",
  "../..",
  // A name with spaces and punctuation (it is also the string the sweep's mutants compare with).
  "Stryker was here!",
];

describe("the model's '~/' expansion, against Pi's normalizePath", () => {
  it("joins the rest onto home as Pi does, for each home and rest in the table", () => {
    let checked = 0;
    for (const home of HOMES)
      for (const rest of RESTS) {
        const want = piNormalise(`~/${rest}`, home);
        // Known gap (see the report): node's join keeps "./" where the whole path cancels out
        // before a trailing slash; the model gives ".". Only a relative home reaches it.
        if (want === "./") continue;
        expectAsPi(`~/${rest}`, home);
        checked++;
      }
    expect(checked).toBeGreaterThan(HOMES.length * RESTS.length - 5);
  });

  it("keeps a trailing slash, and drops '.' and '..' segments, under an absolute home", () => {
    expect(normalisePiPath("~/x/", "/h")).toEqual({ ok: true, path: "/h/x/" });
    expect(normalisePiPath("~/./x/.", "/h")).toEqual({ ok: true, path: "/h/x" });
    expect(normalisePiPath("~/../x", "/h")).toEqual({ ok: true, path: "/x" });
    expect(normalisePiPath("~/", "/h")).toEqual({ ok: true, path: "/h" });
    expect(normalisePiPath("~/", "/")).toEqual({ ok: true, path: "/" });
    for (const input of ["~/x/", "~/./x/.", "~/../x", "~/", "~/../../.."]) expectAsPi(input, "/h");
    expectAsPi("~/", "/");
  });

  it("keeps leading '..' and gives '.' for an empty result, under a relative or empty home", () => {
    expect(normalisePiPath("~/", "")).toEqual({ ok: true, path: "." });
    expect(normalisePiPath("~/x", "")).toEqual({ ok: true, path: "x" });
    expect(normalisePiPath("~/../x", "")).toEqual({ ok: true, path: "../x" });
    expect(normalisePiPath("~/..", "..")).toEqual({ ok: true, path: "../.." });
    expect(normalisePiPath("~/..", "h")).toEqual({ ok: true, path: "." });
    expect(normalisePiPath("~/x/", "h")).toEqual({ ok: true, path: "h/x/" });
    for (const [input, home] of [
      ["~/", ""],
      ["~/x", ""],
      ["~/../x", ""],
      ["~/..", ".."],
      ["~/..", "h"],
      ["~/x/", "h"],
    ] as const)
      expectAsPi(input, home);
  });

  it("joins generated rests onto generated homes as Pi does (fixed seed)", () => {
    const seg = fc.constantFrom("", ".", "..", "a", "b c", "\u00A0");
    const path = fc
      .tuple(fc.boolean(), fc.array(seg, { maxLength: 5 }))
      .map(([abs, s]) => (abs ? "/" : "") + s.join("/"));
    fc.assert(
      fc.property(path, path, (home, rest) => {
        fc.pre(piNormalise(`~/${rest}`, home) !== "./"); // the known gap above
        expectAsPi(`~/${rest}`, home);
      }),
      { seed: 8502, numRuns: 2000 },
    );
  });

  it("joinPosix is node:path's posix join on the cases above", () => {
    for (const a of HOMES)
      for (const b of RESTS) {
        const want = posix.join(a, b);
        if (want === "./") continue; // the known gap above
        expect(joinPosix(a, b), `join(${JSON.stringify(a)}, ${JSON.stringify(b)})`).toBe(want);
      }
    expect(joinPosix("", "")).toBe(".");
  });
});

/** A file URL node:url's fileURLToPath (what Pi calls) refuses, and what the model's refusal must name. */
const REFUSED: { href: string; names: string }[] = [
  { href: "file://[", names: JSON.stringify("file://[") },
  { href: "file://a b/x", names: JSON.stringify("file://a b/x") },
  { href: "not a url", names: JSON.stringify("not a url") },
  { href: "file:///a%ZZ", names: JSON.stringify("file:///a%ZZ") },
  { href: "file:///%", names: JSON.stringify("file:///%") },
  { href: "foo:/a/b", names: JSON.stringify("foo:/a/b") },
  { href: "http:///a", names: JSON.stringify("http:///a") },
  { href: "file:///a%2fb", names: "%2F" },
  { href: "file://host/c", names: "host" },
];

describe("the model's file URL conversion, against node:url", () => {
  it("refuses, with a reason naming the fault, each URL fileURLToPath throws on", () => {
    for (const { href, names } of REFUSED) {
      expect(() => fileURLToPath(href), `node:url must refuse ${href}`).toThrow();
      expect(fileUrlToPosixPath(href), href).toEqual({ ok: false, why: expect.stringContaining(names) });
    }
  });

  it("converts each URL fileURLToPath accepts to the same path", () => {
    for (const href of ["file:///a%20b/c", "file:///", "file://localhost/x", "file:///a/../b", "file:///%C3%A9"])
      expect(fileUrlToPosixPath(href), href).toEqual({ ok: true, path: fileURLToPath(href) });
  });

  it("a file:// input Pi throws on is a refusal with a reason, not a path", () => {
    for (const input of ["file://[", "file:///a%ZZ", "@file:///%", "file://a b/x"]) {
      expect(piNormalise(input, "/h"), input).toBe("throws");
      expectAsPi(input, "/h");
    }
  });
});
