import { describe, expect, it } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { renderArgvLines, renderBindLines } from "../src/core/sandbox/render.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { isWithin } from "../src/core/paths.ts";
import { normalise } from "../src/conformance/golden.ts";
import { matchGolden } from "../src/conformance/golden-expect.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixturePlaceholders } from "../src/conformance/host-fixtures.ts";

const BIND_FLAGS = new Set(["--ro-bind", "--bind", "--symlink", "--dev", "--proc"]);

/** Index of the last occurrence of a bind flag in argv. */
function lastBindIndex(argv: string[]): number {
  return argv.reduce((last, tok, i) => (BIND_FLAGS.has(tok) ? i : last), -1);
}

/** The properties that matter, checked beside every golden so a careless update cannot bless a regression. */
function assertInvariants(spec: SandboxSpec, facts: HostFacts, table: Bind[], argv: string[]): void {
  const insides = table.map((b) => b.inside);
  const runIdx = insides.indexOf(spec.runDir);
  expect(runIdx, "the run directory is bound").toBeGreaterThanOrEqual(0);
  expect(table[runIdx]!.mode, "the run directory is read-write").toBe("rw");
  expect(table.find((b) => b.inside === spec.workspace)?.mode, "the workspace is bound read-write").toBe("rw");
  for (const ro of [`${spec.runDir}/bundle`, `${spec.runDir}/session.json`]) {
    const i = insides.indexOf(ro);
    expect(i, `${ro} is bound after the run directory`).toBeGreaterThan(runIdx);
    expect(table[i]!.mode, `${ro} is read-only`).toBe("ro");
  }
  const last = table.at(-1)!;
  expect([last.inside, last.source, last.mode], "the private /tmp is the last bind").toEqual(["/tmp", `${spec.runDir}/tmp`, "rw"]);
  for (const b of table) {
    if (b.source === null || b.mode === "symlink") continue;
    if (isWithin(b.source, spec.workspace) || isWithin(b.source, spec.runDir)) continue;
    expect(isWithin(b.source, facts.home), `bind source ${b.source} lies under the host HOME`).toBe(false);
  }
  expect(insides.includes(spec.launchSocket), "the launch socket only for a launching role").toBe(spec.mayLaunch);
  const repoFiles = new Set([...spec.runnerFiles, spec.adapter]);
  for (const b of table) {
    if (b.source === null || b.mode === "symlink" || !isWithin(b.inside, spec.repo)) continue;
    expect(repoFiles.has(b.inside) || b.inside === `${spec.repo}/node_modules`, `${b.inside}: only the runner files, the adapter and node_modules of the checkout`).toBe(true);
  }
  expect(table.some((b) => b.row === "node-modules"), "node_modules only for Pi").toBe(spec.harness === "pi");
  expect(table.every((b) => b.why.length > 0), "every bind has a why").toBe(true);
  const writable = new Set([spec.workspace, spec.runDir, "/tmp"]);
  for (const b of table) {
    if (writable.has(b.inside)) continue;
    expect(["ro", "symlink", "private"], `${b.inside} is read-only: only the workspace, the run directory and the private /tmp are writable`).toContain(b.mode);
  }
  for (const p of ["/dev", "/proc"]) {
    const b = table.find((x) => x.inside === p);
    expect(b && [b.source, b.mode], `${p} is the sandbox's own, not the host's`).toEqual([null, "private"]);
  }

  const rwDests = argv.flatMap((t, i) => (t === "--bind" ? [argv[i + 2]] : []));
  expect(rwDests.sort(), "argv binds only the workspace, the run directory and /tmp read-write").toEqual([...writable].sort());
  expect(argv.filter((t) => t === "--dev-bind" || t === "--dev-bind-try" || t === "--bind-try"), "no host devices, no optional binds").toEqual([]);
  expect(argv.slice(argv.indexOf("--dev"), argv.indexOf("--dev") + 2), "a private /dev").toEqual(["--dev", "/dev"]);
  expect(argv.slice(argv.indexOf("--proc"), argv.indexOf("--proc") + 2), "a /proc of the session's own PID namespace").toEqual(["--proc", "/proc"]);
  const remount = argv.indexOf("--remount-ro");
  expect(argv[remount + 1]).toBe("/");
  expect(remount, "--remount-ro / comes after every bind").toBeGreaterThan(lastBindIndex(argv));
  const dd = argv.indexOf("--");
  expect(argv.slice(dd + 1, dd + 5), "the runner starts under setpriv's parent-death signal").toEqual(["setpriv", "--pdeathsig", "KILL", "--"]);
  expect(argv.slice(0, 5)).toEqual(["bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--as-pid-1"]);
  expect(argv).not.toContain("--die-with-parent");
  const home = argv.indexOf("HOME");
  expect([argv[home - 1], argv[home + 1]], "HOME is the run's own home/").toEqual(["--setenv", `${spec.runDir}/home`]);
}

