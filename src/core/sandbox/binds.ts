import type { FsView } from "../gate/fs-view.ts";
import { isWithin } from "../paths.ts";
import { runSockets } from "../runner/run-paths.ts";
import { SESSION_LIMITS } from "./limits.ts";
import { protectedBinds, type MountStub } from "./protected.ts";
import { TOP_LINKS, type Bind, type BindRow, type HostFacts, type SandboxSpec } from "./types.ts";
import { validateSpec } from "./validate.ts";
import { refuseLinkedPaths } from "./linked-paths.ts";
import { ETC_FILES } from "./etc.ts";

type Made = Omit<Bind, "why" | "row"> & { why?: string };

type Row = {
  row: BindRow;
  why: string;
  /** The binds this row contributes for one spec, in mount order; [] when it does not apply. */
  make: (spec: SandboxSpec, facts: HostFacts, fs: FsView) => Made[];
};

const same = (p: string, mode: Bind["mode"]) => ({ source: p, inside: p, mode });

/** ETC_FILES where the host has them, with the session's own passwd and group in place of the host's. */
function etcBinds(s: SandboxSpec): Made[] {
  const own = s.etcIdentity;
  const theirs =
    own === undefined ? ETC_FILES : ETC_FILES.filter((e) => e.path !== "/etc/passwd" && e.path !== "/etc/group");
  return [
    ...theirs.map((e) => ({ source: e.path, inside: e.path, mode: "ro-try" as const, why: e.why })),
    ...(own === undefined
      ? []
      : [
          {
            source: own.passwd,
            inside: "/etc/passwd",
            mode: "ro" as const,
            why: "the session's own passwd: root and its user, nothing of the host's accounts",
          },
          { source: own.group, inside: "/etc/group", mode: "ro" as const, why: "the session's own group file" },
        ]),
  ];
}

/**
 * The bind table of seed 002, in mount order. The root is an empty tmpfs; each bind lands at
 * its host path so the paths in session.json mean the same inside and out. Nothing else exists.
 */
