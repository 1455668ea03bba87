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
export const SEED_FOUNDER_ENV: readonly string[] = ["GITEA_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GIT_ASKPASS"];
