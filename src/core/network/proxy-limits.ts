// What one session's model proxy may cost the host. Each session's proxy is a process of its own,
// so each bound is per session: its heap, its bodies, what of a body it parses, its connections
// and how long an idle one may hold a descriptor.
const MiB = 1024 * 1024;

export const PROXY_LIMITS = {
  /**
   * The Messages API's own request limit is 32 MB (a larger request gets 413 request_too_large from
   * the provider's edge). In MiB it is a little more than the provider takes, so the proxy never
   * refuses a body the API would accept, and never holds more than one such body per request.
   */
  bodyBytes: { value: 32 * MiB, why: "the Messages API's own 32 MB request limit: nothing larger is a model call" },
  /** The proxy reads a body whole before its check: this bounds what all of a session's requests hold at once. */
  heldBytes: { value: 64 * MiB, why: "two full-size bodies at once; parallel subagents send far smaller ones" },
  /** node's server.maxConnections: a connection past it is closed at once, before it holds anything. */
  connections: {
    value: 64,
    why: "a CLI's fetch keeps up to about twice its calls in flight (measured: undici at 20 at once holds 40 sockets); 2,000 idle ones cost 2,000 host descriptors",
  },
  /** From a connection's first byte (or its opening) to its whole request head. */
  headersTimeoutMs: {
    value: 5_000,
    why: "a CLI writes its request head at once; an idle or trickling connection is closed with 408",
  },
  /** From the request head to the body's last byte: 32 MiB over loopback takes well under a second. */
  requestTimeoutMs: { value: 60_000, why: "a body that trickles in cannot hold its connection for long" },
  /** Idle between two requests of one keep-alive connection. */
  keepAliveTimeoutMs: { value: 5_000, why: "node's default; a CLI reconnects when it needs to" },
  /** How often node checks the two timeouts above. */
  checkEveryMs: { value: 1_000, why: "a timed-out connection goes within a second of its bound" },
  /** Checked on the body's bytes before JSON.parse (json-shape.ts). */
  jsonDepth: {
    value: 64,
    why: "the recorded CLIs' bodies nest 10 levels, a tool's JSON schema a few more; past this nothing is parsed, serialised or sent",
  },
  /** Checked with the depth: what JSON.parse would build is bounded before it builds it. */
  jsonContainers: {
    value: 1_048_576,
    why: "a recorded body holds one object or array per 35 bytes; 28 MiB of {} is 14 million (1.8 GiB of heap) and is refused unparsed",
  },
  /** The proxy process's V8 heap (--max-old-space-size). */
  heapMiB: {
    value: 1024,
    why: "two full-size bodies parsed at once take about 300 MiB; past the heap the session's own proxy ends, never the host",
  },
} as const;

export type ProxyLimits = { [K in keyof typeof PROXY_LIMITS]: number };

/** The limits in force: the table's, with a test's positive control's changes on top. */
export function proxyLimits(over: Partial<ProxyLimits> = {}): ProxyLimits {
  const base = Object.fromEntries(Object.entries(PROXY_LIMITS).map(([k, v]) => [k, v.value])) as ProxyLimits;
  return { ...base, ...over };
}

export type SizeDecision = { kind: "pass" } | { kind: "refuse"; status: number; errorType: string; message: string };

/**
 * Whether a body may go on being read: its declared length, what it has sent so far, and what all
 * the session's requests hold now (this one's bytes included). Checked before reading and on every
 * chunk, so an oversize body is refused at the first byte past the bound, never buffered whole.
 */
export function decideBodySize(
  l: Pick<ProxyLimits, "bodyBytes" | "heldBytes">,
  s: { declared: number | null; read: number; held: number },
): SizeDecision {
  const biggest = Math.max(s.declared ?? 0, s.read);
  if (biggest > l.bodyBytes)
    // safety: body-cap
    return {
      kind: "refuse",
      status: 413,
      errorType: "request_too_large",
      message: `the request body is over the session's proxy bound of ${l.bodyBytes} bytes (the Messages API's own limit)`,
    };
  if (s.held > l.heldBytes)
    // safety: held-bytes-cap
    return {
      kind: "refuse",
      status: 429,
      errorType: "rate_limit_error",
      message: `the session's requests hold over ${l.heldBytes} bytes of body at once; retry when one has finished`,
    };
  return { kind: "pass" };
}
