import { describe, expect, it } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { renderCommandLines, renderBindLines } from "../src/core/sandbox/render.ts";
import { sessionCommand } from "../src/core/session/plan-session.ts";
import { planIdentity } from "../src/core/sandbox/identity.ts";
import { ETC_FILES } from "../src/core/sandbox/etc.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { isWithin } from "../src/core/paths.ts";
import { normalise } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import {
  HOST_LAYOUTS,
  ROLE_CASES,
  fixturePlaceholders,
  fixtureWorkspaceView,
} from "../src/conformance/worlds/host-fixtures.ts";
import { SESSION_LIMITS } from "../src/core/sandbox/limits.ts";
import { SECCOMP_FD } from "../src/core/sandbox/bwrap-argv.ts";

const BIND_FLAGS = new Set(["--ro-bind", "--bind", "--symlink", "--dev", "--proc", "--tmpfs"]);

/** Index of the last occurrence of a bind flag in argv. */
function lastBindIndex(argv: string[]): number {
  return argv.reduce((last, tok, i) => (BIND_FLAGS.has(tok) ? i : last), -1);
}

/** Index of `--remount-ro /`, the one that makes the root read-only (placeholders have their own). */
function rootRemountIndex(argv: string[]): number {
  return argv.findIndex((t, i) => t === "--remount-ro" && argv[i + 1] === "/");
}

