// What the session holds instead of its model credential. Recognisable on sight and in a log, and
// good for nothing: the host's proxy drops it and adds the real one.
import { SESSION_CREDENTIALS } from "../session/credentials.ts";
import type { UpstreamCredential } from "./egress.ts";

export const CREDENTIAL_PLACEHOLDER = "mosaic-placeholder-the-host-proxy-adds-the-credential";

/** The variables a Claude Code session gets for a credential set: the placeholder, and the in-sandbox model URL. */
export function placeholderEnv(set: string | null, modelUrl: string): Record<string, string> {
  const env: Record<string, string> = { ANTHROPIC_BASE_URL: modelUrl };
  if (set === "proxy") env.ANTHROPIC_AUTH_TOKEN = CREDENTIAL_PLACEHOLDER;
  else if (set === "oauth") env.CLAUDE_CODE_OAUTH_TOKEN = CREDENTIAL_PLACEHOLDER;
  else env.ANTHROPIC_API_KEY = CREDENTIAL_PLACEHOLDER;
  return env;
}

/** The real credential the proxy adds, read from the host's environment for the launch's credential set. */
export function upstreamCredential(
  set: string | null,
  hostEnv: Readonly<Record<string, string | undefined>>,
): UpstreamCredential | null {
  const s = SESSION_CREDENTIALS.find((c) => c.label === set) ?? SESSION_CREDENTIALS.find((c) => c.label === "api-key")!;
  const value = hostEnv[s.names[0]!] ?? "";
  if (value === "") return null;
  return { header: s.label === "api-key" ? "x-api-key" : "authorization", value };
}

/** Where the proxy sends a session's model calls: the proxy set's own URL, else the public API. */
export function upstreamUrl(
  hostEnv: Readonly<Record<string, string | undefined>>,
  fallback = "https://api.anthropic.com",
): string {
  const base = hostEnv.ANTHROPIC_BASE_URL ?? "";
  return base !== "" ? base : fallback;
}
