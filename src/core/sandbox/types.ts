export const HARNESSES = ["pi", "claude-code"] as const;
export type Harness = (typeof HARNESSES)[number];

/** What one confined session needs from the host, as absolute paths. */
export interface SandboxSpec {
  harness: Harness;
  /** The checkout the runner files come from. */
  repo: string;
  /** The repository files the runner loads, each bound read-only at its own path. */
  runnerFiles: string[];
  /** The runner's entry point; one of runnerFiles. */
  runner: string;
  /** The harness adapter the runner starts each turn. */
  adapter: string;
  /** The bus socket the runner claims and calls through. */
  brokerSocket: string;
  /** The host's launch socket. */
  launchSocket: string;
  /** Whether the role may launch other roles; only then is the launch socket bound. */
  mayLaunch: boolean;
  /** Where the harness works: bound read-write. */
  workspace: string;
  /** This launch's run directory: bound read-write, bundle/ and session.json read-only over it. */
  runDir: string;
  /**
   * Package directories under <repo>/node_modules that code the harness starts inside the sandbox
   * loads (Claude Code's MCP server); Pi gets node_modules whole.
   */
  packages?: string[];
  /**
   * The session's own /etc/passwd and /etc/group (planIdentityFiles()), bound read-only over the
   * host's: a root caller's session uid is in no file of the host's. Without them, the host's.
   */
  etcIdentity?: { passwd: string; group: string };
}

export type TopLink = "/bin" | "/lib" | "/lib64" | "/sbin";
export const TOP_LINKS: readonly TopLink[] = ["/bin", "/lib", "/lib64", "/sbin"];

export type TopEntry = { kind: "symlink"; target: string } | { kind: "dir" } | { kind: "absent" };

/** What the sandbox decisions read from the machine, passed in as data. */
export interface HostFacts {
  /** /bin, /lib, /lib64, /sbin: links into /usr on merged-usr systems, real directories on split-usr ones. */
  top: Record<TopLink, TopEntry>;
  /** node as the runner is started with it, and its real path. */
  node: { path: string; realPath: string };
  /** The Claude Code binary (MOSAIC_CLAUDE_BIN, or claude on PATH) and its real path, when known. */
  claude?: { path: string; realPath: string } | undefined;
  /** <repo>/node_modules after symlinks: what Pi and its packages load from. */
  nodeModulesRealPath: string;
  /** The host user's HOME: nothing under it is bound but the workspace and run directory. */
  home: string;
  /** bwrap --version, or null when bwrap is missing. */
  bwrapVersion: string | null;
  /** node's process.arch; the seccomp filter is written for x64 and arm64 only. */
  arch: string;
  /**
   * An execute-only (mode 0111) copy of node that the runner runs on. The kernel marks a process
   * that execs a binary it cannot read as not dumpable, so no process in the sandbox can ptrace
   * the runner or read its memory or environment, even without the seccomp filter.
   */
  runnerNode: string;
  /**
   * Where a root host makes each session's cgroups, per controller, or null where it cannot: pids
   * bounds its tasks, memory its memory as a whole. The same directory on cgroup v2, two
   * hierarchies on v1. A user caller has none it may write.
   */
  cgroups: SessionCgroupBases;
  /** The launcher's own uid: 0 is a root caller. */
  uid: number;
  /** The uids a root caller's sessions take theirs from, one each (sessionUidRange()); null for a user caller. */
  sessionUids?: { first: number; count: number } | null;
  /** The uids live sessions hold now (their locks under the state directory), which a new one must not take. */
  heldSessionUids?: number[];
  /**
   * The identity bwrap and so the whole session run as: a user caller's own, a root caller's
   * dedicated unprivileged one (sessionIdentity()), never uid 0.
   */
  session: SessionIdentity;
}

export interface SessionCgroupBases {
  pids: CgroupBase | null;
  memory: CgroupBase | null;
}

/** One controller's hierarchy on a root host: where its sessions' cgroups go, and its cgroup version. */
export interface CgroupBase {
  /** `<hierarchy>/mosaic-sessions`. */
  dir: string;
  version: 1 | 2;
}

export interface SessionIdentity {
  uid: number;
  gid: number;
}

/**
 * ro, rw: binds; ro-try: read-only where the host has the source, nothing where it does not; symlink: a link (source is its target); private: a new /dev or /proc;
 * tmpfs: a private tmpfs of `size` bytes; ro-empty: an empty read-only directory standing in for a
 * protected one that does not exist.
 */
export type BindMode = "ro" | "ro-try" | "rw" | "symlink" | "private" | "tmpfs" | "ro-empty";

export interface Bind {
  /** Host path; for a symlink, its target; null for a private /dev or /proc. */
  source: string | null;
  /** Path inside the sandbox. */
  inside: string;
  mode: BindMode;
  /** One line: why the session needs this. */
  why: string;
  /** Which row of the seed's bind table this is; tests and mutants refer to it. */
  row: BindRow;
  /** tmpfs only: the most bytes it holds, and its mode. */
  size?: number;
  perms?: string;
}

export type BindRow =
  | "usr"
  | "top-link"
  | "etc"
  | "dev"
  | "shm"
  | "proc"
  | "proc-sys"
  | "node"
  | "runner-node"
  | "runner-file"
  | "adapter"
  | "node-modules"
  | "packages"
  | "claude-bin"
  | "broker-socket"
  | "launch-socket"
  | "workspace"
  | "protected"
  | "run-dir"
  | "bundle"
  | "session-json"
  | "sockets"
  | "home"
  | "tmp";