/** The properties that matter, checked beside every golden so a careless update cannot bless a regression. */
export function assertInvariants(spec: SandboxSpec, facts: HostFacts, table: Bind[], argv: string[]): void {
  const insides = table.map((b) => b.inside);
  const runIdx = insides.indexOf(spec.runDir);
  expect(runIdx, "the run directory is bound").toBeGreaterThanOrEqual(0);
  expect(table[runIdx]!.mode, "the run directory is read-write").toBe("rw");
  const wsIdx = insides.indexOf(spec.workspace);
  expect(table[wsIdx]?.mode, "the workspace is bound read-write").toBe("rw");
  for (const ro of [`${spec.runDir}/bundle`, `${spec.runDir}/session.json`, `${spec.runDir}/sock`]) {
    const i = insides.indexOf(ro);
    expect(i, `${ro} is bound after the run directory`).toBeGreaterThan(runIdx);
    expect(table[i]!.mode, `${ro} is read-only`).toBe("ro");
  }
  const last = table.at(-1)!;
  expect([last.inside, last.source, last.mode], "the private /tmp is the last bind, a tmpfs").toEqual([
    "/tmp",
    null,
    "tmpfs",
  ]);
  expect(last.size, "/tmp is bounded").toBe(SESSION_LIMITS.tmpBytes.value);
  const home = table.find((b) => b.inside === `${spec.runDir}/home`);
  expect([home?.mode, home?.size], "HOME is a bounded tmpfs").toEqual(["tmpfs", SESSION_LIMITS.homeBytes.value]);
  for (const b of table) {
    if (b.source === null || b.mode === "symlink") continue;
    if (isWithin(b.source, spec.workspace) || isWithin(b.source, spec.runDir)) continue;
    expect(isWithin(b.source, facts.home), `bind source ${b.source} lies under the host HOME`).toBe(false);
  }
  expect(insides.includes(spec.launchSocket), "the launch socket only for a launching role").toBe(spec.mayLaunch);
  const repoFiles = new Set([...spec.runnerFiles, spec.adapter, facts.runnerNode]);
  for (const b of table) {
    if (b.source === null || b.mode === "symlink" || !isWithin(b.inside, spec.repo)) continue;
    expect(
      repoFiles.has(b.inside) || b.inside === `${spec.repo}/node_modules`,
      `${b.inside}: only the runner files, the adapter, the runner's node and node_modules of the checkout`,
    ).toBe(true);
  }
  expect(
    table.some((b) => b.row === "node-modules"),
    "node_modules only for Pi",
  ).toBe(spec.harness === "pi");
  expect(
    table.every((b) => b.why.length > 0),
    "every bind has a why",
  ).toBe(true);
  // Protected paths: after the workspace, each read-only (or the .git mount point), none writable but .git.
  const prot = table.map((b, i) => ({ b, i })).filter(({ b }) => b.row === "protected");
  expect(prot.length, "the workspace's code-that-runs-later is protected").toBeGreaterThan(0);
  for (const { b, i } of prot) {
    expect(i, `${b.inside} is protected after the workspace bind`).toBeGreaterThan(wsIdx);
    expect(isWithin(b.inside, spec.workspace), `${b.inside} lies in the workspace`).toBe(true);
    if (b.mode === "rw")
      expect(b.inside, "only .git itself stays writable, as a mount point").toBe(`${spec.workspace}/.git`);
    else expect(["ro", "ro-empty"], `${b.inside} is read-only`).toContain(b.mode);
  }
  for (const p of [
    ".git/hooks",
    ".git/config",
    ".git/info",
    ".git/worktrees",
    ".mcp.json",
    ".claude",
    ".vscode",
    ".envrc",
    ".husky",
    ".pre-commit-config.yaml",
    ".gitattributes",
    ".npmrc",
    "mise.toml",
    ".mise.toml",
    ".github",
  ]) {
    expect(insides, `${p} is protected`).toContain(`${spec.workspace}/${p}`);
  }

  const remount = rootRemountIndex(argv);
  expect(remount, "--remount-ro / is present").toBeGreaterThan(0);
  // Writable: the workspace and its .git (a mount point, when it exists), the run directory, and
  // the two bounded tmpfs mounts (HOME, /tmp). Everything else is read-only.
  const gitDir = `${spec.workspace}/.git`;
  const hasGitBind = table.some((b) => b.inside === gitDir && b.mode === "rw");
  const writable = new Set([spec.workspace, spec.runDir, ...(hasGitBind ? [gitDir] : [])]);
  const tmpfs = new Set(["/tmp", `${spec.runDir}/home`, "/dev/shm"]);
  for (const b of table) {
    if (writable.has(b.inside)) continue;
    if (tmpfs.has(b.inside)) {
      expect([b.mode, typeof b.size], `${b.inside} is a bounded tmpfs`).toEqual(["tmpfs", "number"]);
      continue;
    }
    expect(
      ["ro", "ro-try", "symlink", "private", "ro-empty"],
      `${b.inside} is read-only: only the workspace, its .git, the run directory and the bounded tmpfs mounts are writable`,
    ).toContain(b.mode);
  }
  expect(
    table.filter((b) => isWithin(b.inside, "/etc")).map((b) => [b.source, b.inside, b.mode]),
    "of /etc only the allowlist, read-only, each at its own path; /etc itself is never bound",
  ).toEqual(ETC_FILES.map((e) => [e.path, e.path, "ro-try"]));
  for (const p of ["/dev", "/proc"]) {
    const b = table.find((x) => x.inside === p);
    expect(b && [b.source, b.mode], `${p} is the sandbox's own, not the host's`).toEqual([null, "private"]);
  }
  const shm = insides.indexOf("/dev/shm");
  expect(shm, "/dev/shm is its own tmpfs, mounted over --dev's").toBeGreaterThan(insides.indexOf("/dev"));
  expect([table[shm]!.mode, table[shm]!.size], "/dev/shm is bounded, not half the host's RAM").toEqual([
    "tmpfs",
    SESSION_LIMITS.shmBytes.value,
  ]);
  const sys = insides.indexOf("/proc/sys");
  expect(sys, "/proc/sys is bound over the private /proc").toBeGreaterThan(insides.indexOf("/proc"));
  expect([table[sys]!.source, table[sys]!.mode], "/proc/sys is read-only: bwrap's own cover skips it").toEqual([
    "/proc/sys",
    "ro",
  ]);

  const rwDests = argv.flatMap((t, i) => (t === "--bind" ? [argv[i + 2]] : []));
  expect(rwDests.sort(), "argv binds only the workspace, its .git and the run directory read-write").toEqual(
    [...writable].sort(),
  );
  expect(
    argv.filter((t) => t === "--dev-bind" || t === "--dev-bind-try" || t === "--bind-try"),
    "no host devices, no optional binds",
  ).toEqual([]);
  expect(argv.slice(argv.indexOf("--dev"), argv.indexOf("--dev") + 2), "a private /dev").toEqual(["--dev", "/dev"]);
  expect(
    argv.slice(argv.indexOf("--proc"), argv.indexOf("--proc") + 2),
    "a /proc of the session's own PID namespace",
  ).toEqual(["--proc", "/proc"]);
  expect(remount, "--remount-ro / comes after every bind").toBeGreaterThan(lastBindIndex(argv));
  const dd = argv.indexOf("--");
  expect(
    argv.slice(dd + 1),
    "the runner starts under setpriv's parent-death signal, prlimit's task and memory bounds, on the execute-only node",
  ).toEqual([
    "setpriv",
    "--pdeathsig",
    "KILL",
    "--",
    "prlimit",
    `--nproc=${SESSION_LIMITS.tasks.value}`,
    `--data=${SESSION_LIMITS.dataBytes.value}`,
    "--",
    facts.runnerNode,
    spec.runner,
    spec.runDir,
  ]);
  expect(argv.slice(0, 8), "the session has its own user, PID, IPC, network, UTS and cgroup namespaces").toEqual([
    "bwrap",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup",
    "--as-pid-1",
  ]);
  const before = argv.slice(0, dd);
  const pair = (a: string, b: string) => before.some((t, i) => t === a && before[i + 1] === b);
  expect(pair("--cap-drop", "ALL"), "every capability is dropped").toBe(true);
  expect(before, "user namespaces are disabled inside, and bwrap asserts it").toEqual(
    expect.arrayContaining(["--disable-userns", "--assert-userns-disabled"]),
  );
  expect(before, "no controlling terminal").toContain("--new-session");
  expect(pair("--seccomp", String(SECCOMP_FD)), "the seccomp filter is read from its descriptor").toBe(true);
  expect(before).not.toContain("--die-with-parent");
  const homeEnv = argv.indexOf("HOME");
  expect([argv[homeEnv - 1], argv[homeEnv + 1]], "HOME is the run's own home/").toEqual([
    "--setenv",
    `${spec.runDir}/home`,
  ]);
}

