type CredentialSet = { label: string; names: readonly string[]; why: string };

/**
 * The sets of variables that let a Claude Code session reach its model. A set counts only when
 * every variable in it is set and non-empty: a proxy token without its URL would send the token
 * to the public API.
 */
export const SESSION_CREDENTIALS: readonly CredentialSet[] = [
  { label: "oauth", names: ["CLAUDE_CODE_OAUTH_TOKEN"], why: "a subscription login token" },
  { label: "api-key", names: ["ANTHROPIC_API_KEY"], why: "an API key for the public API" },
  {
    label: "proxy",
    names: ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"],
    why: "a proxy's token, good only at its own URL",
  }, // safety: proxy-key-alone // safety: proxy-key-ignored
];

/** The label of the first fully present set, or null. Never returns a value. */
export function presentCredentialSet(env: Readonly<Record<string, string | undefined>>): string | null {
  for (const set of SESSION_CREDENTIALS) {
    if (set.names.every((n) => (env[n] ?? "") !== "")) return set.label; // safety: any-variable-will-do
  }
  return null;
}

export function hasSessionCredential(env: Readonly<Record<string, string | undefined>>): boolean {
  return presentCredentialSet(env) !== null;
}

/** Every variable of every set, for the refusal message and for ENV_ALLOW. */
export function credentialVariableNames(): string[] {
  return SESSION_CREDENTIALS.flatMap((s) => s.names);
}
