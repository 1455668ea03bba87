// The edges the generated sweep (npm run mutants:sweep) found untested in the gate: decide.ts's
// malformed-policy and missing-workspace blocks, its pattern bases under a path argument and its
// per-decision memo; resolve.ts's names past a missing one and a link with an empty target.
import { describe, expect, it } from "vitest";
import { decide, type Decision } from "../src/core/gate/decide.ts";
import type { FsEntry, FsView } from "../src/core/gate/fs-view.ts";
import { resolvePhysical } from "../src/core/gate/resolve.ts";
import { memoryView, type Tree } from "../src/conformance/worlds/tree.ts";

const policy = {
  workspace: "/ws",
  home: "/home/s",
  builtInTools: ["read", "write", "find", "Glob", "bash"],
  typedTools: [],
};
const blocked = (reason: string): Decision => ({ allow: false, reason });
const ALLOW: Decision = { allow: true };

/** The view, and every path the gate asked of it, in order. */
function recording(view: FsView): { view: FsView; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    view: {
      lstat(p) {
        asked.push(p);
        return view.lstat(p);
      },
    },
  };
}

describe("a policy the gate cannot use", () => {
  it("blocks every call with a reason naming what is malformed", () => {
    const fs = memoryView({ "/ws/a.txt": "file" });
    const cases: Array<[unknown, string]> = [
      [null, "not a JSON object"],
      [[], "not a JSON object"],
      ["/ws", "not a JSON object"],
      [{ ...policy, workspace: "ws" }, "workspace is not an absolute path"],
      [{ ...policy, workspace: "/ws\0x" }, "workspace is not an absolute path"],
      [{ ...policy, home: 3 }, "home is not an absolute path"],
      [{ ...policy, builtInTools: "read" }, "builtInTools is not a list of names"],
      [{ ...policy, typedTools: [1] }, "typedTools is not a list of names"],
    ];
    for (const [p, why] of cases) {
      for (const [tool, input] of [
        ["read", { path: "a.txt" }],
        ["bash", { command: "true" }],
      ] as const) {
        expect(decide(p, tool, input, fs), `${JSON.stringify(p)}: ${tool}`).toEqual(
          blocked(`the policy is malformed: ${why}`),
        );
      }
    }
    expect(decide(policy, "read", { path: "a.txt" }, fs), "positive control: the well-formed policy").toEqual(ALLOW);
  });
});

describe("a workspace that does not resolve", () => {
  it("blocks every file tool, saying why the workspace does not resolve", () => {
    const cases: Array<[string, Tree, string]> = [
      ["/ws", { "/other/a.txt": "file" }, "it does not exist"],
      // Two missing names: the second is still missing, not counted back to existing.
      ["/gone/ws", { "/other/a.txt": "file" }, "it does not exist"],
      ["/ws", { "/ws": { link: "/nowhere" } }, "goes through the dangling link /ws -> /nowhere"],
      ["/data/ws", { "/data": "file" }, "uses the file /data as a directory"],
      ["/ws", { "/ws": { link: "/ws" } }, "meets a link cycle or more than 40 links at /ws"],
    ];
    for (const [workspace, tree, why] of cases) {
      const fs = memoryView(tree);
      const p = { ...policy, workspace };
      for (const [tool, input] of [
        ["read", { path: "a.txt" }],
        ["write", { path: "a.txt", content: "x" }],
        ["find", { pattern: "*.ts" }],
      ] as const) {
        expect(decide(p, tool, input, fs), `${workspace} in ${JSON.stringify(tree)}: ${tool}`).toEqual(
          blocked(`the workspace ${workspace} does not resolve (${why})`),
        );
      }
    }
    expect(
      decide(policy, "write", { path: "a.txt", content: "x" }, memoryView({ "/ws": "dir" })),
      "positive control: the workspace exists",
    ).toEqual(ALLOW);
  });
});