/** Who bwrap runs as: a user caller as itself; a root caller never as uid or gid 0. */
export function assertIdentity(facts: HostFacts, command: string[]): void {
  const at = command.indexOf("bwrap");
  expect(at, "the command runs bwrap").toBeGreaterThanOrEqual(0);
  const drop = command.slice(0, at);
  if (facts.uid !== 0) {
    expect(drop, "a user caller's sessions run as the caller: nothing before bwrap").toEqual([]);
    return;
  }
  const uid = Number(/^--reuid=([0-9]+)$/.exec(drop[1] ?? "")?.[1]);
  const range = facts.sessionUids ?? { first: facts.session.uid, count: 1 };
  expect(drop, "a root caller's bwrap runs as the session's own uid and gid, with no supplementary group").toEqual([
    "setpriv",
    `--reuid=${uid}`,
    `--regid=${facts.session.gid}`,
    "--clear-groups",
    "--",
  ]);
  expect(uid >= range.first && uid < range.first + range.count, `uid ${uid} is one of the sessions' range`).toBe(true);
  expect(uid, "never as kuid 0").not.toBe(0);
  expect(facts.session.gid, "never as kgid 0").not.toBe(0);
}

describe("sandbox plan goldens", () => {
  for (const [layout, { why: layoutWhy, facts }] of Object.entries(HOST_LAYOUTS)) {
    for (const [roleName, { why, spec }] of Object.entries(ROLE_CASES)) {
      it(`${layout} / ${roleName}`, async () => {
        const table = binds(spec, facts, fixtureWorkspaceView(spec));
        const argv = bwrapArgv(spec, facts, table);
        assertInvariants(spec, facts, table, argv);
        const command = sessionCommand({ identity: planIdentity(facts, spec), argv });
        assertIdentity(facts, command);
        const ph = fixturePlaceholders(spec, facts);
        await matchGolden(
          "sandbox/binds",
          `${layout}.${roleName}`,
          "txt",
          `bind table: ${why}; host: ${layoutWhy}`,
          normalise(renderBindLines(table).join("\n"), ph),
        );
        await matchGolden(
          "sandbox/argv",
          `${layout}.${roleName}`,
          "txt",
          `bwrap argv, as the launcher runs it: ${why}; host: ${layoutWhy}`,
          normalise(renderCommandLines(command).join("\n"), ph),
        );
      });
    }
  }
});