describe("sandbox plan goldens", () => {
  for (const [layout, { why: layoutWhy, facts }] of Object.entries(HOST_LAYOUTS)) {
    for (const [roleName, { why, spec }] of Object.entries(ROLE_CASES)) {
      it(`${layout} / ${roleName}`, async () => {
        const table = binds(spec, facts);
        const argv = bwrapArgv(spec, facts, table);
        assertInvariants(spec, facts, table, argv);
        const ph = fixturePlaceholders(spec, facts);
        await matchGolden("sandbox/binds", `${layout}.${roleName}`, "txt", `bind table: ${why}; host: ${layoutWhy}`, normalise(renderBindLines(table).join("\n"), ph));
        await matchGolden("sandbox/argv", `${layout}.${roleName}`, "txt", `bwrap argv: ${why}; host: ${layoutWhy}`, normalise(renderArgvLines(argv).join("\n"), ph));
      });
    }
  }
});

describe("host layouts change only their own rows", () => {
  const spec = ROLE_CASES["claude-coder"]!.spec;
  const rows = (layout: string) => binds(spec, HOST_LAYOUTS[layout]!.facts);

  it("split-usr binds real top directories read-only instead of links", () => {
    const top = rows("split-usr").filter((b) => b.row === "top-link");
    expect(top.map((b) => [b.inside, b.mode])).toEqual([["/bin", "ro"], ["/lib", "ro"], ["/lib64", "ro"], ["/sbin", "ro"]]);
    expect(rows("merged-usr").filter((b) => b.row === "top-link").map((b) => [b.source, b.inside, b.mode])).toEqual([
      ["usr/bin", "/bin", "symlink"], ["usr/lib", "/lib", "symlink"], ["usr/lib64", "/lib64", "symlink"], ["usr/sbin", "/sbin", "symlink"],
    ]);
  });

  it("node outside /usr is bound from its real path at the path the runner is started with", () => {
    expect(rows("node-opt").filter((b) => b.row === "node").map((b) => [b.source, b.inside, b.mode])).toEqual([
      ["/opt/node-v24.21.0-linux-x64/bin/node", "/opt/node/bin/node", "ro"],
    ]);
    expect(rows("merged-usr").some((b) => b.row === "node")).toBe(false);
  });

  it("the Claude Code binary outside /usr is bound for Claude Code only", () => {
    expect(rows("claude-outside-usr").filter((b) => b.row === "claude-bin").map((b) => [b.source, b.inside])).toEqual([
      ["/opt/claude/versions/2.1.332/claude", "/opt/claude/bin/claude"],
    ]);
    const pi = binds(ROLE_CASES["pi-coder"]!.spec, HOST_LAYOUTS["claude-outside-usr"]!.facts);
    expect(pi.some((b) => b.row === "claude-bin")).toBe(false);
  });
});

describe("whole argv vector", () => {
  it("a Pi coder on merged-usr Debian, token by token", () => {
    const { spec } = ROLE_CASES["pi-coder"]!;
    const facts = HOST_LAYOUTS["merged-usr"]!.facts;
    const run = spec.runDir;
    const ws = spec.workspace;
    expect(bwrapArgv(spec, facts, binds(spec, facts))).toEqual([
      "bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--as-pid-1",
      "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
      "--ro-bind", "/etc", "/etc",
      "--dev", "/dev",
      "--proc", "/proc",
      "--ro-bind", "/srv/mosaic/src/host/runner.ts", "/srv/mosaic/src/host/runner.ts",
      "--ro-bind", "/srv/mosaic/src/host/tool-socket.ts", "/srv/mosaic/src/host/tool-socket.ts",
      "--ro-bind", "/srv/mosaic/src/core/gate/decide.ts", "/srv/mosaic/src/core/gate/decide.ts",
      "--ro-bind", "/srv/mosaic/adapters/pi/adapter.sh", "/srv/mosaic/adapters/pi/adapter.sh",
      "--ro-bind", "/srv/mosaic/node_modules", "/srv/mosaic/node_modules",
      "--ro-bind", "/run/mosaic/bus.sock", "/run/mosaic/bus.sock",
      "--bind", ws, ws,
      "--bind", run, run,
      "--ro-bind", `${run}/bundle`, `${run}/bundle`,
      "--ro-bind", `${run}/session.json`, `${run}/session.json`,
      "--bind", `${run}/tmp`, "/tmp",
      "--remount-ro", "/",
      "--setenv", "HOME", `${run}/home`,
      "--setenv", "TMPDIR", "/tmp",
      "--chdir", run,
      "--", "setpriv", "--pdeathsig", "KILL", "--", "/usr/bin/node", "/srv/mosaic/src/host/runner.ts", run,
    ]);
  });
});
