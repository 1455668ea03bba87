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
}

export type TopLink = "/bin" | "/lib" | "/lib64" | "/sbin";
export const TOP_LINKS: readonly TopLink[] = ["/bin", "/lib", "/lib64", "/sbin"];

export type TopEntry =
  | { kind: "symlink"; target: string }
  | { kind: "dir" }
  | { kind: "absent" };

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
}

export type BindMode = "ro" | "rw" | "symlink" | "private";

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
}

export type BindRow =
  | "usr"
  | "top-link"
  | "etc"
  | "dev"
  | "proc"
  | "node"
  | "runner-file"
  | "adapter"
  | "node-modules"
  | "claude-bin"
  | "broker-socket"
  | "launch-socket"
  | "workspace"
  | "run-dir"
  | "bundle"
  | "session-json"
  | "tmp";
