// A workspace or run directory reached through a symbolic link is refused before anything is
// bound: every check of the launch reads the path's text, and bwrap binds what the link points to.
import { describe, expect, it } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import type { FsEntry, FsView } from "../src/core/gate/fs-view.ts";
import { binds } from "../src/core/sandbox/binds.ts";
import { linkOnPath, refuseLinkedPaths } from "../src/core/sandbox/linked-paths.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";

/** A filesystem of directories, with the links named; anything else is missing. */
function view(dirs: string[], links: Record<string, string> = {}): FsView {
  return {
    lstat: (p): FsEntry =>
      p in links ? { kind: "link", target: links[p]! } : dirs.includes(p) ? { kind: "dir" } : { kind: "missing" },
  };
}

const DIRS = ["/data", "/data/acme", "/data/acme/ws", "/data/runs"];

describe("linkOnPath", () => {
  it("names the first component that is a link, at the end or on the way; none on a path of directories or one not made yet", () => {
    expect(linkOnPath(view(DIRS, { "/data/acme/ws": "/home/founder" }), "/data/acme/ws")).toEqual({
      at: "/data/acme/ws",
      target: "/home/founder",
    });
    expect(linkOnPath(view(DIRS, { "/data/acme": "/home" }), "/data/acme/ws"), "a parent that is a link").toEqual({
      at: "/data/acme",
      target: "/home",
    });
    expect(
      linkOnPath(view(DIRS, { "/data": "/srv", "/data/acme": "/home" }), "/data/acme/ws"),
      "the first one",
    ).toEqual({ at: "/data", target: "/srv" });
    expect(linkOnPath(view(DIRS), "/data/acme/ws"), "control: directories all the way").toBe(null);
    expect(linkOnPath(view(DIRS), "/data/runs/run-1"), "a run directory not made yet").toBe(null);
  });
});

describe("refuseLinkedPaths", () => {
  const refusal = (fs: FsView, spec = { workspace: "/data/acme/ws", runDir: "/data/runs/run-1" }) => {
    try {
      refuseLinkedPaths(spec, fs);
    } catch (e) {
      return isMosaicError(e) ? `${e.code} ${e.field}: ${e.message}` : `not a MosaicError: ${String(e)}`;
    }
    return "accepted";
  };

  it("a workspace that is a link to the founder's HOME is refused, naming the link and its target; control: the directory itself is accepted", () => {
    expect(refusal(view(DIRS, { "/data/acme/ws": "/home/founder" }))).toBe(
      "path-through-link workspace: workspace: /data/acme/ws goes through /data/acme/ws, a symbolic link to /home/founder: the sandbox would bind the link's target, which no check of /data/acme/ws saw; name the directory itself",
    );
    expect(refusal(view(DIRS)), "control").toBe("accepted");
  });

  it("a run directory under a link is refused too", () => {
    expect(refusal(view(DIRS, { "/data/runs": "/etc" }))).toMatch(
      /^path-through-link runDir: runDir: \/data\/runs\/run-1 goes through \/data\/runs, a symbolic link to \/etc:/,
    );
  });
});

describe("every plan's binds check the paths first", () => {
  it("binds() refuses a workspace whose parent is a link, before any row is planned; control: the same view without the link plans", () => {
    const spec = ROLE_CASES["pi-coder"]!.spec;
    const facts = HOST_LAYOUTS["merged-usr"]!.facts;
    const real = fixtureWorkspaceView(spec);
    const parent = spec.workspace.slice(0, spec.workspace.lastIndexOf("/"));
    const linked: FsView = { lstat: (p) => (p === parent ? { kind: "link", target: "/home" } : real.lstat(p)) };
    expect(() => binds(spec, facts, linked)).toThrow(
      expect.objectContaining({ code: "path-through-link", field: "workspace" }),
    );
    expect(binds(spec, facts, real).length, "control").toBeGreaterThan(0);
  });
});
