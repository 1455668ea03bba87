import { spawnSync } from "node:child_process";
import { chmodSync, realpathSync, writeFileSync } from "node:fs";
import { posix } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import type { FsView } from "../src/core/gate/fs-view.ts";
import { claudeGlobBase, dirnamePosix, splitPattern, climbsAfterWildcard } from "../src/core/gate/pattern.ts";
import { normalisePiPath, readSpellings } from "../src/core/gate/pi-paths.ts";
import { MAX_LINKS, resolvePhysical } from "../src/core/gate/resolve.ts";
import { PATH_MAX, layOutTree, memoryView, type Tree } from "../src/conformance/worlds/tree.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { realFsView } from "../src/host/fs-view.ts";

const policy = {
  workspace: "/ws",
  home: "/home/s",
  builtInTools: ["read", "write", "Read", "find", "Glob"],
  typedTools: [],
};
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
    expect(resolvePhysical(memoryView({ "/ws/a": { link: "b" }, "/ws/b": { link: "a" } }), "/ws/a").kind).toBe(
      "too-many-links",
    );
    expect(
      resolvePhysical(memoryView({ "/ws/a": { link: "b" }, "/ws/b": { link: "c" }, "/ws/c": "file" }), "/ws/a").kind,
    ).toBe("resolved");
  });

  it("a dangling link is refused at any depth, and a missing name past a good link is a new file", () => {
    const tree: Tree = {
      "/ws/d": "dir",
      "/ws/a": { link: "b" },
      "/ws/b": { link: "d/missing/x" },
      "/ws/good": { link: "d" },
    };
    expect(resolvePhysical(memoryView(tree), "/ws/a")).toEqual({
      kind: "dangling",
      link: "/ws/b",
      target: "d/missing/x",
    });
    expect(resolvePhysical(memoryView(tree), "/ws/good/new.txt")).toEqual({
      kind: "resolved",
      path: "/ws/d/new.txt",
      exists: false,
    });
  });

  it('".." after a link climbs from the link\'s target', () => {
    const tree: Tree = {
      "/ws/out": { link: "/elsewhere/deep" },
      "/elsewhere/deep": "dir",
      "/elsewhere/secret": "file",
    };
    expect(resolvePhysical(memoryView(tree), "/ws/out/../secret")).toEqual({
      kind: "resolved",
      path: "/elsewhere/secret",
      exists: true,
    });
  });
});

describe("gate path rules", () => {
  it('".." after a link outside is refused; after a link inside it is allowed', () => {
    const tree: Tree = {
      "/ws/out": { link: "/etc" },
      "/ws/in": { link: "sub" },
      "/ws/sub": "dir",
      "/ws/a.txt": "file",
      "/data/secret": "file",
    };
    expect(allowed(tree, "read", { path: "out/../data/secret" })).toBe(false);
    expect(allowed(tree, "read", { path: "in/../a.txt" })).toBe(true);
  });

  it("a relative path is checked as Pi opens it: lexically from the real path, even past a link", () => {
    // /data -> /mnt/disk1; deep -> src/a/b. Taken after the link the ".."s stay inside, and from
    // the path as given they come back to /data/ws; only Pi's lexical reading reaches /mnt/data.
    const tree: Tree = {
      "/data": { link: "/mnt/disk1" },
      "/mnt/disk1/ws/src/a/b": "dir",
      "/mnt/disk1/ws/deep": { link: "src/a/b" },
      "/mnt/data/ws/x": "file",
    };
    const p = { ...policy, workspace: "/data/ws" };
    expect(decide(p, "read", { path: "deep/../../../data/ws/x" }, memoryView(tree)).allow).toBe(false);
    expect(
      decide(p, "read", { path: "deep/../x" }, memoryView(tree)).allow,
      "positive control: a .. past the link that Pi reads as inside",
    ).toBe(true);
  });

  it("the name as given is checked too, since Claude Code opens it without Pi's normalisation", () => {
    const tree: Tree = {
      "/ws/@evil": { link: "/etc/passwd" },
      "/ws/@fine": { link: "a.txt" },
      "/ws/a.txt": "file",
      "/etc/passwd": "file",
    };
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
    expect(
      decide(policy, "read", { path: "a.txt" }, memoryView({ "/ws/a.txt": "file" })).allow,
      "positive control",
    ).toBe(true);
  });
});

describe("Pi's normalisation", () => {
  it("each unicode space becomes an ASCII space", () => {
    for (const cp of [0xa0, 0x2000, 0x2005, 0x200a, 0x202f, 0x205f, 0x3000])
      expect(normalisePiPath(`a${String.fromCodePoint(cp)}b`, "/h")).toEqual({ ok: true, path: "a b" });
    expect(normalisePiPath("a\u200Bb", "/h"), "a zero-width space is not one of them").toEqual({
      ok: true,
      path: "a\u200Bb",
    });
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
    expect(readSpellings("/ws/Jo's 9.41 AM.png").map((s) => s.label)).toEqual([
      "U+202F before AM/PM",
      "U+2019 for '",
      "NFD with U+2019",
    ]);
    expect(readSpellings("/ws/caf\u00E9's").map((s) => [s.label, s.path])).toEqual([
      ["NFD", "/ws/cafe\u0301's"],
      ["U+2019 for '", "/ws/caf\u00E9\u2019s"],
      ["NFD with U+2019", "/ws/cafe\u0301\u2019s"],
    ]);
    expect(readSpellings("/ws/plain.txt")).toEqual([]);
  });
});

