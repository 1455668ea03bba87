// What the host's model proxy lets out of a session: a table of requests, each row with its why.
// Anything else gets an Anthropic-shaped error and a "refused" line in the run's egress log.

/** The policy's `network` field: what the session may reach. */
export const NETWORK_MODES = [
  { mode: "model-only", why: "the default: the model API through the host's proxy, nothing else" },
  { mode: "none", why: "no model either: a session whose adapter needs no network, such as the fake adapter" },
] as const;

export type NetworkMode = (typeof NETWORK_MODES)[number]["mode"];

/** The requests the proxy forwards in `model-only` mode. The path is compared before any decoding. */
export const EGRESS_ALLOW: readonly { method: string; path: string; why: string }[] = [
  {
    method: "POST",
    path: "/v1/messages",
    why: "the turn's model calls, streamed; the query (?beta=true) passes as sent",
  },
  { method: "HEAD", path: "/", why: "Claude Code's reachability check before the first turn" },
];

export type EgressDecision =
  | { kind: "forward"; why: string }
  | { kind: "refuse"; status: number; errorType: string; message: string };

/**
 * One request's fate at the proxy. The raw request target is split at the first "?" and its path
 * compared byte for byte: no decoding, no dot segments, no absolute-form URL, so "/v1/messages/../files"
 * and "/v1/%6Dessages" are refused rather than normalised.
 */
export function decideEgress(mode: NetworkMode, method: string, target: string): EgressDecision {
  if (mode === "none")
    return {
      kind: "refuse",
      status: 403,
      errorType: "permission_error",
      message: "this session has no network (policy network: none)",
    }; // safety: egress-none-refuses
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  const row = EGRESS_ALLOW.find((r) => r.method === method && r.path === path); // safety: egress-path-exact
  if (row === undefined)
    return {
      kind: "refuse",
      status: 403,
      errorType: "permission_error",
      message: `the session's proxy forwards only ${EGRESS_ALLOW.map((r) => `${r.method} ${r.path}`).join(" and ")}; ${method} ${path} is refused`,
    };
  return { kind: "forward", why: row.why };
}

/** The body a refused request gets, as the Anthropic API shapes its errors. */
export function egressErrorBody(d: Extract<EgressDecision, { kind: "refuse" }>): string {
  return JSON.stringify({ type: "error", error: { type: d.errorType, message: d.message } });
}

/** Headers the proxy never passes upstream: any credential the session sent, and hop-by-hop ones. */
export const DROPPED_HEADERS: readonly { name: string; why: string }[] = [
  { name: "x-api-key", why: "the session's placeholder, or a key it found: the proxy adds the real one" }, // safety: egress-keeps-session-key
  { name: "authorization", why: "the same, for a bearer token" },
  { name: "proxy-authorization", why: "a credential for some other proxy" },
  { name: "cookie", why: "nothing the model API needs" },
  { name: "host", why: "set to the upstream's" },
  { name: "connection", why: "hop-by-hop" },
  { name: "keep-alive", why: "hop-by-hop" },
  { name: "transfer-encoding", why: "hop-by-hop; the proxy re-frames the body" },
  { name: "te", why: "hop-by-hop" },
  { name: "upgrade", why: "hop-by-hop: no protocol switch through the proxy" },
  // safety: egress-drops-trailer
  { name: "trailer", why: "the proxy sends the body whole, with its length: no trailers can follow it" },
  { name: "expect", why: "the proxy holds the whole body before it sends: no 100-continue upstream" },
];

/** Headers of the upstream's answer the proxy does not pass back: its own framing, and trailers it never sends. */
export const DROPPED_RESPONSE_HEADERS: readonly { name: string; why: string }[] = [
  { name: "connection", why: "the session's connection is the proxy's, not the upstream's" },
  { name: "transfer-encoding", why: "the proxy frames the answer to the session itself" },
  { name: "trailer", why: "an answer without a body (HEAD) cannot announce trailers: node throws writing it" },
];

/** The upstream answer's headers as the session gets them: minus DROPPED_RESPONSE_HEADERS. */
export function downstreamHeaders(
  incoming: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | string[]> {
  const dropped = new Set(DROPPED_RESPONSE_HEADERS.map((h) => h.name));
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(incoming)) if (v !== undefined && !dropped.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** How the real credential goes upstream: an API key, or a proxy's bearer token. */
export type UpstreamCredential = { header: "x-api-key" | "authorization"; value: string };

/** The request headers sent upstream: the session's minus DROPPED_HEADERS, plus the real credential. */
export function upstreamHeaders(
  incoming: Readonly<Record<string, string | string[] | undefined>>,
  credential: UpstreamCredential,
  host: string,
): Record<string, string | string[]> {
  const dropped = new Set(DROPPED_HEADERS.map((h) => h.name));
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v === undefined || dropped.has(k.toLowerCase())) continue; // safety: egress-drops-session-headers
    out[k.toLowerCase()] = v;
  }
  out.host = host;
  out[credential.header] = credential.header === "authorization" ? `Bearer ${credential.value}` : credential.value;
  return out;
}

/** One line of the run's egress log (<state>/egress/<run>.jsonl). It never holds a header, so never a credential. */
export type EgressRecord = {
  time: string;
  method: string;
  path: string;
  outcome: "allowed" | "refused";
  status: number;
  bytesIn: number;
  bytesOut: number;
  why?: string;
};

/** The port the runner forwards to the model proxy, inside the session's own network namespace. */
export const MODEL_PORT = 8787;

/** The model API's URL as the session's harness sees it. */
export const MODEL_URL = `http://127.0.0.1:${MODEL_PORT}`;