describe("a pattern's fixed part under a path argument", () => {
  it("is checked under the path too, where the search runs", () => {
    // x is a directory inside; sub/x links out, and find and Glob search sub/x for "x/*" under "sub".
    const tree: Tree = { "/ws/x": "dir", "/ws/sub/x": { link: "/etc" }, "/etc/passwd": "file" };
    for (const tool of ["find", "Glob"]) {
      expect(decide(policy, tool, { path: "sub", pattern: "x/*" }, memoryView(tree)), tool).toEqual(
        blocked(
          `${tool} pattern: "x/*": its fixed prefix "sub/x" from the workspace's real path, resolves to /etc, outside the workspace`,
        ),
      );
      expect(decide(policy, tool, { pattern: "x/*" }, memoryView(tree)), `${tool}: positive control, no path`).toEqual(
        ALLOW,
      );
    }
  });

  it("is not joined to the path when it is absolute, nor to a path that is not given", () => {
    // Joined wrongly, each would name a link out: sub//ws/x is sub/ws/x, and no path is not "undefined".
    const tree: Tree = {
      "/ws/x": "dir",
      "/ws/sub/ws": { link: "/etc" },
      "/ws/undefined": { link: "/etc" },
      "/etc/x": "dir",
    };
    const cases: Array<[string, Record<string, string>]> = [
      ["find", { path: "sub", pattern: "/ws/x/*" }],
      ["Glob", { path: "sub", pattern: "/ws/x/*" }],
      ["find", { pattern: "x/*" }],
      ["Glob", { pattern: "x/*" }],
    ];
    for (const [tool, input] of cases)
      expect(decide(policy, tool, input, memoryView(tree)), `${tool} ${JSON.stringify(input)}`).toEqual(ALLOW);
    expect(
      decide(policy, "find", { path: "sub", pattern: "ws/x/*" }, memoryView(tree)).allow,
      "positive control: the relative base, joined, names the link",
    ).toBe(false);
    expect(
      decide(policy, "find", { pattern: "undefined/x/*" }, memoryView(tree)).allow,
      "positive control: the directory named undefined links out",
    ).toBe(false);
  });

  it("adds nothing when the pattern starts with a wildcard: the path alone is where the search runs", () => {
    // Pi reads the path "@" as the working directory. Joined to an empty base it would be "@/", which Pi reads as "/".
    const tree: Tree = { "/ws/a.ts": "file" };
    for (const tool of ["find", "Glob"]) {
      for (const pattern of ["*.ts", "**/*.ts", "{a,b}/*.ts"])
        expect(decide(policy, tool, { path: "@", pattern }, memoryView(tree)), `${tool} ${pattern}`).toEqual(ALLOW);
      expect(
        decide(policy, tool, { path: "@/", pattern: "*.ts" }, memoryView(tree)).allow,
        `${tool}: positive control, "@/" is the root`,
      ).toBe(false);
    }
  });

  it("is opened as written: read's other spellings are not tried for it", () => {
    // Only read tries the U+2019 spelling of a missing name; find and Glob search the name as written.
    const tree: Tree = { "/ws/Jo\u2019s": { link: "/etc" }, "/etc/passwd": "file" };
    for (const tool of ["find", "Glob"])
      expect(decide(policy, tool, { pattern: "Jo's/*" }, memoryView(tree)), tool).toEqual(ALLOW);
    expect(
      decide(policy, "read", { path: "Jo's" }, memoryView(tree)).allow,
      "positive control: read tries the twin, which links out",
    ).toBe(false);
  });
});

