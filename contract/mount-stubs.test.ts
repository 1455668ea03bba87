// The mount points bwrap leaves in the host's workspace for protected paths that were absent go when
// the session ends, and nothing else does: whatever the host put at such a path while the session
// ran (a file with content, a directory with files, a link) is kept and reported. Real files.
import { mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import type { MountStub } from "../src/core/sandbox/protected.ts";
import { removeMountStubs } from "../src/host/mount-stubs.ts";

const scratch = makeScratch("mount-stubs");
afterAll(() => scratch.remove());

let n = 0;
const ws = () => {
  const d = join(scratch.root, `ws-${n++}`);
  mkdirSync(d);
  return d;
};

describe("removeMountStubs: only what is still the empty placeholder goes", () => {
  it("an empty file and an empty directory, as bwrap left them, are removed", () => {
    const d = ws();
    writeFileSync(join(d, ".npmrc"), "");
    mkdirSync(join(d, ".vscode"));
    const stubs: MountStub[] = [
      { path: join(d, ".npmrc"), kind: "file" },
      { path: join(d, ".vscode"), kind: "dir" },
    ];
    expect(removeMountStubs(stubs)).toEqual({ removed: stubs.map((s) => s.path), kept: [] });
    expect(readdirSync(d)).toEqual([]);
  });

  it("a file placeholder the host wrote into is kept, its content whole", () => {
    const d = ws();
    writeFileSync(join(d, ".npmrc"), "registry=https://host.example/\n");
    expect(removeMountStubs([{ path: join(d, ".npmrc"), kind: "file" }])).toEqual({
      removed: [],
      kept: [join(d, ".npmrc")],
    });
    expect(readFileSync(join(d, ".npmrc"), "utf8")).toBe("registry=https://host.example/\n");
  });

  it("a directory placeholder the host put a file in is kept, with its file", () => {
    const d = ws();
    mkdirSync(join(d, ".vscode"));
    writeFileSync(join(d, ".vscode/settings.json"), "{}\n");
    expect(removeMountStubs([{ path: join(d, ".vscode"), kind: "dir" }])).toEqual({
      removed: [],
      kept: [join(d, ".vscode")],
    });
    expect(readdirSync(join(d, ".vscode"))).toEqual(["settings.json"]);
  });

  it("a link the host put at a placeholder's path is kept, even to an empty file or directory", () => {
    const d = ws();
    writeFileSync(join(d, "empty"), "");
    mkdirSync(join(d, "empty-dir"));
    symlinkSync("empty", join(d, ".npmrc"));
    symlinkSync("empty-dir", join(d, ".vscode"));
    const got = removeMountStubs([
      { path: join(d, ".npmrc"), kind: "file" },
      { path: join(d, ".vscode"), kind: "dir" },
    ]);
    expect(got).toEqual({ removed: [], kept: [join(d, ".npmrc"), join(d, ".vscode")] });
    expect([readlinkSync(join(d, ".npmrc")), readlinkSync(join(d, ".vscode"))]).toEqual(["empty", "empty-dir"]);
  });

  it("a placeholder now of the other kind is kept; one already gone is neither", () => {
    const d = ws();
    mkdirSync(join(d, ".npmrc"));
    writeFileSync(join(d, ".vscode"), "");
    const got = removeMountStubs([
      { path: join(d, ".npmrc"), kind: "file" },
      { path: join(d, ".vscode"), kind: "dir" },
      { path: join(d, ".envrc"), kind: "file" },
    ]);
    expect(got).toEqual({ removed: [], kept: [join(d, ".npmrc"), join(d, ".vscode")] });
    expect(readdirSync(d).sort()).toEqual([".npmrc", ".vscode"]);
  });
});
