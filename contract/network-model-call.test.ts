// The proxy's two decisions over one request (core/network/model-call.ts) and what they rest on:
// the body's shape measured on its bytes before anything parses it (json-shape.ts), the headers
// dropped each way, and the line the host writes when a session's proxy process ends on its own.
// Each as a golden table beside the invariants that hold whatever a regeneration blesses.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import {
  DROPPED_HEADERS,
  DROPPED_RESPONSE_HEADERS,
  downstreamHeaders,
  upstreamHeaders,
} from "../src/core/network/egress.ts";
import {
  EGRESS_LOG_BUDGET,
  LOG_START,
  closingLines,
  planLogLine,
  proxyEndedLine,
  renderRecord,
  type LogState,
} from "../src/core/network/egress-log.ts";
import type { EgressRecord } from "../src/core/network/egress.ts";
import { decideJsonShape, measureJson } from "../src/core/network/json-shape.ts";
import {
  decideModelCall,
  decideRequestHead,
  type ProxyPolicy,
  type RequestHead,
} from "../src/core/network/model-call.ts";
import { proxyLimits } from "../src/core/network/proxy-limits.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const L = proxyLimits();

/** The true shape of a parsed value: depth counted in objects and arrays, and how many there are. */
function shapeOf(v: unknown): { depth: number; containers: number } {
  if (v === null || typeof v !== "object") return { depth: 0, containers: 0 };
  let depth = 0;
  let containers = 1;
  for (const x of Object.values(v)) {
    const s = shapeOf(x);
    depth = Math.max(depth, s.depth);
    containers += s.containers;
  }
  return { depth: depth + 1, containers };
}

const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("the body's shape, measured before it is parsed", () => {
  it("on every JSON text, the scan's depth and count are the parse's own", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (v, spaced) => {
        const text = JSON.stringify(v, null, spaced ? 2 : undefined);
        expect(measureJson(enc(text), { depth: 1e9, containers: 1e9 })).toEqual(shapeOf(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });

  it("every case: brackets in strings and escapes are not structure; past a bound it is refused, and the scan stops there", async () => {
    const cases: Array<[string, string, number | null]> = [
      ["a plain call", JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }), null],
      ["brackets inside a string", JSON.stringify({ text: "[[[[{{{{".repeat(100) }), null],
      ["an escaped quote then brackets in the string", '{"t":"\\"[[[[[[","u":[1]}', null],
      ["an escaped backslash ends the string", '{"t":"\\\\","u":[[1]]}', null],
      ["non-ASCII around brackets", JSON.stringify({ t: "é[ü{日本" }), null],
      [`nested at the depth bound (${L.jsonDepth})`, nested(L.jsonDepth), null],
      ["nested one past the depth bound", nested(L.jsonDepth + 1), 400],
      ["nested a million deep", nested(1_000_000), 400],
      [
        `${L.jsonContainers} empty objects in an array`,
        `[${Array(L.jsonContainers - 1)
          .fill("{}")
          .join(",")}]`,
        null,
      ],
      ["one more", `[${Array(L.jsonContainers).fill("{}").join(",")}]`, 413],
      ["the finding: 28 MiB of {}", `[${"{},".repeat((28 * 1024 * 1024) / 3)}{}]`, 413],
      ["not JSON at all: the parse refuses it after", "{nope", null],
    ];
    const lines: string[] = [];
    for (const [name, text, status] of cases) {
      const d = decideJsonShape(enc(text), L);
      expect(d.kind === "refuse" ? d.status : null, name).toBe(status);
      lines.push(`${name} → ${d.kind === "pass" ? "pass" : `refuse ${d.status}: ${d.message}`}`);
    }
    expect(
      measureJson(enc(nested(1_000_000)), { depth: L.jsonDepth, containers: 1e9 }),
      "the scan stops at the first level past the depth bound",
    ).toEqual({ depth: L.jsonDepth + 1, containers: L.jsonDepth + 1 });
    const errorType = (text: string) => {
      const d = decideJsonShape(enc(text), L);
      return d.kind === "refuse" ? d.errorType : null;
    };
    expect(errorType(nested(L.jsonDepth + 1)), "too deep: an invalid request").toBe("invalid_request_error");
    expect(errorType(`[${Array(L.jsonContainers).fill("{}").join(",")}]`), "too many: too large").toBe(
      "request_too_large",
    );
    const flood = enc(`[${"{},".repeat(4_000_000)}{}]`);
    expect(
      measureJson(flood, { depth: L.jsonDepth, containers: 10 }).containers,
      "the scan stops at the first container past the bound",
    ).toBe(11);
    await matchGolden(
      "network",
      "json-shape",
      "txt",
      "decideJsonShape: what the proxy refuses to parse (PROXY_LIMITS jsonDepth, jsonContainers)",
      lines.join("\n"),
    );
  });
});

