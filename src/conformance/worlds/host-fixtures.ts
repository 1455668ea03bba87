import type { FsView } from "../../core/gate/fs-view.ts";
import type { HostFacts, SandboxSpec } from "../../core/sandbox/types.ts";
import { memoryView } from "./tree.ts";

/** Frozen host layouts the contract tier plans against: no test reads the real machine. */
const MERGED = {
  "/bin": { kind: "symlink", target: "usr/bin" },
  "/lib": { kind: "symlink", target: "usr/lib" },
  "/lib64": { kind: "symlink", target: "usr/lib64" },
  "/sbin": { kind: "symlink", target: "usr/sbin" },
} as const;

const base = {
  top: MERGED,
  node: { path: "/usr/bin/node", realPath: "/usr/bin/node" },
  claude: {
    path: "/usr/local/bin/claude",
    realPath: "/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
  },
  nodeModulesRealPath: "/srv/mosaic/node_modules",
  home: "/home/founder",
  bwrapVersion: "bubblewrap 0.8.0",
  arch: "x64",
  runnerNode: "/srv/mosaic/.scratch/state/runner-node/node-24.21.0-126595440",
  cgroups: { pids: null, memory: null },
  uid: 1000,
  session: { uid: 1000, gid: 1000 },
} satisfies HostFacts;

export const HOST_LAYOUTS: Readonly<Record<string, { why: string; facts: HostFacts }>> = {
  "merged-usr": { why: "Debian 12: /bin, /lib, /lib64, /sbin are links into /usr", facts: base },
  "split-usr": {
    why: "/bin, /lib, /lib64, /sbin are real directories",
    facts: {
      ...base,
      top: { "/bin": { kind: "dir" }, "/lib": { kind: "dir" }, "/lib64": { kind: "dir" }, "/sbin": { kind: "dir" } },
    },
  },
  "node-opt": {
    why: "node installed under /opt behind a version link",
    facts: { ...base, node: { path: "/opt/node/bin/node", realPath: "/opt/node-v24.21.0-linux-x64/bin/node" } },
  },
  "root-caller": {
    why: "the launcher runs as root: the session drops to a uid of its own from the default range, in its own pids and memory cgroups",
    facts: {
      ...base,
      uid: 0,
      session: { uid: 1879048192, gid: 65534 },
      sessionUids: { first: 1879048192, count: 65536 },
      heldSessionUids: [],
      cgroups: {
        pids: { dir: "/sys/fs/cgroup/pids/mosaic-sessions", version: 1 },
        memory: { dir: "/sys/fs/cgroup/memory/mosaic-sessions", version: 1 },
      },
    },
  },
  "claude-outside-usr": {
    why: "the pinned Claude Code binary lives outside /usr",
    facts: { ...base, claude: { path: "/opt/claude/bin/claude", realPath: "/opt/claude/versions/2.1.332/claude" } },
  },
};

export const FIXTURE_REPO = "/srv/mosaic";
export const FIXTURE_DATA = "/srv/mosaic-data";
export const FIXTURE_RUNNER_FILES = [
  `${FIXTURE_REPO}/src/host/runner.ts`,
  `${FIXTURE_REPO}/src/host/tool-socket.ts`,
  `${FIXTURE_REPO}/src/core/gate/decide.ts`,
];

export type RoleCase = { why: string; spec: SandboxSpec };

function role(harness: SandboxSpec["harness"], role: string, launching: boolean): SandboxSpec {
  return {
    harness,
    repo: FIXTURE_REPO,
    runnerFiles: FIXTURE_RUNNER_FILES,
    runner: FIXTURE_RUNNER_FILES[0]!,
    adapter: `${FIXTURE_REPO}/adapters/${harness === "pi" ? "pi" : "claude"}/adapter.sh`,
    brokerSocket: "/run/mosaic/bus.sock",
    launchSocket: "/run/mosaic/launch.sock",
    mayLaunch: launching,
    workspace: `${FIXTURE_DATA}/workspaces/acme/${role}`,
    runDir: `${FIXTURE_DATA}/runs/acme-${role}-0001`,
  };
}

export const ROLE_CASES: Readonly<Record<string, RoleCase>> = {
  "pi-coder": { why: "a Pi coder that may not launch", spec: role("pi", "coder", false) },
  "claude-coder": { why: "a Claude Code coder that may not launch", spec: role("claude-code", "coder", false) },
  "claude-pm": { why: "a Claude Code PM that may launch other roles", spec: role("claude-code", "pm", true) },
};

/** Placeholders for the fixtures' machine-specific paths, as goldens show them. */
export function fixturePlaceholders(spec: SandboxSpec, facts: HostFacts): Record<string, string> {
  return { "<run>": spec.runDir, "<ws>": spec.workspace, "<home>": facts.home, "<repo>": spec.repo };
}

/**
 * The fixtures' workspaces as the planner sees them: a git repository with its hooks and config and
 * a .vscode directory; everything else protected is absent, so the goldens show both kinds of row.
 */
export function fixtureWorkspaceView(spec: SandboxSpec): FsView {
  return memoryView({
    [`${spec.workspace}/.git/hooks`]: "dir",
    [`${spec.workspace}/.git/config`]: "file",
    [`${spec.workspace}/.vscode`]: "dir",
    [`${spec.workspace}/README.md`]: "file",
  });
}