describe("Pi's AM/PM spelling", () => {
  it("ignores case, as Pi's does: a lower-case am or pm gets the narrow space too", () => {
    for (const [name, twin] of [
      ["/ws/x 9.41 am.png", "/ws/x 9.41\u202Fam.png"],
      ["/ws/x 1 Pm.txt", "/ws/x 1\u202FPm.txt"],
      ["/ws/x 1 PM.txt", "/ws/x 1\u202FPM.txt"],
    ] as const) {
      expect(readSpellings(name).find((s) => s.label === "U+202F before AM/PM")?.path, name).toBe(twin);
    }
    const tree: Tree = { "/ws/shot 1\u202Fam.png": { link: "/etc/passwd" }, "/etc/passwd": "file" };
    expect(allowed(tree, "read", { path: "shot 1 am.png" }), "a lower-case twin that links outside").toBe(false);
    expect(
      allowed(tree, "write", { path: "shot 1 am.png", content: "x" }),
      "positive control: write takes the name as given",
    ).toBe(true);
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

describe("glob patterns: the directory Claude Code searches", () => {
  it("Claude Code 2.1.332's cut: up to the last / before the first * ? [ or {, else the dirname", () => {
    const cases: Array<[string, string]> = [
      ["/data/ws/a]b/*", "/data/ws/a]b"],
      ["/data/ws/c}d/**/*.conf", "/data/ws/c}d"],
      ["/data/ws/e\\f/*", "/data/ws/e\\f"],
      ["/data/ws/+(g)/x/*.ts", "/data/ws/+(g)/x"],
      ["/data/ws/sub/x*.ts", "/data/ws/sub"],
      ["/a/b{c,d}/e", "/a"],
      ["/a/[ab]/e", "/a"],
      ["/*", "/"],
      ["**/*.ts", ""],
      ["src/*.ts", "src"],
      ["/data/ws/sub", "/data/ws"],
      ["a.txt", "."],
      ["/", "/"],
    ];
    for (const [pattern, base] of cases) expect(claudeGlobBase(pattern), pattern).toBe(base);
    // The gate's own cut is shorter wherever a ] } \ or extglob comes first.
    expect(splitPattern("/data/ws/a]b/*").prefix).toBe("/data/ws");
  });
  it("dirnamePosix is node's posix dirname", () => {
    for (const p of ["/a/b", "/a/b/", "/a", "/", "a", "a/b", "a/b//", "//a", "/a//b", "", ".", "..", "../x", "a/"])
      expect(dirnamePosix(p), JSON.stringify(p)).toBe(posix.dirname(p));
  });
  it("a ] } \\ or extglob name that links outside is refused, though the gate's own prefix stops before it", () => {
    const tree: Tree = { "/ws/in]side/n.txt": "file", "/etc/passwd": "file" };
    for (const name of ["a]b", "c}d", "e\\f", "+(g)", "!(h)", "@(i)"]) {
      const t: Tree = { ...tree, [`/ws/${name}`]: { link: "/etc" } };
      expect(
        allowed(t, "Glob", { pattern: `/ws/${name}/*` }),
        `${name}: Claude Code searches /ws/${name}, a link outside`,
      ).toBe(false);
      expect(allowed(t, "Glob", { pattern: `/ws/in]side/*` }), "positive control: a ] directory inside").toBe(true);
    }
  });
  it("both cuts are checked: the gate's shorter one still refuses a prefix outside", () => {
    // /etc/a]b links into the workspace: Claude Code would search inside, but /etc is outside.
    const tree: Tree = { "/etc/a]b": { link: "/ws" }, "/ws/x.txt": "file" };
    expect(allowed(tree, "Glob", { pattern: "/etc/a]b/*" })).toBe(false);
    expect(allowed(tree, "Glob", { pattern: "/ws/*" }), "positive control").toBe(true);
  });
});

describe("fail-closed branches", () => {
  it("a policy with no typed tools grants no typed-looking or unknown name", () => {
    const p = { ...policy, builtInTools: ["read"], typedTools: [] };
    const fs = memoryView({ "/ws/a.txt": "file" });
    for (const tool of ["mcp__mosaic__send_message", "send_message", "mcp__mosaic__", "Write", "bash"]) {
      expect(decide(p, tool, {}, fs), `${tool} with an empty typed-tool list`).toEqual({
        allow: false,
        reason: `${tool} is not one of this session's tools`,
      });
    }
    expect(
      decide({ ...p, builtInTools: [] }, "read", { path: "a.txt" }, fs).allow,
      "no built-in tools either: read is refused too",
    ).toBe(false);
    expect(decide(p, "read", { path: "a.txt" }, fs), "positive control").toEqual({ allow: true });
  });

  it("a name the view cannot read (EACCES) is a block naming where, for a read and for a new file under it", () => {
    const mem = memoryView({ "/ws/locked/x.txt": "file", "/ws/a.txt": "file" });
    const locked: FsView = {
      lstat: (p) => (p.startsWith("/ws/locked/") ? { kind: "unreadable", why: "EACCES" } : mem.lstat(p)),
    };
    expect(decide(policy, "read", { path: "locked/x.txt" }, locked)).toEqual({
      allow: false,
      reason: `read path: "locked/x.txt" from the workspace's real path, cannot be checked at /ws/locked/x.txt (EACCES)`,
    });
    expect(decide(policy, "write", { path: "locked/new.txt", content: "x" }, locked).allow, "a new file under it").toBe(
      false,
    );
    expect(
      decide(policy, "read", { path: "locked/x.txt" }, mem).allow,
      "positive control: the same path, readable",
    ).toBe(true);
  });

  it("on disk, lstat failing with EACCES blocks (checked as a process without DAC override)", () => {
    const root = `${scratch.root}/eacces`;
    layOutTree({ "/ws/locked/x.txt": "file", "/ws/open/x.txt": "file" }, root);
    chmodSync(`${root}/ws/locked`, 0o000);
    const probe = `${root}/probe.mjs`;
    writeFileSync(
      probe,
      [
        `import { decide } from ${JSON.stringify(pathToFileURL(`${REPO_ROOT}/src/core/gate/decide.ts`).href)};`,
        `import { realFsView } from ${JSON.stringify(pathToFileURL(`${REPO_ROOT}/src/host/fs-view.ts`).href)};`,
        `const p = ${JSON.stringify({ ...policy, workspace: `${root}/ws` })};`,
        `const d = (path) => decide(p, "read", { path }, realFsView());`,
        `console.log(JSON.stringify({ locked: d("locked/x.txt"), open: d("open/x.txt") }));`,
      ].join("\n"),
    );
    // Root passes every permission check; without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH it does not.
    const drop = process.getuid?.() === 0 ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] : [];
    const [cmd, ...args] = [...drop, process.execPath, probe];
    const r = spawnSync(cmd!, args, { encoding: "utf8" });
    chmodSync(`${root}/ws/locked`, 0o700);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, { allow: boolean; reason?: string }>;
    expect(out.locked, "a path the kernel refuses to look up is blocked").toEqual({
      allow: false,
      reason: `read path: "locked/x.txt" from the workspace's real path, cannot be checked at ${root}/ws/locked/x.txt (EACCES)`,
    });
    expect(out.open, "positive control: the readable twin").toEqual({ allow: true });
  });

  it("a NUL byte that appears only once a file URL is decoded is a block", () => {
    const fs = memoryView({ "/ws/a.txt": "file" });
    const d = decide(policy, "read", { path: "file:///ws/a%00.txt" }, fs);
    expect(d.allow, "a %00 in a file URL").toBe(false);
    expect(!d.allow && d.reason).toContain("names a NUL byte once normalised");
    expect(decide(policy, "read", { path: "file:///ws/a%2Etxt" }, fs), "positive control: another escape").toEqual({
      allow: true,
    });
  });

  it("a path of PATH_MAX bytes or more cannot be checked, in memory as on disk", () => {
    const root = `${scratch.root}/pathmax`;
    // As many 200-byte directories as fit below PATH_MAX with ok.txt, wherever the scratch root lies;
    // then one name (at most 206 bytes, under NAME_MAX) that takes the path to PATH_MAX.
    const base = Buffer.byteLength(`${root}/ws`);
    const n = Math.floor((PATH_MAX - 1 - base - "/ok.txt".length) / 201);
    const dirs = Array.from({ length: n }, () => "d".repeat(200)).join("/");
    const tree: Tree = { [`/ws/${dirs}/ok.txt`]: "file" };
    layOutTree(tree, root);
    const p = { ...policy, workspace: `${root}/ws` };
    const long = `${dirs}/${"x".repeat(PATH_MAX - base - n * 201 - 1)}`;
    expect(
      Buffer.byteLength(long.slice(long.lastIndexOf("/") + 1)),
      "the last name is within NAME_MAX",
    ).toBeLessThanOrEqual(255);
    expect(Buffer.byteLength(`${root}/ws/${long}`), "the path reaches PATH_MAX").toBeGreaterThanOrEqual(PATH_MAX);
    const mem = memoryView(tree, root);
    const disk = realFsView();
    const onDisk = decide(p, "write", { path: long, content: "x" }, disk);
    expect(onDisk.allow, "the kernel says ENAMETOOLONG").toBe(false);
    expect(decide(p, "write", { path: long, content: "x" }, mem), "memory agrees with disk").toEqual(onDisk);
    expect(
      decide(p, "read", { path: `${dirs}/ok.txt` }, mem),
      "positive control: a shorter path in the same tree",
    ).toEqual(decide(p, "read", { path: `${dirs}/ok.txt` }, disk));
    expect(decide(p, "read", { path: `${dirs}/ok.txt` }, disk).allow).toBe(true);
  });
});
