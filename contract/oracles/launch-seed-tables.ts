// Hand-typed from seed 000 ("What S6 relies on", rows 1 to 5) and issue 3 / seed 003 (thinking
// levels, refusal order), independent of src: the harness modules are compared against these.

/** Seed 000's S0 table, one row per line, as "<n>. <layer>: <how>". */
export const SEED_S0_LINES: Readonly<Record<"pi" | "claude-code", readonly string[]>> = {
  pi: [
    "1. block a tool: tool_call handler returns a block",
    "2. gate crash: a throw in the handler blocks",
    "3. gate missing: a missing -e file refuses to start",
    "4. gate hang: the runner's wall clock plus the agent_end marker",
    "5. bash: limited only by the tool limit",
  ],
  "claude-code": [
    "1. block a tool: PreToolUse command hook exits 2; --bare is never passed",
    "2. gate crash: the hook runs as || exit 2",
    "3. gate missing: the wrapper blocks",
    "4. gate hang: timeout -k 2 10 || exit 2, hook timeout 20",
    "5. bash: limited only by the tool limit",
  ],
};

/** Issue 3 "Harness modules" and seed 003's adapter table. */
export const SEED_THINKING: Readonly<Record<"pi" | "claude-code", { levels: readonly string[]; required: boolean }>> = {
  pi: { levels: ["off", "minimal", "low", "medium", "high", "xhigh", "max"], required: false },
  "claude-code": { levels: ["low", "medium", "high", "xhigh", "max"], required: true },
};

/** Issue 3: the route checks, in the order each route is checked. */
export const SEED_ROUTE_CHECK_ORDER: readonly string[] = [
  "harness-off",
  "harness-refused",
  "thinking-unsupported",
  "unknown-model",
  "preflight",
];

/** Issue 3: every refusal code the launcher has. */
export const SEED_REFUSAL_CODES: readonly string[] = [
  "no-route",
  "harness-off",
  "harness-refused",
  "thinking-unsupported",
  "unknown-model",
  "preflight",
  "partial-fallback",
  "no-session-credential",
  "sandbox-unavailable",
  "founder-credentials",
];

/** Seed 000 "The bundle" and issue 3: the files of a bundle per harness; issue 10 adds Pi's models.json. */
export const SEED_BUNDLE_FILES: Readonly<Record<"pi" | "claude-code", readonly string[]>> = {
  pi: ["manifest.json", "models.json", "policy.json", "prompt.md", "tools.json"],
  "claude-code": ["manifest.json", "mcp.json", "policy.json", "prompt.md", "settings.json", "tools.json"],
};

/** The fields of src/core/policy.ts's Policy, which the gate reads (typed by hand). */
export const POLICY_FIELDS: readonly string[] = [
  "builtInTools",
  "credentials",
  "harness",
  "home",
  "network",
  "services",
  "typedTools",
  "workspace",
];

/**
 * Issue 3 and baselines/README.md: the built-in tools each neutral tool-limit name grants. Claude
 * Code 2.1.332 has no Grep, Glob or LS built-in, so grep, find and ls grant it nothing; its Bash
 * comes only from bash.
 */
export const SEED_TOOL_GRANTS: Readonly<Record<"pi" | "claude-code", Readonly<Record<string, readonly string[]>>>> = {
  pi: { read: ["read"], edit: ["edit"], write: ["write"], bash: ["bash"], grep: ["grep"], find: ["find"], ls: ["ls"] },
  "claude-code": { read: ["Read"], edit: ["Edit"], write: ["Write"], bash: ["Bash"], grep: [], find: [], ls: [] },
};
