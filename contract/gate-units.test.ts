import { realpathSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import type { FsView } from "../src/core/gate/fs-view.ts";
import { splitPattern, climbsAfterWildcard } from "../src/core/gate/pattern.ts";
import { normalisePiPath, readSpellings } from "../src/core/gate/pi-paths.ts";
import { MAX_LINKS, resolvePhysical } from "../src/core/gate/resolve.ts";
import { layOutTree, memoryView, type Tree } from "../src/conformance/tree.ts";
import { makeScratch } from "../src/conformance/scratch.ts";

const policy = { workspace: "/ws", home: "/home/s", builtInTools: ["read", "write", "Read", "find"], typedTools: [] };
const allowed = (tree: Tree, tool: string, input: unknown) => decide(policy, tool, input, memoryView(tree)).allow;

function chain(n: number): Tree {
  const t: Record<string, { link: string } | "file"> = { "/ws/target.txt": "file" };
  for (let i = 0; i < n; i++) t[`/ws/l${i}`] = { link: i === n - 1 ? "target.txt" : `l${i + 1}` };
  return t;
}

const scratch = makeScratch("gate-units");
afterAll(() => scratch.remove());

describe("link resolution", () => {
  it("a chain of 40 links resolves and 41 is refused, as the kernel does", () => {
    expect(MAX_LINKS).toBe(40);
    const ok = resolvePhysical(memoryView(chain(40)), "/ws/l0");
    expect(ok).toEqual({ kind: "resolved", path: "/ws/target.txt", exists: true });
    expect(resolvePhysical(memoryView(chain(41)), "/ws/l0").kind).toBe("too-many-links");
    // The kernel agrees (positive control for the limit itself).
    for (const n of [40, 41]) {
      const root = `${scratch.root}/chain${n}`;
      layOutTree(chain(n), root);
      const kernel = (() => {
        try {
          return realpathSync.native(`${root}/ws/l0`);
        } catch (e) {
          return (e as NodeJS.ErrnoException).code;
        }
      })();
      expect(kernel).toBe(n === 40 ? `${root}/ws/target.txt` : "ELOOP");
    }
  });

  it("a cycle is refused, a link to a link to a file is not", () => {
    expect(resolvePhysical(memoryView({ "/ws/a": { link: "b" }, "/ws/b": { link: "a" } }), "/ws/a").kind).toBe("too-many-links");
    expect(resolvePhysical(memoryView({ "/ws/a": { link: "b" }, "/ws/b": { link: "c" }, "/ws/c": "file" }), "/ws/a").kind).toBe("resolved");
  });

  it("a dangling link is refused at any depth, and a missing name past a good link is a new file", () => {
    const tree: Tree = { "/ws/d": "dir", "/ws/a": { link: "b" }, "/ws/b": { link: "d/missing/x" }, "/ws/good": { link: "d" } };
    expect(resolvePhysical(memoryView(tree), "/ws/a")).toEqual({ kind: "dangling", link: "/ws/b", target: "d/missing/x" });
    expect(resolvePhysical(memoryView(tree), "/ws/good/new.txt")).toEqual({ kind: "resolved", path: "/ws/d/new.txt", exists: false });
  });

  it('".." after a link climbs from the link\'s target', () => {
    const tree: Tree = { "/ws/out": { link: "/elsewhere/deep" }, "/elsewhere/deep": "dir", "/elsewhere/secret": "file" };
    expect(resolvePhysical(memoryView(tree), "/ws/out/../secret")).toEqual({ kind: "resolved", path: "/elsewhere/secret", exists: true });
  });
});

describe("gate path rules", () => {
  it('".." after a link outside is refused; after a link inside it is allowed', () => {
    const tree: Tree = { "/ws/out": { link: "/etc" }, "/ws/in": { link: "sub" }, "/ws/sub": "dir", "/ws/a.txt": "file", "/data/secret": "file" };
    expect(allowed(tree, "read", { path: "out/../data/secret" })).toBe(false);
    expect(allowed(tree, "read", { path: "in/../a.txt" })).toBe(true);
  });

  it("a relative path is checked as Pi opens it: lexically from the real path, even past a link", () => {
    // /data -> /mnt/disk1; deep -> src/a/b. Taken after the link the ".."s stay inside, and from
    // the path as given they come back to /data/ws; only Pi's lexical reading reaches /mnt/data.
    const tree: Tree = { "/data": { link: "/mnt/disk1" }, "/mnt/disk1/ws/src/a/b": "dir", "/mnt/disk1/ws/deep": { link: "src/a/b" }, "/mnt/data/ws/x": "file" };
    const p = { ...policy, workspace: "/data/ws" };
    expect(decide(p, "read", { path: "deep/../../../data/ws/x" }, memoryView(tree)).allow).toBe(false);
    expect(decide(p, "read", { path: "deep/../x" }, memoryView(tree)).allow, "positive control: a .. past the link that Pi reads as inside").toBe(true);
  });

  it("the name as given is checked too, since Claude Code opens it without Pi's normalisation", () => {
    const tree: Tree = { "/ws/@evil": { link: "/etc/passwd" }, "/ws/@fine": { link: "a.txt" }, "/ws/a.txt": "file", "/etc/passwd": "file" };
    expect(allowed(tree, "read", { path: "@evil" })).toBe(false);
    expect(allowed(tree, "read", { path: "@fine" })).toBe(true);
  });

  it("decide never throws: a view that throws, a hostile input", () => {
    const throwing: FsView = {
      lstat() {
        throw new Error("boom");
      },
    };
    const d = decide(policy, "read", { path: "a.txt" }, throwing);
    expect(d).toEqual({ allow: false, reason: "the gate could not decide (boom), so it blocks" });
    const hostile = {
      get path(): string {
        throw new Error("getter");
      },
    };
    expect(decide(policy, "read", hostile, memoryView({})).allow).toBe(false);
    expect(decide(null, "read", { path: "a.txt" }, memoryView({})).allow).toBe(false);
    expect(decide({ ...policy, workspace: "ws" }, "read", { path: "a.txt" }, memoryView({})).allow).toBe(false);
    expect(decide(policy, "read", { path: "a.txt" }, memoryView({ "/ws/a.txt": "file" })).allow, "positive control").toBe(true);
  });
});

describe("Pi's normalisation", () => {
  it("each unicode space becomes an ASCII space", () => {
    for (const cp of [0xa0, 0x2000, 0x2005, 0x200a, 0x202f, 0x205f, 0x3000]) expect(normalisePiPath(`a${String.fromCodePoint(cp)}b`, "/h")).toEqual({ ok: true, path: "a b" });
    expect(normalisePiPath("a\u200Bb", "/h"), "a zero-width space is not one of them").toEqual({ ok: true, path: "a\u200Bb" });
  });
  it("one leading @, then ~, then file://", () => {
    expect(normalisePiPath("@@x", "/h")).toEqual({ ok: true, path: "@x" });
    expect(normalisePiPath("@~/x", "/h")).toEqual({ ok: true, path: "/h/x" });
    expect(normalisePiPath("~", "/h")).toEqual({ ok: true, path: "/h" });
    expect(normalisePiPath("~user/x", "/h")).toEqual({ ok: true, path: "~user/x" });
    expect(normalisePiPath("file:///a%20b/c", "/h")).toEqual({ ok: true, path: "/a b/c" });
    expect(normalisePiPath("file://host/c", "/h").ok).toBe(false);
  });
  it("read's spellings, in Pi's order, only where they differ", () => {
    // Pi tries NFD with U+2019 whenever it differs from the name, even when it equals the U+2019 spelling.
    expect(readSpellings("/ws/Jo's 9.41 AM.png").map((s) => s.label)).toEqual(["U+202F before AM/PM", "U+2019 for '", "NFD with U+2019"]);
    expect(readSpellings("/ws/caf\u00E9's").map((s) => [s.label, s.path])).toEqual([
      ["NFD", "/ws/cafe\u0301's"],
      ["U+2019 for '", "/ws/caf\u00E9\u2019s"],
      ["NFD with U+2019", "/ws/cafe\u0301\u2019s"],
    ]);
    expect(readSpellings("/ws/plain.txt")).toEqual([]);
  });
});

describe("glob patterns", () => {
  it("the fixed prefix stops at the first wildcard segment", () => {
    expect(splitPattern("src/**/*.ts")).toEqual({ prefix: "src", rest: ["**", "*.ts"] });
    expect(splitPattern("/etc/*")).toEqual({ prefix: "/etc", rest: ["*"] });
    expect(splitPattern("/*")).toEqual({ prefix: "/", rest: ["*"] });
    expect(splitPattern("{a,b}/x")).toEqual({ prefix: "", rest: ["{a,b}", "x"] });
    expect(splitPattern("a/b.txt")).toEqual({ prefix: "a/b.txt", rest: [] });
  });
  it('".." after a wildcard is a climb', () => {
    expect(climbsAfterWildcard(splitPattern("**/../x"))).toBe("..");
    expect(climbsAfterWildcard(splitPattern("src/**/x"))).toBe(null);
  });
});