/** The Anthropic API's error type for each status the proxy answers with. */
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  403: "permission_error",
  413: "request_too_large",
  415: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
};

const POLICY: ProxyPolicy = { mode: "model-only", hasCredential: true, grants: [], limits: L };
const HEAD: RequestHead = {
  method: "POST",
  target: "/v1/messages?beta=true",
  declared: 100,
  betas: [],
  contentEncoding: [],
};
const CALL = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };

describe("one request's two steps", () => {
  it("the head: the egress table, the credential, the headers, then the declared size against what is held", async () => {
    const cases: Array<[string, ProxyPolicy, RequestHead, number, string]> = [
      ["a model call", POLICY, HEAD, 0, "read"],
      ["HEAD /", POLICY, { ...HEAD, method: "HEAD", target: "/", declared: null }, 0, "read"],
      ["another path", POLICY, { ...HEAD, target: "/v1/files" }, 0, "refuse-after-body 403"],
      ["network none", { ...POLICY, mode: "none" }, HEAD, 0, "refuse-after-body 403"],
      ["no credential", { ...POLICY, hasCredential: false }, HEAD, 0, "refuse-after-body 500"],
      ["a beta off the list", POLICY, { ...HEAD, betas: ["mcp-client-2025-11-20"] }, 0, "refuse-after-body 403"],
      [
        "the beta with its grant",
        { ...POLICY, grants: ["mcp-connector"] },
        { ...HEAD, betas: ["mcp-client-2025-11-20"] },
        0,
        "read",
      ],
      ["a gzip body", POLICY, { ...HEAD, contentEncoding: ["gzip"] }, 0, "refuse-after-body 415"],
      ["declared past the body bound", POLICY, { ...HEAD, declared: L.bodyBytes + 1 }, 0, "refuse-now 413"],
      ["the session already holds its bound", POLICY, HEAD, L.heldBytes + 1, "refuse-now 429"],
      [
        "another path, declared past the bound: refused as the path, its body dropped",
        POLICY,
        { ...HEAD, target: "/x", declared: L.bodyBytes + 1 },
        0,
        "refuse-after-body 403",
      ],
    ];
    const lines: string[] = [];
    for (const [name, p, h, held, want] of cases) {
      const d = decideRequestHead(p, h, held);
      const got = d.kind === "read" ? "read" : `${d.kind} ${d.status}`;
      expect(got, name).toBe(want);
      if (d.kind !== "read")
        expect(d.errorType, `${name}: the API's error type for its status`).toBe(ERROR_TYPES[d.status]);
      lines.push(`${name} → ${got}${d.kind === "read" ? "" : `: ${d.message}`}`);
    }
    await matchGolden(
      "network",
      "request-head-decisions",
      "txt",
      "decideRequestHead: a request's fate before its body",
      lines.join("\n"),
    );
  });

  it("the body: HEAD carries none; a POST's is measured, parsed once, checked, and what goes up is that parse serialised again", async () => {
    const call = (m: string, text: string, grants: ProxyPolicy["grants"] = []) =>
      decideModelCall(m, enc(text), grants, L);
    expect(call("HEAD", "")).toEqual({ kind: "forward", body: null });
    expect(call("POST", JSON.stringify(CALL, null, 2))).toEqual({ kind: "forward", body: JSON.stringify(CALL) });
    const dup = `{"model":"m","max_tokens":8,"tools":[{"type":"web_fetch_20250910","name":"f"}],"messages":[{"role":"user","content":"hi"}],"tools":[]}`;
    expect(call("POST", dup), "the duplicate key goes up as the check read it").toEqual({
      kind: "forward",
      body: `{"model":"m","max_tokens":8,"tools":[],"messages":[{"role":"user","content":"hi"}]}`,
    });
    const cases: Array<[string, string, string, number | "forward"]> = [
      ["HEAD with a body", "HEAD", "{}", 400],
      ["not JSON", "POST", "{nope", 400],
      ["a byte order mark: not JSON as sent", "POST", `\ufeff${JSON.stringify(CALL)}`, 400],
      ["a server tool", "POST", JSON.stringify({ ...CALL, tools: [{ type: "web_fetch_20250910", name: "f" }] }), 403],
      [
        "nested past the bound inside a message",
        "POST",
        JSON.stringify({ ...CALL, metadata: JSON.parse(nested(L.jsonDepth)) }),
        400,
      ],
      [
        "the finding: 28 MiB of {} in messages, refused unparsed",
        "POST",
        `{"model":"m","messages":[${"{},".repeat((28 * 1024 * 1024) / 3)}{}]}`,
        413,
      ],
      ["a plain call", "POST", JSON.stringify(CALL), "forward"],
    ];
    const lines: string[] = [];
    for (const [name, method, text, want] of cases) {
      const d = call(method, text);
      expect(d.kind === "forward" ? "forward" : d.status, name).toBe(want);
      expect(d.kind, name).toBe(want === "forward" ? "forward" : "refuse");
      if (d.kind === "refuse") expect(d.errorType, name).toBe(ERROR_TYPES[d.status]);
      lines.push(`${name} → ${d.kind === "forward" ? "forward" : `refuse ${d.status}: ${d.message}`}`);
    }
    await matchGolden(
      "network",
      "model-call-decisions",
      "txt",
      "decideModelCall: a body read whole, before it goes up",
      lines.join("\n"),
    );
  });
});

