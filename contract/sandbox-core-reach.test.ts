// The edges of reach.ts and validate.ts the generated sweep found untested: which mode bits each
// need asks of a directory, chains that end early, binds with nothing to reach, and the spec
// fields validateSpec() names when a path, a package or a socket is wrong.
import { describe, expect, it } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { HOST_LAYOUTS, ROLE_CASES } from "../src/conformance/worlds/host-fixtures.ts";
import { bindNeeds, reachProblem, type PathStat } from "../src/core/sandbox/reach.ts";
import { validateSpec } from "../src/core/sandbox/validate.ts";
import type { Bind, SandboxSpec } from "../src/core/sandbox/types.ts";

const id = { uid: 1000, gid: 1000 };
const st = (path: string, kind: PathStat["kind"], mode: number): PathStat => ({ path, kind, mode, uid: 0, gid: 0 });
const root = st("/", "dir", 0o755);

describe("reachProblem: the bits each need asks", () => {
  it("an empty chain is a source that does not exist", () => {
    expect(reachProblem(id, [], "read")).toBe("(empty path) does not exist");
  });
  it("an ancestor that is not a directory is named", () => {
    expect(reachProblem(id, [root, st("/a", "file", 0o755), st("/a/b", "file", 0o644)], "read")).toBe(
      "/a is not a directory",
    );
  });
  it("for an identity neither owner nor in the group, the other bits count, not the group's", () => {
    expect(reachProblem(id, [root, st("/d", "dir", 0o701), st("/d/f", "file", 0o704)], "read")).toBe(null);
  });
  it("searching a source that is not a directory asks nothing of it", () => {
    expect(reachProblem(id, [root, st("/f", "file", 0o600)], "search")).toBe(null);
  });
  it("reading a directory needs r and x; writing one needs w and x", () => {
    expect(reachProblem(id, [root, st("/d", "dir", 0o704)], "read")).toBe(
      "uid 1000 cannot read /d (mode 0704, owner 0:0)",
    );
    expect(reachProblem(id, [root, st("/d", "dir", 0o702)], "write")).toBe(
      "uid 1000 cannot write /d (mode 0702, owner 0:0)",
    );
    expect(reachProblem(id, [root, st("/d", "dir", 0o703)], "write")).toBe(null);
  });
  it("connecting asks the write bit alone, even of a directory", () => {
    expect(reachProblem(id, [root, st("/s", "dir", 0o702)], "connect")).toBe(null);
  });
});

describe("bindNeeds: what the launcher checks before bwrap", () => {
  const bind = (source: string | null, mode: Bind["mode"], row: Bind["row"]): Bind => ({
    source,
    inside: source ?? "/x",
    mode,
    row,
    why: "",
  });
  it("links and empty stand-ins have nothing to reach; a row with no need is searched", () => {
    expect(
      bindNeeds([
        bind("usr/bin", "symlink", "top-link"),
        bind("/srv/ws/.git", "ro-empty", "protected"),
        bind("/usr", "ro", "usr"),
        bind("/srv/mosaic/a.sh", "ro", "adapter"),
      ]),
    ).toEqual([
      { source: "/usr", need: "search", row: "usr" },
      { source: "/srv/mosaic/a.sh", need: "read", row: "adapter" },
    ]);
  });
  it("a tree handed over at the top level needs the root searchable", () => {
    expect(bindNeeds([bind("/ws", "rw", "workspace")], ["/ws"])).toEqual([
      { source: "/", need: "search", row: "workspace" },
    ]);
  });
});

describe("validateSpec: the field each refusal names", () => {
  const facts = HOST_LAYOUTS["merged-usr"]!.facts;
  const claude = ROLE_CASES["claude-coder"]!.spec;
  const refusal = (spec: SandboxSpec, f = facts) => {
    try {
      validateSpec(spec, f);
    } catch (e) {
      return isMosaicError(e)
        ? { code: e.code, field: e.field, message: e.message }
        : `not a MosaicError: ${String(e)}`;
    }
    return "no error";
  };
  it("a package outside the checkout's node_modules", () => {
    expect(refusal({ ...claude, packages: ["/srv/other/zod"] })).toEqual({
      code: "package-outside",
      field: "packages[0]",
      message: `packages[0]: /srv/other/zod is not a package directory under ${claude.repo}/node_modules`,
    });
  });
  it("a path that is not a string", () => {
    expect(refusal({ ...claude, repo: 5 } as never)).toEqual({
      code: "not-a-path",
      field: "repo",
      message: "repo: expected a path string, got number",
    });
  });
  it("a path field the spec leaves out is passed over", () => {
    expect(refusal({ ...claude, adapter: undefined } as never)).toBe("no error");
  });
  it("each path field is checked under its own name", () => {
    const bad = "/srv/../x";
    const msg = (field: string) => ({
      code: "not-normal-absolute",
      field,
      message: `${field}: "${bad}" must be absolute and normalised (no "..", ".", "//" or trailing "/")`,
    });
    expect(refusal({ ...claude, repo: bad })).toEqual(msg("repo"));
    expect(refusal({ ...claude, runner: bad })).toEqual(msg("runner"));
    expect(refusal({ ...claude, launchSocket: bad })).toEqual(msg("launchSocket"));
    expect(refusal({ ...claude, packages: [`${claude.repo}/node_modules/zod`, bad] })).toEqual(msg("packages[1]"));
  });
  it("node or the runner's node under /tmp", () => {
    expect(refusal(claude, { ...facts, node: { path: "/tmp/n/node", realPath: "/usr/bin/node" } })).toEqual({
      code: "under-tmp",
      field: "hostFacts.node",
      message:
        "hostFacts.node: node at /tmp/n/node lies under /tmp, which the session's private /tmp covers; install node outside /tmp",
    });
    expect(refusal(claude, { ...facts, runnerNode: "/tmp/state/node" })).toEqual({
      code: "under-tmp",
      field: "hostFacts.runnerNode",
      message:
        "hostFacts.runnerNode: the runner's node at /tmp/state/node lies under /tmp, which the session's private /tmp covers; set MOSAIC_STATE_DIR outside /tmp",
    });
  });
  it("a launch socket past the kernel's 107 bytes", () => {
    const launchSocket = `/srv/${"l".repeat(98)}.sock`;
    expect(refusal({ ...claude, launchSocket })).toEqual({
      code: "socket-path-too-long",
      field: "launchSocket",
      message: `launchSocket: ${launchSocket} is 108 bytes; a Unix socket path holds 107: use a shorter socket path`,
    });
  });
});

describe("bindNeeds: a try-bind", () => {
  it("is the host's own system file or nothing, so it has nothing to reach", () => {
    const tryBind: Bind = { source: "/etc/hosts", inside: "/etc/hosts", mode: "ro-try", row: "etc", why: "" };
    const roBind: Bind = { source: "/srv/state/passwd", inside: "/etc/passwd", mode: "ro", row: "etc", why: "" };
    expect(bindNeeds([tryBind, roBind])).toEqual([{ source: "/srv/state/passwd", need: "search", row: "etc" }]);
  });
});
