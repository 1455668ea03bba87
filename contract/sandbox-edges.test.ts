// The edges of binds.ts and bwrap-argv.ts the generated sweep found untested: an absent top-level
// directory, Claude Code's packages, an unknown Claude Code binary, the mount stubs, the probe's
// system binds, and a tmpfs without a size or a mode.
import { describe, expect, it } from "vitest";
import { BIND_TABLE_SYSTEM_ROWS, binds, mountStubs, systemBinds } from "../src/core/sandbox/binds.ts";
import { bindArgs, bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { ETC_FILES } from "../src/core/sandbox/etc.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";

const merged = HOST_LAYOUTS["merged-usr"]!.facts;
const claudeCoder = ROLE_CASES["claude-coder"]!.spec;
const piCoder = ROLE_CASES["pi-coder"]!.spec;
const plan = (spec: SandboxSpec, facts: HostFacts = merged) => binds(spec, facts, fixtureWorkspaceView(spec));
const rowsOf = (table: Bind[], row: Bind["row"]) =>
  table.filter((b) => b.row === row).map((b) => [b.source, b.inside, b.mode]);
/** The [option, source, inside] triples of argv that bind `inside`. */
const argvBinding = (argv: string[], inside: string) =>
  argv.flatMap((t, i) => (t.startsWith("--") && argv[i + 2] === inside ? [argv.slice(i, i + 3)] : []));

describe("the top-level directories", () => {
  it("a link is a link, a real directory is bound read-only, and an absent one is left absent", () => {
    const facts: HostFacts = {
      ...merged,
      top: {
        "/bin": { kind: "symlink", target: "usr/bin" },
        "/lib": { kind: "dir" },
        "/lib64": { kind: "absent" },
        "/sbin": { kind: "symlink", target: "usr/sbin" },
      },
    };
    const table = plan(piCoder, facts);
    expect(rowsOf(table, "top-link")).toEqual([
      ["usr/bin", "/bin", "symlink"],
      ["/lib", "/lib", "ro"],
      ["usr/sbin", "/sbin", "symlink"],
    ]);
    expect(
      bwrapArgv(piCoder, facts, table).filter((t) => t === "/lib64"),
      "nothing in argv makes /lib64",
    ).toEqual([]);
  });
});

describe("Claude Code's packages", () => {
  const packages = ["/srv/mosaic/node_modules/@modelcontextprotocol/sdk", "/srv/mosaic/node_modules/zod"];

  it("are bound read-only at their own paths for Claude Code, between the adapter and the broker socket", () => {
    const spec = { ...claudeCoder, packages };
    const table = plan(spec);
    expect(rowsOf(table, "packages")).toEqual(packages.map((p) => [p, p, "ro"]));
    const rows = table.map((b) => b.row);
    expect(rows.indexOf("packages"), "after the adapter").toBeGreaterThan(rows.indexOf("adapter"));
    expect(rows.lastIndexOf("packages"), "before the broker socket").toBeLessThan(rows.indexOf("broker-socket"));
    const argv = bwrapArgv(spec, merged, table);
    for (const p of packages) expect(argvBinding(argv, p), `${p} in argv`).toEqual([["--ro-bind", p, p]]);
  });

  it("are not bound for Pi, which gets node_modules whole", () => {
    const table = plan({ ...piCoder, packages });
    expect(rowsOf(table, "packages")).toEqual([]);
    expect(rowsOf(table, "node-modules")).toEqual([[merged.nodeModulesRealPath, "/srv/mosaic/node_modules", "ro"]]);
    expect(
      table.some((b) => packages.includes(b.inside)),
      "no package directory bound on its own",
    ).toBe(false);
  });

  it("a Claude Code spec without packages binds none", () => {
    expect(rowsOf(plan(claudeCoder), "packages")).toEqual([]);
  });
});

describe("the Claude Code binary", () => {
  it("when the host does not know it, nothing is bound for it and the plan still stands", () => {
    const facts: HostFacts = { ...HOST_LAYOUTS["claude-outside-usr"]!.facts, claude: undefined };
    const table = plan(claudeCoder, facts);
    expect(rowsOf(table, "claude-bin")).toEqual([]);
    expect(table.some((b) => b.inside.startsWith("/opt/claude"))).toBe(false);
  });
});

describe("mount stubs", () => {
  const ws = claudeCoder.workspace;
  // A git repository with no config and no hooks; .vscode and the rest of the protected paths are absent.
  const view = memoryView({ [`${ws}/.git/HEAD`]: "file", [`${ws}/README.md`]: "file" });

  it("are exactly the protected paths the plan stands in for, a directory for an empty one, a file for /dev/null", () => {
    const stubs = mountStubs(claudeCoder, view);
    const standIns = binds(claudeCoder, merged, view)
      .filter((b) => b.row === "protected" && (b.mode === "ro-empty" || b.source === "/dev/null"))
      .map((b) => ({ path: b.inside, kind: b.mode === "ro-empty" ? "dir" : "file" }));
    expect(standIns.length, "the view leaves protected paths to stand in for").toBeGreaterThan(0);
    expect(stubs).toEqual(standIns);
    expect(stubs).toContainEqual({ path: `${ws}/.git/config`, kind: "file" });
    expect(stubs).toContainEqual({ path: `${ws}/.git/hooks`, kind: "dir" });
    expect(stubs).toContainEqual({ path: `${ws}/.vscode`, kind: "dir" });
  });

  it("a path that exists gets no stub, and neither does .git itself", () => {
    const paths = mountStubs(claudeCoder, view).map((s) => s.path);
    expect(paths).not.toContain(`${ws}/.git`);
    expect(paths).not.toContain(`${ws}/README.md`);
    expect(paths, "nothing is created for .git/commondir, whose existence would break git").not.toContain(
      `${ws}/.git/commondir`,
    );
  });
});

describe("the probe's system binds", () => {
  it.each(Object.entries(HOST_LAYOUTS))(
    "%s: the system rows, the runner's node and /tmp, exactly as a session gets them",
    (_layout, { facts }) => {
      const sys = systemBinds(facts);
      const session = plan(piCoder, facts);
      const rows = new Set([...BIND_TABLE_SYSTEM_ROWS, "runner-node", "tmp"]);
      expect(sys.length).toBeGreaterThan(0);
      expect(sys).toEqual(session.filter((b) => rows.has(b.row)));
      expect(
        sys.every((b) => b.why.length > 0),
        "each has its row's why",
      ).toBe(true);
      expect([...new Set(sys.map((b) => b.row))]).toEqual([...BIND_TABLE_SYSTEM_ROWS, "runner-node", "tmp"]);
      expect(sys.at(-1), "the bounded private /tmp").toMatchObject({ inside: "/tmp", mode: "tmpfs", row: "tmp" });
      expect(
        sys.filter((b) => b.row === "runner-node").map((b) => [b.source, b.inside, b.mode]),
        "the execute-only node, read-only",
      ).toEqual([[facts.runnerNode, facts.runnerNode, "ro"]]);
    },
  );
});

describe("bindArgs", () => {
  const tmpfs = (extra: Partial<Bind>): Bind => ({
    source: null,
    inside: "/x",
    mode: "tmpfs",
    why: "a test tmpfs",
    row: "tmp",
    ...extra,
  });
  it.each<[string, Bind, string[]]>([
    ["a tmpfs with neither size nor mode", tmpfs({}), ["--tmpfs", "/x"]],
    ["a tmpfs with a size only", tmpfs({ size: 4096 }), ["--size", "4096", "--tmpfs", "/x"]],
    ["a tmpfs with a mode only", tmpfs({ perms: "0700" }), ["--perms", "0700", "--tmpfs", "/x"]],
    [
      "a tmpfs with both: the mode, then the size, then the mount",
      tmpfs({ perms: "1777", size: 1024 }),
      ["--perms", "1777", "--size", "1024", "--tmpfs", "/x"],
    ],
  ])("%s gets only the options it has", (_name, bind, argv) => {
    expect(bindArgs(bind)).toEqual(argv);
  });
});

describe("the session's own passwd and group", () => {
  const own = { passwd: "/srv/state/identity/r1/passwd", group: "/srv/state/identity/r1/group" };
  // Planned inside each test, so the sweep's per-test coverage counts the plan as that test's.
  const table = () => plan({ ...piCoder, etcIdentity: own });
  it("take the place of the host's two; every other file of ETC_FILES is still tried from the host", () => {
    const accounts = ["/etc/passwd", "/etc/group"];
    const others = ETC_FILES.map((e) => e.path).filter((p) => !accounts.includes(p));
    expect(others.length, "the list holds more than the two account files").toBeGreaterThan(0);
    expect(rowsOf(table(), "etc")).toEqual([
      ...others.map((p) => [p, p, "ro-try"]),
      [own.passwd, "/etc/passwd", "ro"],
      [own.group, "/etc/group", "ro"],
    ]);
  });
  it("every bind says why, the session's own account files too", () => {
    expect(
      table()
        .filter((b) => b.why === "")
        .map((b) => b.inside),
    ).toEqual([]);
  });
});