describe("one decision, one look at the filesystem", () => {
  it("asks the view about each path once, however many candidates share it, and the next decision asks again", () => {
    const tree: Tree = { "/ws/sub/a.txt": "file", "/ws/link": { link: "sub" }, "/ws/@x": "file" };
    const calls: Array<[string, Record<string, string>]> = [
      ["read", { path: "link/a.txt" }],
      ["read", { path: "sub/../link/./a.txt" }],
      ["read", { path: "@x" }],
      ["find", { path: "sub", pattern: "link/*" }],
    ];
    for (const [tool, input] of calls) {
      const r = recording(memoryView(tree));
      expect(decide(policy, tool, input, r.view), `${tool} ${JSON.stringify(input)}`).toEqual(ALLOW);
      const twice = r.asked.filter((p, i) => r.asked.indexOf(p) !== i);
      expect(twice, `${tool} ${JSON.stringify(input)}: asked more than once`).toEqual([]);
      expect(r.asked, "it did ask").toContain("/ws");
    }
    // The memo lives for one decision: a change on disk is seen by the next.
    let now: FsEntry = { kind: "dir" };
    const rest = memoryView({ "/ws/x": "file", "/etc/passwd": "file" });
    const changing: FsView = { lstat: (p) => (p === "/ws/d" ? now : rest.lstat(p)) };
    expect(decide(policy, "read", { path: "d" }, changing)).toEqual(ALLOW);
    now = { kind: "link", target: "/etc" };
    expect(decide(policy, "read", { path: "d" }, changing)).toEqual(
      blocked(`read path: "d" from the workspace's real path, resolves to /etc, outside the workspace`),
    );
  });
});

describe("names past a missing one", () => {
  const tree: Tree = { "/ws/a.txt": "file", "/ws/out": { link: "/etc" }, "/etc/passwd": "file" };

  it('are kept as written until a ".." climbs back out of them, and then looked up again', () => {
    const cases: Array<[string, { path: string; exists: boolean }]> = [
      ["/ws/new/file.txt", { path: "/ws/new/file.txt", exists: false }],
      ["/ws/new/a/b/c", { path: "/ws/new/a/b/c", exists: false }],
      ["/ws/new/sub/../x", { path: "/ws/new/x", exists: false }],
      ["/ws/new/../a.txt", { path: "/ws/a.txt", exists: true }],
      ["/ws/new/sub/../../a.txt", { path: "/ws/a.txt", exists: true }],
      // Back on existing names, a link is followed again: here out of the workspace.
      ["/ws/new/../out/passwd", { path: "/etc/passwd", exists: true }],
      ["/ws/new/sub/../../out/passwd", { path: "/etc/passwd", exists: true }],
    ];
    for (const [abs, want] of cases)
      expect(resolvePhysical(memoryView(tree), abs), abs).toEqual({ kind: "resolved", ...want });
  });

  it("are not asked of the view: the kernel's lookup stops at the first missing name", () => {
    const r = recording(memoryView(tree));
    expect(resolvePhysical(r.view, "/ws/new/a/b.txt")).toEqual({
      kind: "resolved",
      path: "/ws/new/a/b.txt",
      exists: false,
    });
    expect(r.asked).toEqual(["/ws", "/ws/new"]);
    const again = recording(memoryView(tree));
    resolvePhysical(again.view, "/ws/new/../a.txt");
    expect(again.asked, "positive control: past the climb back, names are asked again").toEqual([
      "/ws",
      "/ws/new",
      "/ws/a.txt",
    ]);
  });
});

describe("a link with an empty target", () => {
  it("dangles: it names nothing, not the directory it sits in", () => {
    // Linux cannot create one (symlink(2) says ENOENT), but a view may answer one.
    const tree: Tree = { "/ws/e": { link: "" }, "/ws/a.txt": "file" };
    for (const abs of ["/ws/e", "/ws/e/a.txt", "/ws/e/new.txt"])
      expect(resolvePhysical(memoryView(tree), abs), abs).toEqual({ kind: "dangling", link: "/ws/e", target: "" });
    for (const [tool, input] of [
      ["read", { path: "e/a.txt" }],
      ["write", { path: "e", content: "x" }],
    ] as const) {
      expect(decide(policy, tool, input, memoryView(tree)), tool).toEqual(
        blocked(
          `${tool} path: "${input.path}" from the workspace's real path, goes through the dangling link /ws/e -> `,
        ),
      );
    }
    expect(decide(policy, "read", { path: "a.txt" }, memoryView(tree)), "positive control").toEqual(ALLOW);
  });
});