describe("headers each way, and the line for a proxy that ended", () => {
  it("a Trailer or Expect the session sends never goes up; the answer's framing and trailers are the proxy's own", () => {
    const up = upstreamHeaders(
      { trailer: "x-t", expect: "100-continue", te: "trailers", "content-type": "application/json" },
      { header: "x-api-key", value: "k" },
      "api.example",
    );
    expect(up).toStrictEqual({ "content-type": "application/json", host: "api.example", "x-api-key": "k" });
    expect(
      upstreamHeaders({ absent: undefined, "x-a": "1" }, { header: "x-api-key", value: "k" }, "h"),
      "a header with no value is not sent",
    ).toStrictEqual({ "x-a": "1", host: "h", "x-api-key": "k" });
    for (const h of ["trailer", "expect", "te", "transfer-encoding"])
      expect(
        DROPPED_HEADERS.map((d) => d.name),
        h,
      ).toContain(h);
    expect(
      downstreamHeaders({
        connection: "close",
        "transfer-encoding": "chunked",
        trailer: "x",
        "x-up": "1",
        none: undefined,
      }),
    ).toStrictEqual({ "x-up": "1" });
    expect(DROPPED_RESPONSE_HEADERS.map((d) => d.name)).toEqual(["connection", "transfer-encoding", "trailer"]);
  });

  it("proxyEndedLine: one bounded line, whatever the process's stderr held", () => {
    const line = proxyEndedLine("t", `the session's model proxy ended (signal SIGABRT): ${"\u0001".repeat(5_000)}`);
    expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(EGRESS_LOG_BUDGET.lineBytes.value);
    expect(JSON.parse(line)).toMatchObject({
      time: "t",
      outcome: "proxy-ended",
      why: expect.stringMatching(/^the session's model proxy ended \(signal SIGABRT\)/),
    });
    expect(JSON.parse(proxyEndedLine("t", "short"))).toEqual({ time: "t", outcome: "proxy-ended", why: "short" });
  });
});

/** A string of `chars` characters or fewer whose JSON escaping adds `bytes` bytes: control characters (6 each) and letters. */
function escapedTo(bytes: number, chars: number): string {
  for (let six = 0; six <= chars; six++) {
    const one = bytes - 6 * six;
    if (one >= 0 && six + one <= chars) return "\u0001".repeat(six) + "a".repeat(one);
  }
  throw new Error(`no string of ${chars} characters escapes to ${bytes} bytes`);
}

describe("the egress log's lines, one by one, as the proxy's process writes them", () => {
  const refused = (i: number, status = 403): EgressRecord => ({
    time: `t${i}`,
    method: "GET",
    path: "/x",
    outcome: "refused",
    status,
    bytesIn: 0,
    bytesOut: 0,
  });

  it("past the kept refusals a summary at each power of two, with the counts by status; the closing line only for refusals since the last", () => {
    let s: LogState = LOG_START;
    const step = (r: EgressRecord) => {
      const p = planLogLine(s, r);
      s = p.state;
      return p.lines.map((l) => JSON.parse(l) as { outcome: string; suppressed?: number; byStatus?: object });
    };
    const kept = EGRESS_LOG_BUDGET.refusedKept.value;
    for (let i = 0; i < kept; i++) expect(step(refused(i)).map((l) => l.outcome)).toEqual(["refused"]);
    const after = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => step(refused(kept + n, n === 8 ? 413 : 403)));
    expect(
      after.map((ls) => ls.map((l) => l.suppressed)),
      "a summary when the suppressed count is 1, 2, 4, 8",
    ).toEqual([[1], [2], [], [4], [], [], [], [8]]);
    expect(after[7]![0]!.byStatus, "counted by status, all of them").toEqual({ "403": kept + 7, "413": 1 });
    expect(closingLines(s, "end"), "nothing suppressed since the last summary: no closing line").toEqual([]);
    step(refused(999));
    expect(closingLines(s, "end").map((l) => JSON.parse(l) as object)).toEqual([
      {
        time: "end",
        outcome: "refused-summary",
        refused: kept + 9,
        suppressed: 9,
        byStatus: { "403": kept + 8, "413": 1 },
      },
    ]);
  });

  it("a line is cut only past its budget, says how much was cut, and one that fits exactly is written whole", () => {
    const B = EGRESS_LOG_BUDGET;
    const at = (path: string) => JSON.parse(renderRecord({ ...refused(0), path })) as { path: string };
    expect(at("p".repeat(B.pathChars.value)).path, "a path of exactly its budget").toBe("p".repeat(B.pathChars.value));
    expect(at("p".repeat(B.pathChars.value + 44)).path).toBe(`${"p".repeat(B.pathChars.value)}…(+44)`);
    const base = renderRecord({ ...refused(0), why: "" }).length;
    const exact = renderRecord({ ...refused(0), why: escapedTo(B.lineBytes.value - base, B.whyChars.value) });
    expect(exact.length, "a line of exactly lineBytes").toBe(B.lineBytes.value);
    expect((JSON.parse(exact) as { why: string }).why, "is written whole").not.toContain("…");
    const endedBase = proxyEndedLine("t", "").length;
    const endedExact = proxyEndedLine("t", escapedTo(B.lineBytes.value - endedBase, B.whyChars.value));
    expect(endedExact.length).toBe(B.lineBytes.value);
    expect(endedExact, "the proxy-ended line too").not.toContain("…");
    // Fields the budget does not cut (the time) can outgrow the line: the cutting stops, it does not loop.
    expect(JSON.parse(renderRecord({ ...refused(0), time: "t".repeat(2 * B.lineBytes.value) }))).toMatchObject({
      outcome: "refused",
    });
    expect(JSON.parse(proxyEndedLine("t".repeat(2 * B.lineBytes.value), "why"))).toMatchObject({
      outcome: "proxy-ended",
    });
  });
});

describe("the body's shape: the first bound it passes is the one it is refused for", () => {
  it("too many containers before a deep part: 413 for the count, the scan stopped before the depth", () => {
    const small = { jsonDepth: 2, jsonContainers: 3 };
    const text = "[[],[],[[[[]]]]]";
    expect(measureJson(enc(text), { depth: 2, containers: 3 }), "stopped at the fourth container").toEqual({
      depth: 2,
      containers: 4,
    });
    const d = decideJsonShape(enc(text), small);
    expect(d.kind === "refuse" ? d.status : null).toBe(413);
    expect(
      decideJsonShape(enc("[[[[]]],[],[]]"), small),
      "control: the deep part first is refused for its depth",
    ).toMatchObject({ kind: "refuse", status: 400 });
  });
});