describe("host layouts change only their own rows", () => {
  const spec = ROLE_CASES["claude-coder"]!.spec;
  const rows = (layout: string) => binds(spec, HOST_LAYOUTS[layout]!.facts, fixtureWorkspaceView(spec));

  it("split-usr binds real top directories read-only instead of links", () => {
    const top = rows("split-usr").filter((b) => b.row === "top-link");
    expect(top.map((b) => [b.inside, b.mode])).toEqual([
      ["/bin", "ro"],
      ["/lib", "ro"],
      ["/lib64", "ro"],
      ["/sbin", "ro"],
    ]);
    expect(
      rows("merged-usr")
        .filter((b) => b.row === "top-link")
        .map((b) => [b.source, b.inside, b.mode]),
    ).toEqual([
      ["usr/bin", "/bin", "symlink"],
      ["usr/lib", "/lib", "symlink"],
      ["usr/lib64", "/lib64", "symlink"],
      ["usr/sbin", "/sbin", "symlink"],
    ]);
  });

  it("node outside /usr is bound from its real path at the path the runner is started with", () => {
    expect(
      rows("node-opt")
        .filter((b) => b.row === "node")
        .map((b) => [b.source, b.inside, b.mode]),
    ).toEqual([["/opt/node-v24.21.0-linux-x64/bin/node", "/opt/node/bin/node", "ro"]]);
    expect(rows("merged-usr").some((b) => b.row === "node")).toBe(false);
  });

  it("the Claude Code binary outside /usr is bound for Claude Code only", () => {
    expect(
      rows("claude-outside-usr")
        .filter((b) => b.row === "claude-bin")
        .map((b) => [b.source, b.inside]),
    ).toEqual([["/opt/claude/versions/2.1.332/claude", "/opt/claude/bin/claude"]]);
    const pi = binds(
      ROLE_CASES["pi-coder"]!.spec,
      HOST_LAYOUTS["claude-outside-usr"]!.facts,
      fixtureWorkspaceView(ROLE_CASES["pi-coder"]!.spec),
    );
    expect(pi.some((b) => b.row === "claude-bin")).toBe(false);
  });
});

