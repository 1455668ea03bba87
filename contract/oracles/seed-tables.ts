// Hand-typed from the seeds, independent of src: the generators are compared against these,
// never against themselves. Seed 000 "The runner" table; seed 002 "Refusals" and session tests.

export const SEED_RUNNER_EXITS: ReadonlyArray<[code: number, endReason: string]> = [
  [0, "stopped"],
  [2, "failed"],
  [20, "founder-credentials"],
  [21, "claim-refused"],
  [22, "session-invalid"],
  [23, "broker-unreachable"],
];

/** Seed 002: "0, 23 and 128 stay codes; 137 and 143 become SIGKILL and SIGTERM, ending killed". */
export const SEED_SESSION_EXIT: ReadonlyArray<[code: number, expected: unknown]> = [
  [0, { kind: "code", code: 0 }],
  [23, { kind: "code", code: 23 }],
  [128, { kind: "code", code: 128 }],
  [137, { kind: "signal", signal: "SIGKILL", ending: "killed" }],
  [143, { kind: "signal", signal: "SIGTERM", ending: "killed" }],
];

/** Seed 002, "Refusals": the three credential sets. */
export const SEED_CREDENTIAL_SETS: ReadonlyArray<readonly string[]> = [
  ["CLAUDE_CODE_OAUTH_TOKEN"],
  ["ANTHROPIC_API_KEY"],
  ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"],
];

/** Seed 000 "The runner", step 1, and the foundation issue: founder variables that stop a session. */
export const SEED_FOUNDER_ENV: readonly string[] = [
  "GITEA_TOKEN",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GIT_ASKPASS",
];

/**
 * FOUNDER_ENV as reviewed, typed by hand (seed 000: GITEA_TOKEN, GH_TOKEN, SSH_AUTH_SOCK "and the
 * rest of FOUNDER_ENV"): FOUNDER_ENV may grow, never lose one of these.
 */
export const FOUNDER_ENV_ORACLE: readonly string[] = [
  "GITEA_TOKEN",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GITLAB_TOKEN",
  "TEA_TOKEN",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_SSH_COMMAND",
  "GIT_CONFIG_GLOBAL",
  "GPG_AGENT_INFO",
  "NPM_TOKEN",
  "NODE_AUTH_TOKEN",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "DOCKER_HOST",
  "DBUS_SESSION_BUS_ADDRESS",
  "XDG_RUNTIME_DIR",
  "KRB5CCNAME",
  "MOSAIC_FOUNDER_TOKEN",
];

/**
 * The most that may ever pass from the host to a session, typed by hand: ENV_ALLOW may hold
 * fewer of these, never another name.
 */
export const MAY_REACH_SESSION: readonly string[] = [
  "PATH",
  "LANG",
  "LC_ALL",
  "TZ",
  "TERM",
  "USER",
  "LOGNAME",
  "NODE_EXTRA_CA_CERTS",
  "MOSAIC_CLAUDE_BIN",
];

/**
 * Names that look allowed, or steer node, a shell or Claude Code, typed by hand: none may ever
 * reach a session from the host.
 */
export const NEVER_REACH_SESSION: readonly string[] = [
  // The model credentials: the host's proxy adds the real one; the session holds a placeholder.
  "CLAUDE_CODE_OAUTH_TOKEN",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  // Twins of allowed names.
  "path",
  "Path",
  " PATH",
  "PATH ",
  "PATH_",
  "lang",
  "anthropic_api_key",
  "ANTHROPIC_API_KEY_",
  "ANTHROPIC_API_KEY2",
  "ANTHROPIC_API_KEY_FILE",
  "NODE_EXTRA_CA_CERT",
  "NODE_EXTRA_CA_CERTS_FILE",
  "MOSAIC_CLAUDE_BINARY",
  "USERNAME",
  // Code that runs before or around the harness.
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_REPL_EXTERNAL_MODULE",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "BASH_ENV",
  "ENV",
  "PROMPT_COMMAND",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PERL5OPT",
  "RUBYOPT",
  "GIT_DIR",
  "GIT_EXEC_PATH",
  "GIT_CONFIG_PARAMETERS",
  "HOME",
  "TMPDIR",
  "SHELL",
  "EDITOR",
  "VISUAL",
  "PAGER",
  // Claude Code's own switches: another config, provider, shell or request body than the adapter's.
  "CLAUDE_CONFIG_DIR",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "CLAUDE_CODE_USE_FOUNDRY",
  "ANTHROPIC_CUSTOM_HEADERS",
  "ANTHROPIC_BEDROCK_BASE_URL",
  "ANTHROPIC_VERTEX_PROJECT_ID",
  "ANTHROPIC_FOUNDRY_API_KEY",
  "ANTHROPIC_UNIX_SOCKET",
  "CLAUDE_CODE_SHELL",
  "CLAUDE_CODE_SHELL_PREFIX",
  "CLAUDE_CODE_GIT_BASH_PATH",
  "CLAUDE_CODE_EXTRA_BODY",
  "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
  "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
  "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
  "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
  "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "ANTHROPIC_MODEL",
];
