// The request headers that switch the model API's features on: anthropic-beta values, allowlisted,
// and the body's encoding. A value off the list is refused (403, naming it), never stripped: a
// stripped beta would change what the session asked for behind its back, and a refusal says why.
import { admittedBy, grantsAdmitting, type ModelGrant } from "./grants.ts";

export type HeaderDecision = { kind: "pass" } | { kind: "refuse"; status: number; errorType: string; message: string };

/**
 * The betas the pinned Claude Code 2.1.332 and Pi 0.85.1 send, read off real sessions through the
 * launcher (baselines/model-requests.json): none turns on a feature that reaches the network.
 * Betas that do are in MODEL_GRANTS, admitted only with their grant.
 */
export const BETA_ALLOW: readonly { beta: string; sentBy: string; why: string }[] = [
  {
    beta: "claude-code-20250219",
    sentBy: "claude-code",
    why: "Claude Code's own client identity; no server-side tool",
  },
  {
    beta: "interleaved-thinking-2025-05-14",
    sentBy: "claude-code, pi",
    why: "thinking between tool calls: what the model writes, not where it reaches",
  },
  {
    beta: "context-management-2025-06-27",
    sentBy: "claude-code",
    why: "context_management edits: the provider drops old thinking or tool results from the prompt",
  },
  { beta: "thinking-token-count-2026-05-13", sentBy: "claude-code", why: "thinking tokens counted in usage" },
  {
    beta: "thinking-display-updates-2026-08-18",
    sentBy: "claude-code",
    why: "how thinking is shown (thinking.display)",
  },
  {
    beta: "effort-2025-11-24",
    sentBy: "claude-code (Opus 4.x)",
    why: "output_config.effort: how hard the model works",
  },
  {
    beta: "oauth-2025-04-20",
    sentBy: "claude-code (oauth set)",
    why: "a subscription token as the credential; the proxy adds the real one",
  },
  { beta: "extended-cache-ttl-2025-04-11", sentBy: "claude-code (oauth set)", why: "a one-hour prompt cache" },
  { beta: "context-1m-2025-08-07", sentBy: "claude-code ([1m] models)", why: "a one-million-token context window" },
  {
    beta: "per-turn-control-2026-07-01",
    sentBy: "claude-code (Opus 4.1)",
    why: "per-turn settings on messages; no tool, no source",
  },
  {
    beta: "mid-conversation-tool-changes-2026-07-01",
    sentBy: "claude-code (Opus 4.1)",
    why: "tool changes mid-conversation; the blocks that carry them (tool_addition, tool_removal) are not in CONTENT_BLOCKS, so only the tools[] the body check passed exist",
  },
];

/** Every value of anthropic-beta, over repeated headers and comma lists, trimmed; empty items dropped. */
export function betaValues(headers: readonly string[]): string[] {
  return headers
    .flatMap((h) => h.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/**
 * The headers' verdict: every beta on BETA_ALLOW or admitted by a grant, and a body the proxy can
 * read as sent (no content-encoding but identity: a compressed body would pass the body check unread).
 */
export function decideModelHeaders(
  h: { betas: readonly string[]; contentEncoding: readonly string[] },
  grants: readonly ModelGrant[],
): HeaderDecision {
  const granted = admittedBy(grants).betas;
  for (const beta of betaValues(h.betas)) {
    const allowed = BETA_ALLOW.some((b) => b.beta === beta) || granted.includes(beta); // safety: beta-allowlist
    if (!allowed) {
      const by = grantsAdmitting("betas", beta);
      return {
        kind: "refuse",
        status: 403,
        errorType: "permission_error",
        message: `anthropic-beta ${JSON.stringify(beta)} is not one the session's proxy passes${by.length > 0 ? ` (it needs the grant ${by.join(" or ")})` : ""}`,
      };
    }
  }
  const encodings = betaValues(h.contentEncoding).map((e) => e.toLowerCase());
  const encoded = encodings.find((e) => e !== "identity");
  if (encoded !== undefined)
    return {
      kind: "refuse",
      status: 415,
      errorType: "invalid_request_error",
      message: `content-encoding ${JSON.stringify(encoded)}: the session's proxy reads request bodies as sent, so it passes none encoded`,
    };
  return { kind: "pass" };
}