export const BIND_TABLE: readonly Row[] = [
  {
    row: "usr",
    why: "the system's programs and libraries: sh, node, git, coreutils",
    make: () => [same("/usr", "ro")],
  }, // safety: usr-writable
  {
    row: "top-link",
    why: "the host's links into /usr, or its real directories on split-usr",
    make: (_s, f) =>
      TOP_LINKS.flatMap((p) => {
        const e = f.top[p];
        if (e.kind === "symlink") return [{ source: e.target, inside: p, mode: "symlink" as const }];
        if (e.kind === "dir") return [same(p, "ro")];
        return [];
      }),
  },
  {
    row: "etc",
    why: "the few files of /etc a session reads (ETC_FILES), each where the host has it; the rest stays out",
    make: (s) => etcBinds(s),
  }, // safety: etc-writable
  {
    row: "dev",
    why: "null, zero, urandom and a pty, and no host device",
    make: () => [{ source: null, inside: "/dev", mode: "private" }],
  }, // safety: host-dev
  {
    row: "shm",
    why: `POSIX shared memory: a tmpfs of ${SESSION_LIMITS.shmBytes.value / 1048576} MiB over --dev's, which would hold half the host's RAM`,
    make: () => [
      { source: null, inside: "/dev/shm", mode: "tmpfs", size: SESSION_LIMITS.shmBytes.value, perms: "1777" },
    ], // safety: shm-unbounded
  },
  {
    row: "proc",
    why: "the session's own PID namespace, not the host's processes",
    make: () => [{ source: null, inside: "/proc", mode: "private" }],
  }, // safety: host-proc
  // bwrap covers /proc/sys only when access(W_OK) says it is writable, and the kernel answers
  // EACCES for that directory whatever the caller: so a kuid 0 session wrote the host's sysctls.
  {
    row: "proc-sys",
    why: "the kernel's settings, read-only: kernel.core_pattern names a program the host runs as root",
    make: () => [same("/proc/sys", "ro")],
  }, // safety: proc-sys-writable
  {
    row: "node",
    why: "node runs the runner and the gate; under /usr it is already there",
    make: (_s, f) =>
      isWithin(f.node.realPath, "/usr") ? [] : [{ source: f.node.realPath, inside: f.node.path, mode: "ro" }], // safety: node-outside-usr
  },
  {
    row: "runner-node",
    why: "the execute-only node the runner runs on, so no process in the sandbox can trace it",
    make: (_s, f) => [{ source: f.runnerNode, inside: f.runnerNode, mode: "ro" }],
  },
  {
    row: "runner-file",
    why: "the repository files the runner loads, and no other file of the checkout",
    make: (s) => s.runnerFiles.map((p) => same(p, "ro")), // safety: bind-checkout
  },
  { row: "adapter", why: "the runner starts it each turn", make: (s) => [same(s.adapter, "ro")] },
  {
    row: "node-modules",
    why: "pi and its packages; Claude Code is one pinned binary and needs none of it",
    make: (s, f) =>
      s.harness === "pi" // safety: node-modules-always
        ? [{ source: f.nodeModulesRealPath, inside: `${s.repo}/node_modules`, mode: "ro" }]
        : [],
  },
  {
    row: "packages",
    why: "the packages Claude Code's MCP server loads, read-only, and no other package",
    make: (s) => (s.harness === "claude-code" ? (s.packages ?? []).map((p) => same(p, "ro")) : []),
  },
  {
    row: "claude-bin",
    why: "the pinned Claude Code binary; under /usr it is already there",
    make: (s, f) =>
      s.harness === "claude-code" && f.claude !== undefined && !isWithin(f.claude.realPath, "/usr") // safety: claude-bin-not-bound
        ? [{ source: f.claude.realPath, inside: f.claude.path, mode: "ro" }] // safety: claude-bin-writable
        : [],
  },
  // A read-only mount of a socket still takes connect(); that is all the runner needs.
  { row: "broker-socket", why: "the runner claims and calls through it", make: (s) => [same(s.brokerSocket, "ro")] },
  {
    row: "launch-socket",
    why: "the launch tool calls it; only a role that may launch gets it",
    make: (s) => (s.mayLaunch ? [same(s.launchSocket, "ro")] : []), // safety: launch-socket-always
  },
  { row: "workspace", why: "where the harness works", make: (s) => [same(s.workspace, "rw")] }, // safety: no-workspace-bind
  // After the workspace, so they land on it: what the host later runs stays as the host left it.
  {
    row: "protected",
    why: "code that runs later on the host",
    make: (s, _f, fs) => protectedBinds(s.workspace, fs).binds,
  }, // safety: no-protected-paths
  {
    row: "run-dir",
    why: "turns/, session/ and turn.done; bundle/, session.json and sock/ read-only over it, home/ a tmpfs",
    make: (s) => [same(s.runDir, "rw")], // safety: runDir-read-only // safety: bind-all-runs
  },
  { row: "bundle", why: "stays as the host wrote it", make: (s) => [same(`${s.runDir}/bundle`, "ro")] }, // safety: bundle-writable
  { row: "session-json", why: "stays as the host wrote it", make: (s) => [same(`${s.runDir}/session.json`, "ro")] }, // safety: session-json-writable
  {
    row: "sockets",
    why: "tools.sock and model.sock, made by the host: read-only, so the session cannot open them to another uid with a chmod",
    make: (s) => [same(runSockets(s.runDir).dir, "ro")], // safety: sockets-rechmod
  },
  {
    row: "home",
    why: `the session's HOME: a private tmpfs of ${SESSION_LIMITS.homeBytes.value / 1048576} MiB, empty at the start`,
    make: (s) => [
      { source: null, inside: `${s.runDir}/home`, mode: "tmpfs", size: SESSION_LIMITS.homeBytes.value, perms: "0700" },
    ], // safety: home-unbounded
  },
  // Last, so nothing of the host's /tmp shows through.
  {
    row: "tmp",
    why: `a private /tmp: a tmpfs of ${SESSION_LIMITS.tmpBytes.value / 1048576} MiB, so its bytes never reach the host disk`,
    make: () => [{ source: null, inside: "/tmp", mode: "tmpfs", size: SESSION_LIMITS.tmpBytes.value, perms: "1777" }], // safety: no-private-tmp // safety: tmp-unbounded
  },
];

/**
 * The binds for one session, in mount order. `fs` shows the workspace as it is now, for the
 * protected paths. Throws a MosaicError for a spec it cannot confine.
 */
export function binds(spec: SandboxSpec, facts: HostFacts, fs: FsView): Bind[] {
  validateSpec(spec, facts);
  refuseLinkedPaths(spec, fs);
  return BIND_TABLE.flatMap((r) => r.make(spec, facts, fs).map((b) => ({ ...b, why: b.why ?? r.why, row: r.row })));
}

/** The mount points bwrap will create in the host's workspace; the launcher removes them afterwards. */
export function mountStubs(spec: SandboxSpec, fs: FsView): MountStub[] {
  return protectedBinds(spec.workspace, fs).mountStubs;
}

/** The rows every sandbox has whatever the spec: the system's files, /dev and /proc. */
export const BIND_TABLE_SYSTEM_ROWS: readonly BindRow[] = ["usr", "top-link", "etc", "dev", "shm", "proc", "proc-sys"];

const NOTHING: FsView = { lstat: () => ({ kind: "missing" }) };

/** The system rows alone: what sandboxProblem() proves bwrap can set up on this host. */
export function systemBinds(facts: HostFacts): Bind[] {
  const rows = new Set<BindRow>([...BIND_TABLE_SYSTEM_ROWS, "runner-node", "tmp"]);
  const spec = { harness: "pi", runnerFiles: [] } as unknown as SandboxSpec;
  return BIND_TABLE.filter((r) => rows.has(r.row)).flatMap((r) =>
    r.make(spec, facts, NOTHING).map((b) => ({ ...b, why: b.why ?? r.why, row: r.row })),
  );
}