describe("whole argv vector", () => {
  it("a Pi coder on merged-usr Debian, token by token", () => {
    const { spec } = ROLE_CASES["pi-coder"]!;
    const facts = HOST_LAYOUTS["merged-usr"]!.facts;
    const run = spec.runDir;
    const ws = spec.workspace;
    const roEmpty = (p: string) => ["--perms", "0555", "--tmpfs", `${ws}/${p}`, "--remount-ro", `${ws}/${p}`];
    expect(bwrapArgv(spec, facts, binds(spec, facts, fixtureWorkspaceView(spec)))).toEqual([
      "bwrap",
      "--unshare-user",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-net",
      "--unshare-uts",
      "--unshare-cgroup",
      "--as-pid-1",
      "--cap-drop",
      "ALL",
      "--disable-userns",
      "--assert-userns-disabled",
      "--new-session",
      "--seccomp",
      "3",
      "--ro-bind",
      "/usr",
      "/usr",
      "--symlink",
      "usr/bin",
      "/bin",
      "--symlink",
      "usr/lib",
      "/lib",
      "--symlink",
      "usr/lib64",
      "/lib64",
      "--symlink",
      "usr/sbin",
      "/sbin",
      ...ETC_FILES.flatMap((e) => ["--ro-bind-try", e.path, e.path]),
      "--dev",
      "/dev",
      "--perms",
      "1777",
      "--size",
      String(64 * 1024 * 1024),
      "--tmpfs",
      "/dev/shm",
      "--proc",
      "/proc",
      "--ro-bind",
      "/proc/sys",
      "/proc/sys",
      "--ro-bind",
      facts.runnerNode,
      facts.runnerNode,
      "--ro-bind",
      "/srv/mosaic/src/host/runner.ts",
      "/srv/mosaic/src/host/runner.ts",
      "--ro-bind",
      "/srv/mosaic/src/host/tool-socket.ts",
      "/srv/mosaic/src/host/tool-socket.ts",
      "--ro-bind",
      "/srv/mosaic/src/core/gate/decide.ts",
      "/srv/mosaic/src/core/gate/decide.ts",
      "--ro-bind",
      "/srv/mosaic/adapters/pi/adapter.sh",
      "/srv/mosaic/adapters/pi/adapter.sh",
      "--ro-bind",
      "/srv/mosaic/node_modules",
      "/srv/mosaic/node_modules",
      "--ro-bind",
      "/run/mosaic/bus.sock",
      "/run/mosaic/bus.sock",
      "--bind",
      ws,
      ws,
      "--bind",
      `${ws}/.git`,
      `${ws}/.git`,
      "--ro-bind",
      `${ws}/.git/hooks`,
      `${ws}/.git/hooks`,
      "--ro-bind",
      `${ws}/.git/config`,
      `${ws}/.git/config`,
      // .git/config.worktree and .git/commondir are absent and have no stand-in: any would break git.
      ...[
        ".git/info",
        ".git/worktrees",
        ".git/modules",
        ".gitmodules",
        ".gitattributes",
        ".lfsconfig",
        ".gitconfig",
        ".husky",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        ".lefthook.yml",
        ".github",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        ".cargo",
        "mise.toml",
        ".mise.toml",
        ".tool-versions",
        ".mcp.json",
        ".claude",
        ".pi",
        ".codex",
        ".agents",
        ".gemini",
        ".cursor",
      ].flatMap(roEmpty),
      "--ro-bind",
      `${ws}/.vscode`,
      `${ws}/.vscode`,
      ...[
        ".idea",
        ".devcontainer",
        ".envrc",
        ".bashrc",
        ".bash_profile",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".ripgreprc",
        // The families (PROTECTED_FAMILIES): lefthook's, mise's, .config, .devcontainer.json, other forges' pipelines.
        "lefthook.yaml",
        "lefthook.toml",
        "lefthook.json",
        "lefthook.jsonc",
        "lefthook-local.yml",
        "lefthook-local.yaml",
        "lefthook-local.toml",
        "lefthook-local.json",
        "lefthook-local.jsonc",
        ".lefthook.yaml",
        ".lefthook.toml",
        ".lefthook.json",
        ".lefthook.jsonc",
        ".lefthook-local.yml",
        ".lefthook-local.yaml",
        ".lefthook-local.toml",
        ".lefthook-local.json",
        ".lefthook-local.jsonc",
        ".lefthook",
        ".lefthook-local",
        "mise.local.toml",
        ".mise.local.toml",
        ".mise",
        ".config",
        ".devcontainer.json",
        ".gitlab-ci.yml",
        ".woodpecker.yml",
        ".woodpecker.yaml",
        ".drone.yml",
        ".travis.yml",
        ".cirrus.yml",
        ".cirrus.star",
        ".appveyor.yml",
        "appveyor.yml",
        "azure-pipelines.yml",
        "bitbucket-pipelines.yml",
        ".build.yml",
        "Jenkinsfile",
        ".gitea",
        ".forgejo",
        ".gitlab",
        ".circleci",
        ".woodpecker",
        ".buildkite",
        ".semaphore",
        ".azure-pipelines",
        ".builds",
      ].flatMap(roEmpty),
      "--bind",
      run,
      run,
      "--ro-bind",
      `${run}/bundle`,
      `${run}/bundle`,
      "--ro-bind",
      `${run}/session.json`,
      `${run}/session.json`,
      "--ro-bind",
      `${run}/sock`,
      `${run}/sock`,
      "--perms",
      "0700",
      "--size",
      String(64 * 1024 * 1024),
      "--tmpfs",
      `${run}/home`,
      "--perms",
      "1777",
      "--size",
      String(256 * 1024 * 1024),
      "--tmpfs",
      "/tmp",
      "--remount-ro",
      "/",
      "--setenv",
      "HOME",
      `${run}/home`,
      "--setenv",
      "TMPDIR",
      "/tmp",
      "--chdir",
      run,
      "--",
      "setpriv",
      "--pdeathsig",
      "KILL",
      "--",
      "prlimit",
      "--nproc=512",
      `--data=${2048 * 1024 * 1024}`,
      "--",
      facts.runnerNode,
      "/srv/mosaic/src/host/runner.ts",
      run,
    ]);
  });
});

describe("a root caller's command", () => {
  it("setpriv drops to the session's uid and gid before bwrap; a user caller's command is bwrap's argv itself", () => {
    const { spec } = ROLE_CASES["claude-coder"]!;
    const root = HOST_LAYOUTS["root-caller"]!.facts;
    const user = HOST_LAYOUTS["merged-usr"]!.facts;
    const argv = bwrapArgv(spec, root, binds(spec, root, fixtureWorkspaceView(spec)));
    expect(
      sessionCommand({ identity: planIdentity(root, spec), argv }),
      "the drop, then bwrap's argv unchanged",
    ).toEqual([
      "setpriv",
      `--reuid=${planIdentity(root, spec).runAs.uid}`,
      "--regid=65534",
      "--clear-groups",
      "--",
      ...argv,
    ]);
    expect(planIdentity(root, spec).runAs.uid, "a uid of the default range, not nobody").toBeGreaterThanOrEqual(
      1879048192,
    );
    const userArgv = bwrapArgv(spec, user, binds(spec, user, fixtureWorkspaceView(spec)));
    expect(
      sessionCommand({ identity: planIdentity(user, spec), argv: userArgv }),
      "a user caller runs bwrap as itself",
    ).toEqual(userArgv);
  });
});
