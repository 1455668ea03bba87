// The edges the generated sweep (npm run mutants:sweep) found untested in protected.ts: a protected
// path that cannot be examined is refused, naming it, and every stand-in's why says it was absent.
import { describe, expect, it } from "vitest";
import { PROTECTED_PATHS, protectedBinds } from "../src/core/sandbox/protected.ts";
import { PATH_MAX, memoryView, type Tree } from "../src/conformance/worlds/tree.ts";

/** A workspace path of exactly `len` bytes, in names a directory may have (none over NAME_MAX). */
function workspaceOf(len: number): string {
  let ws = "/srv";
  while (ws.length < len) ws += "/" + "w".repeat(Math.min(200, len - ws.length - 1));
  expect(ws.length, "the workspace is as long as asked").toBe(len);
  return ws;
}

const row = (path: string) => {
  const r = PROTECTED_PATHS.find((x) => x.path === path);
  if (r === undefined) throw new Error(`${path} is not a protected row`);
  return r;
};

const LONGEST = Math.max(...PROTECTED_PATHS.map((r) => r.path.length));

describe("protectedBinds: a protected path that cannot be examined", () => {
  // memoryView answers ENAMETOOLONG as lstat(2) does for a path of PATH_MAX bytes or more, so a
  // workspace near PATH_MAX leaves the longer protected paths unexaminable: the first of them in
  // the table's order is the one refused.
  it.each([
    [".git itself, the first row", ".git", { "/README.md": "file" }],
    [".git/config.worktree, past a present .git and .git/config", ".git/config.worktree", { "/.git/config": "file" }],
  ] as const)("is refused rather than bound: %s", (_what, path, tree: Tree) => {
    const ws = workspaceOf(PATH_MAX - 1 - path.length);
    const p = `${ws}/${path}`;
    expect(Buffer.byteLength(p), `${path} is exactly PATH_MAX bytes`).toBe(PATH_MAX);
    expect(() => protectedBinds(ws, memoryView(tree, ws))).toThrow(
      expect.objectContaining({
        name: "MosaicError",
        code: "protected-unreadable",
        field: p,
        message: `${p}: cannot be examined (ENAMETOOLONG), so it cannot be protected`,
      }),
    );
    // Control: where even the longest protected path is under PATH_MAX, the same tree plans.
    const shorter = workspaceOf(PATH_MAX - 2 - LONGEST);
    expect(() => protectedBinds(shorter, memoryView(tree, shorter))).not.toThrow();
  });
});

describe("protectedBinds: every bind says why", () => {
  const WS = "/srv/data/workspaces/acme/coder";
  const plan = (tree: Tree) => protectedBinds(WS, memoryView(tree, WS));

  it("a missing path's stand-in, device or empty directory, says it was absent and the row's own why", () => {
    // A repository with nothing in .git: .git/config stands in as /dev/null, the rest as empty directories.
    const { binds } = plan({ "/.git": "dir" });
    const byPath = new Map(binds.map((b) => [b.inside, b]));
    expect(byPath.get(`${WS}/.git/config`), "control: .git/config's stand-in is the device").toMatchObject({
      source: "/dev/null",
      mode: "ro",
    });
    expect(byPath.get(`${WS}/.husky`), "control: .husky's stand-in is an empty directory").toMatchObject({
      source: null,
      mode: "ro-empty",
    });
    for (const r of PROTECTED_PATHS) {
      if (r.path === ".git" || r.absent === "none") continue;
      expect(byPath.get(`${WS}/${r.path}`)?.why, `${r.path}: absent`).toBe(`absent, kept absent: ${r.why}`);
    }
  });

  it("a present path's bind gives the row's why unchanged", () => {
    const { binds } = plan({ "/.git/config": "file", "/.envrc": "file" });
    for (const path of [".git", ".git/config", ".envrc"]) {
      expect(binds.find((b) => b.inside === `${WS}/${path}`)?.why, path).toBe(row(path).why);
    }
  });
});
