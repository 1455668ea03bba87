// One request at the session's proxy, in the two steps the proxy decides it: its head (before a
// byte of its body is read), then its body (read whole, within the size bound). Each step is a
// verdict over plain data; the proxy's process reads, answers and forwards.
import { decideEgress, type NetworkMode } from "./egress.ts";
import type { ModelGrant } from "./grants.ts";
import { decideJsonShape } from "./json-shape.ts";
import { decideModelBody } from "./model-body.ts";
import { decideModelHeaders } from "./model-headers.ts";
import { decideBodySize, type ProxyLimits } from "./proxy-limits.ts";

export type Refusal = { status: number; errorType: string; message: string };

/** What a request's head says: everything the proxy knows of it before its body. */
export type RequestHead = {
  method: string;
  target: string;
  /** Its content-length, or null (chunked, or none). */
  declared: number | null;
  betas: readonly string[];
  contentEncoding: readonly string[];
};

/**
 * A request's fate at its head. `read`: read the body. `refuse-after-body`: the body is read and
 * dropped (never held) up to the size bound, then refused, so the session's client, still sending,
 * gets the answer. `refuse-now`: refused before its body (an oversize one: the rest is dropped).
 */
export type HeadDecision =
  | { kind: "read" }
  | ({ kind: "refuse-after-body" } & Refusal)
  | ({ kind: "refuse-now" } & Refusal);

export type ProxyPolicy = {
  mode: NetworkMode;
  hasCredential: boolean;
  grants: readonly ModelGrant[];
  limits: ProxyLimits;
};

const NO_CREDENTIAL: Refusal = {
  status: 500,
  errorType: "api_error",
  message: "the host holds no credential for this session's model",
};

/** The head's verdict: the egress table, the credential, the headers' check, then the declared size against what the session holds. */
export function decideRequestHead(p: ProxyPolicy, h: RequestHead, held: number): HeadDecision {
  const d = decideEgress(p.mode, h.method, h.target);
  if (d.kind === "refuse") return { ...d, kind: "refuse-after-body" };
  if (!p.hasCredential) return { kind: "refuse-after-body", ...NO_CREDENTIAL };
  const hd = decideModelHeaders({ betas: h.betas, contentEncoding: h.contentEncoding }, p.grants);
  if (hd.kind === "refuse") return { ...hd, kind: "refuse-after-body" }; // safety: header-check-enforced
  const size = decideBodySize(p.limits, { declared: h.declared, read: 0, held });
  if (size.kind === "refuse") return { ...size, kind: "refuse-now" };
  return { kind: "read" };
}

/** What goes upstream: the body serialised again (null for HEAD), or the refusal. */
export type CallDecision = { kind: "forward"; body: string | null } | ({ kind: "refuse" } & Refusal);

const invalid = (message: string): CallDecision => ({
  kind: "refuse",
  status: 400,
  errorType: "invalid_request_error",
  message,
});

/** The bytes as JSON.parse reads them: UTF-8, a byte order mark kept (so refused, as JSON). */
const DECODER = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The body's verdict, once it is read whole within the size bound: HEAD carries none; a POST's is
 * measured before it is parsed (depth, objects and arrays), parsed once, checked, and what goes up
 * is that parse serialised again, so a duplicate key or any other way two JSON parsers disagree
 * cannot slip a field past the check.
 */
export function decideModelCall(
  method: string,
  body: Uint8Array,
  grants: readonly ModelGrant[],
  l: Pick<ProxyLimits, "jsonDepth" | "jsonContainers">,
): CallDecision {
  if (method === "HEAD") return body.length > 0 ? invalid("HEAD / carries no body") : { kind: "forward", body: null };
  const shape = decideJsonShape(body, l);
  if (shape.kind === "refuse") return shape; // safety: json-shape-before-parse
  let parsed: unknown;
  let out: string;
  try {
    parsed = JSON.parse(DECODER.decode(body));
    out = JSON.stringify(parsed); // safety: body-reserialised
  } catch (e) {
    const why = e instanceof Error ? e.message.slice(0, 200) : String(e);
    return invalid(`the request body is not JSON the proxy can check: ${why}`);
  }
  const b = decideModelBody(parsed, grants);
  if (b.kind === "refuse") return b; // safety: body-check-enforced
  return { kind: "forward", body: out };
}
