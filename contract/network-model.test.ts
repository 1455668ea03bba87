// The model API is the model, not a fetcher (core/network/{grants,model-headers,model-body,
// proxy-limits,egress-log}.ts): the tables as goldens, each with the invariants that hold whatever
// a regeneration blesses, and every decision on the requests a session might try, each refused
// one beside the grant that admits it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import type { ModelRequestsBaseline } from "../src/conformance/baselines/model-requests.ts";
import { MODEL_REQUESTS_BASELINE } from "../src/conformance/baselines/model-requests.ts";
import type { EgressRecord } from "../src/core/network/egress.ts";
import {
  EGRESS_LOG_BUDGET,
  LOG_START,
  closingLines,
  egressLogBound,
  planLogLine,
  renderRecord,
  type LogState,
} from "../src/core/network/egress-log.ts";
import { MODEL_GRANTS, admittedBy, type ModelGrant } from "../src/core/network/grants.ts";
import {
  BODY_FIELDS,
  CLIENT_TOOL_TYPES,
  CONTENT_BLOCKS,
  SOURCE_TYPES,
  decideModelBody,
} from "../src/core/network/model-body.ts";
import { BETA_ALLOW, betaValues, decideModelHeaders } from "../src/core/network/model-headers.ts";
import { PROXY_LIMITS, decideBodySize, proxyLimits } from "../src/core/network/proxy-limits.ts";

const ALL_GRANTS = MODEL_GRANTS.map((g) => g.grant);
const BASELINE = JSON.parse(readFileSync(MODEL_REQUESTS_BASELINE, "utf8")) as ModelRequestsBaseline;

const base = () => ({
  model: "claude-sonnet-4-5",
  max_tokens: 8,
  messages: [{ role: "user", content: "hi" }] as unknown[],
});
const user = (...content: unknown[]) => ({ ...base(), messages: [{ role: "user", content }] });
const img = (source: unknown) => ({ type: "image", source });
const doc = (source: unknown) => ({ type: "document", source });
const tool = (type: string | null | undefined, name = "t") => ({
  ...(type === undefined ? {} : { type }),
  name,
  ...(type === undefined || type === "custom" || type === null ? { input_schema: { type: "object" } } : {}),
});
const withTools = (...tools: unknown[]) => ({ ...base(), tools });

/** Bodies a session might send: [name, body, the grants that admit it, or "pass", or "none" (no grant can)]. */
const BODY_CASES: ReadonlyArray<[name: string, body: unknown, admits: ModelGrant | ModelGrant[] | "pass" | "none"]> = [
  ["a plain model call", base(), "pass"],
  [
    "client tools: no type, custom, null",
    withTools(tool(undefined, "a"), tool("custom", "b"), tool(null, "c")),
    "pass",
  ],
  [
    "system as text blocks, thinking passed back",
    {
      ...base(),
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature: "s" },
            { type: "redacted_thinking", data: "d" },
            { type: "tool_use", id: "1", name: "a", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "1",
              content: [{ type: "text", text: "r" }, img({ type: "base64", media_type: "image/png", data: "" })],
            },
          ],
        },
      ],
    },
    "pass",
  ],
  [
    "inline sources: base64 image and PDF, text and content documents",
    user(
      img({ type: "base64", media_type: "image/png", data: "" }),
      doc({ type: "base64", media_type: "application/pdf", data: "" }),
      doc({ type: "text", media_type: "text/plain", data: "x" }),
      doc({ type: "content", content: [{ type: "text", text: "x" }] }),
    ),
    "pass",
  ],
  [
    "a search result (its source is a label)",
    user({
      type: "search_result",
      source: "https://example.invalid/a",
      title: "t",
      content: [{ type: "text", text: "x" }],
    }),
    "pass",
  ],
  [
    "a tool reference in a tool result",
    user({ type: "tool_result", tool_use_id: "1", content: [{ type: "tool_reference", tool_name: "a" }] }),
    "pass",
  ],
  [
    "mcp_servers (the MCP connector)",
    { ...base(), mcp_servers: [{ type: "url", url: "https://mcp.example.invalid/sse", name: "x" }] },
    "mcp-connector",
  ],
  ["an mcp_toolset tool", withTools({ type: "mcp_toolset", mcp_server_name: "x" }), "mcp-connector"],
  [
    "container (code execution, skills)",
    { ...base(), container: { skills: [{ type: "anthropic", skill_id: "pdf" }] } },
    "code-execution",
  ],
  ["a web_fetch tool", withTools(tool("web_fetch_20250910", "web_fetch")), "web-fetch"],
  ["a newer web_fetch tool", withTools(tool("web_fetch_20260318", "web_fetch")), "web-fetch"],
  ["a web_search tool", withTools(tool("web_search_20250305", "web_search")), "web-search"],
  ["a code_execution tool", withTools(tool("code_execution_20250825", "code_execution")), "code-execution"],
  [
    "a bash_code_execution tool",
    withTools(tool("bash_code_execution_20250825", "bash_code_execution")),
    "code-execution",
  ],
  [
    "a text_editor_code_execution tool",
    withTools(tool("text_editor_code_execution_20250825", "text_editor_code_execution")),
    "code-execution",
  ],
  ["a url image", user(img({ type: "url", url: "https://example.invalid/a.png" })), "url-sources"],
  ["a url PDF", user(doc({ type: "url", url: "https://example.invalid/a.pdf" })), "url-sources"],
  [
    "a url image inside a tool result",
    user({
      type: "tool_result",
      tool_use_id: "1",
      content: [img({ type: "url", url: "https://example.invalid/a.png" })],
    }),
    "url-sources",
  ],
  [
    "a url image inside a document's content",
    user(doc({ type: "content", content: [img({ type: "url", url: "https://example.invalid/a.png" })] })),
    "url-sources",
  ],
  [
    "a url image in the system prompt",
    { ...base(), system: [img({ type: "url", url: "https://example.invalid/a.png" })] },
    "url-sources",
  ],
  ["a file image (Files API)", user(img({ type: "file", file_id: "file_1" })), "file-sources"],
  ["a file document (Files API)", user(doc({ type: "file", file_id: "file_1" })), "file-sources"],
  ["a container_upload block", user({ type: "container_upload", file_id: "file_1" }), "code-execution"],
  [
    "a server_tool_use block passed back",
    {
      ...base(),
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [{ type: "server_tool_use", id: "s", name: "web_fetch", input: { url: "https://example.invalid" } }],
        },
      ],
    },
    ["web-search", "web-fetch", "code-execution"],
  ],
  [
    "a web_fetch_tool_result block",
    user({ type: "web_fetch_tool_result", tool_use_id: "s", content: {} }),
    "web-fetch",
  ],
  [
    "an mcp_tool_use block",
    user({ type: "mcp_tool_use", id: "m", name: "x", server_name: "x", input: {} }),
    "mcp-connector",
  ],
  [
    "a tool_search tool (server-side, no grant)",
    withTools(tool("tool_search_tool_regex_20251119", "tool_search")),
    "none",
  ],
  ["an advisor tool (server-side, no grant)", withTools(tool("advisor_20260301", "advisor")), "none"],
  ["an Anthropic-defined client tool (bash_20250124)", withTools(tool("bash_20250124", "bash")), "none"],
  ["a memory tool", withTools(tool("memory_20250818", "memory")), "none"],
  ["a computer-use tool", withTools(tool("computer_20251124", "computer")), "none"],
  ["the next server tool, by a type no table names", withTools(tool("browse_20270101", "browse")), "none"],
  ["a tool_addition block", user({ type: "tool_addition", tool: { type: "tool_reference", tool_name: "x" } }), "none"],
  [
    "the next content block, by a type no table names",
    user({ type: "fetched_page", url: "https://example.invalid" }),
    "none",
  ],
  ["the next source type", user(img({ type: "s3", bucket: "b" })), "none"],
  ["a body field no table names (fallbacks)", { ...base(), fallbacks: "default" }, "none"],
  [
    "a body field named __proto__",
    JSON.parse('{"model":"m","max_tokens":8,"messages":[],"__proto__":{"mcp_servers":[]}}') as unknown,
    "none",
  ],
];

/** Malformed bodies: a 400 rather than a guess. */
const MALFORMED: ReadonlyArray<[string, unknown]> = [
  ["an array", []],
  ["no messages", { model: "m", max_tokens: 8 }],
  ["tools not a list", { ...base(), tools: { type: "web_fetch_20250910" } }],
  ["a block without a type", user({ text: "x" })],
  ["content neither string nor list", { ...base(), messages: [{ role: "user", content: { type: "text" } }] }],
  ["a source without a type", user(img({ url: "https://example.invalid/a.png" }))],
];

describe("the body check: tools, fields, blocks and sources allowlisted", () => {
  it("every case: refused without a grant unless it is a plain model call, admitted by exactly its grant", async () => {
    const lines: string[] = [];
    for (const [name, body, admits] of BODY_CASES) {
      const d = decideModelBody(body, []);
      if (admits === "pass") expect(d.kind, `${name}: a plain model call passes`).toBe("pass");
      else {
        expect(d.kind, `${name}: refused without a grant`).toBe("refuse");
        if (d.kind === "refuse") expect(d.status, name).toBe(403);
        // Polarity: the grant that admits it does; every other grant does not; no grant admits the "none" cases.
        const by: string[] = admits === "none" ? [] : typeof admits === "string" ? [admits] : admits;
        for (const g of ALL_GRANTS)
          expect(decideModelBody(body, [g]).kind, `${name} with the grant ${g}`).toBe(
            by.includes(g) ? "pass" : "refuse",
          );
      }
      lines.push(
        `${name} → ${d.kind === "pass" ? "pass" : `refuse ${d.status}: ${d.message}`}${admits !== "pass" && admits !== "none" ? ` · admitted by ${[admits].flat().join(", ")}` : ""}`,
      );
    }
    for (const [name, body] of MALFORMED) {
      const d = decideModelBody(body, ALL_GRANTS);
      expect(d.kind === "refuse" && d.status, `${name}: a 400 even with every grant`).toBe(400);
      lines.push(`malformed: ${name} → ${d.kind === "refuse" ? `refuse ${d.status}: ${d.message}` : "pass"}`);
    }
    await matchGolden(
      "network",
      "model-body-decisions",
      "txt",
      "decideModelBody with no grant: what the session's proxy passes upstream",
      lines.join("\n"),
    );
  });
  it("the tables: no default row is a grant's, and none names a server tool, a network source or a server field", async () => {
    const g = admittedBy(ALL_GRANTS);
    for (const f of BODY_FIELDS) expect(g.fields, `BODY_FIELDS ${f.field} is grant-only`).not.toContain(f.field);
    for (const b of CONTENT_BLOCKS) expect(g.blocks, `CONTENT_BLOCKS ${b.type} is grant-only`).not.toContain(b.type);
    for (const s of SOURCE_TYPES) expect(g.sources, `SOURCE_TYPES ${s.type} is grant-only`).not.toContain(s.type);
    expect(
      CLIENT_TOOL_TYPES.map((t) => t.type),
      "a client tool has no type, or custom",
    ).toEqual([null, "custom"]);
    for (const f of ["mcp_servers", "container"])
      expect(
        BODY_FIELDS.map((r) => r.field),
        f,
      ).not.toContain(f);
    for (const s of ["url", "file"])
      expect(
        SOURCE_TYPES.map((r) => r.type),
        s,
      ).not.toContain(s);
    for (const b of ["server_tool_use", "container_upload", "mcp_tool_use", "web_fetch_tool_result", "tool_addition"])
      expect(
        CONTENT_BLOCKS.map((r) => r.type),
        b,
      ).not.toContain(b);
    const rows = (
      title: string,
      head: string,
      xs: readonly { sentBy: string; why: string }[],
      key: (x: never) => string,
    ) => [`## ${title}`, `${head} | sent by | why`, ...xs.map((x) => `${key(x as never)} | ${x.sentBy} | ${x.why}`)];
    await matchGolden(
      "network",
      "model-body-tables",
      "txt",
      "BODY_FIELDS, CLIENT_TOOL_TYPES, CONTENT_BLOCKS, SOURCE_TYPES: what a model call may hold",
      [
        ...rows("BODY_FIELDS", "field", BODY_FIELDS, (x: { field: string }) => x.field),
        ...rows("CLIENT_TOOL_TYPES", "type", CLIENT_TOOL_TYPES, (x: { type: string | null }) =>
          String(x.type ?? "(none)"),
        ),
        ...rows("CONTENT_BLOCKS", "type", CONTENT_BLOCKS, (x: { type: string }) => x.type),
        ...rows("SOURCE_TYPES", "type", SOURCE_TYPES, (x: { type: string }) => x.type),
      ].join("\n"),
    );
    await matchGolden(
      "network",
      "model-grants",
      "txt",
      "MODEL_GRANTS: the server-side features a policy may grant; none by default",
      [
        "grant | tool types | fields | blocks | sources | betas | why",
        ...MODEL_GRANTS.map((r) =>
          [
            r.grant,
            r.toolTypes.join(" "),
            r.fields.join(" "),
            r.blocks.join(" "),
            r.sources.join(" "),
            r.betas.join(" "),
            r.why,
          ].join(" | "),
        ),
      ].join("\n"),
    );
  });
  it("what the pinned CLIs sent (baselines/model-requests.json) passes: every recorded body's skeleton and every beta", () => {
    expect(BASELINE.arms.length, "positive control: both harnesses were recorded").toBeGreaterThanOrEqual(2);
    expect(new Set(BASELINE.arms.map((a) => a.harness)), "both harnesses").toEqual(new Set(["claude-code", "pi"]));
    for (const a of BASELINE.arms) {
      expect(a.ok, `${a.arm}: the recorded turn finished`).toBe(true);
      expect(decideModelBody(a.lastBody, []), `${a.arm}: its last body`).toEqual({ kind: "pass" });
      for (const r of a.requests)
        expect(
          decideModelHeaders({ betas: r.betas, contentEncoding: [] }, []),
          `${a.arm} ${r.method} ${r.url}`,
        ).toEqual({ kind: "pass" });
    }
    const o = BASELINE.observed;
    for (const v of Object.keys(o.fields))
      expect(
        BODY_FIELDS.map((f) => f.field),
        `recorded field ${v}`,
      ).toContain(v);
    for (const v of Object.keys(o.blocks))
      expect(
        CONTENT_BLOCKS.map((f) => f.type),
        `recorded block ${v}`,
      ).toContain(v);
    for (const v of Object.keys(o.sources))
      expect(
        SOURCE_TYPES.map((f) => f.type),
        `recorded source ${v}`,
      ).toContain(v.split(":")[1]);
    expect(Object.keys(o.toolTypes), "the CLIs define their own tools").toEqual(["(client)"]);
    expect(Object.keys(o.betas).sort(), "BETA_ALLOW is what the CLIs sent").toEqual(
      BETA_ALLOW.map((b) => b.beta).sort(),
    );
  });
});

describe("the headers: anthropic-beta allowlisted, bodies unencoded", () => {
  const CASES: ReadonlyArray<
    [name: string, betas: string[], encoding: string[], admits: ModelGrant | "pass" | "none"]
  > = [
    ["no beta", [], [], "pass"],
    [
      "Claude Code's set, one header",
      ["claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27"],
      [],
      "pass",
    ],
    [
      "repeated headers, spaces",
      ["claude-code-20250219", " interleaved-thinking-2025-05-14 , effort-2025-11-24"],
      [],
      "pass",
    ],
    ["identity encoding", [], ["identity"], "pass"],
    ["the MCP connector's beta", ["mcp-client-2025-11-20"], [], "mcp-connector"],
    [
      "an older MCP connector beta, after an allowed one",
      ["claude-code-20250219, mcp-client-2025-04-04"],
      [],
      "mcp-connector",
    ],
    ["the Files API", ["files-api-2025-04-14"], [], "file-sources"],
    ["code execution", ["code-execution-2025-08-25"], [], "code-execution"],
    ["skills", ["skills-2025-10-02"], [], "code-execution"],
    ["web fetch", ["web-fetch-2025-09-10"], [], "web-fetch"],
    ["a beta no table names", ["future-fetcher-2099-01-01"], [], "none"],
    ["an allowed beta in other case", ["Claude-Code-20250219"], [], "none"],
    ["a gzip body", [], ["gzip"], "none"],
  ];
  it("every case, each refused one beside the grant that admits it", async () => {
    const lines: string[] = [];
    for (const [name, betas, encoding, admits] of CASES) {
      const d = decideModelHeaders({ betas, contentEncoding: encoding }, []);
      if (admits === "pass") expect(d.kind, name).toBe("pass");
      else {
        expect(d.kind, `${name}: refused, not stripped`).toBe("refuse");
        for (const g of ALL_GRANTS)
          expect(decideModelHeaders({ betas, contentEncoding: encoding }, [g]).kind, `${name} with ${g}`).toBe(
            g === admits ? "pass" : "refuse",
          );
      }
      lines.push(
        `${name}: ${JSON.stringify(betas)} ${encoding.join(",")} → ${d.kind === "pass" ? "pass" : `refuse ${d.status}: ${d.message}`}`,
      );
    }
    expect(betaValues(["a, b", "c"])).toEqual(["a", "b", "c"]);
    await matchGolden(
      "network",
      "model-header-decisions",
      "txt",
      "decideModelHeaders with no grant: anthropic-beta and content-encoding",
      lines.join("\n"),
    );
  });
  it("BETA_ALLOW turns on nothing a grant holds", async () => {
    const granted = admittedBy(ALL_GRANTS).betas;
    for (const b of BETA_ALLOW) expect(granted, `${b.beta} is a grant's`).not.toContain(b.beta);
    for (const b of BETA_ALLOW)
      expect(b.beta, "no network feature's name").not.toMatch(
        /mcp|files|fetch|search|code-execution|skills|advisor|agent|tunnel/,
      );
    await matchGolden(
      "network",
      "model-betas",
      "txt",
      "BETA_ALLOW: the anthropic-beta values the session's proxy passes",
      ["beta | sent by | why", ...BETA_ALLOW.map((b) => `${b.beta} | ${b.sentBy} | ${b.why}`)].join("\n"),
    );
  });
});

describe("sizes and connections", () => {
  it("PROXY_LIMITS: the body bound is the Messages API's 32 MB, read, never buffered past it", async () => {
    const l = proxyLimits();
    expect(l.bodyBytes, "never below the API's own 32 MB").toBeGreaterThanOrEqual(32_000_000);
    expect(l.bodyBytes, "and not far above it").toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(l.heldBytes).toBeGreaterThanOrEqual(l.bodyBytes);
    expect(l.connections, "far below the 2,000 idle connections of the finding").toBeLessThanOrEqual(64);
    expect(l.headersTimeoutMs, "node requires the head's timeout within the request's").toBeLessThan(
      l.requestTimeoutMs,
    );
    expect(proxyLimits({ connections: 5 }).connections, "a control's change").toBe(5);
    const cases: Array<[string, { declared: number | null; read: number; held: number }, number | null]> = [
      ["nothing read yet", { declared: null, read: 0, held: 0 }, null],
      ["declared at the bound", { declared: l.bodyBytes, read: 0, held: 0 }, null],
      ["declared past the bound: refused before a byte is read", { declared: l.bodyBytes + 1, read: 0, held: 0 }, 413],
      ["chunked, one byte past the bound", { declared: null, read: l.bodyBytes + 1, held: l.bodyBytes + 1 }, 413],
      ["a short declared length, more sent", { declared: 10, read: l.bodyBytes + 1, held: 0 }, 413],
      ["the session holds too much at once", { declared: null, read: 10, held: l.heldBytes + 1 }, 429],
    ];
    const lines: string[] = [];
    for (const [name, s, status] of cases) {
      const d = decideBodySize(l, s);
      expect(d.kind === "refuse" ? d.status : null, name).toBe(status);
      lines.push(`${name} → ${d.kind === "pass" ? "pass" : `refuse ${d.status}: ${d.message}`}`);
    }
    await matchGolden(
      "network",
      "proxy-limits",
      "txt",
      "PROXY_LIMITS and decideBodySize: what one session's proxy may cost the host",
      [
        "limit | value | why",
        ...Object.entries(PROXY_LIMITS).map(([k, v]) => `${k} | ${v.value} | ${v.why}`),
        "",
        ...lines,
      ].join("\n"),
    );
  });
});

describe("the egress log's budget", () => {
  const rec = (i: number, outcome: "allowed" | "refused", path: string, why?: string): EgressRecord => ({
    time: `t${i}`,
    method: outcome === "allowed" ? "POST" : "GET",
    path,
    outcome,
    status: outcome === "allowed" ? 200 : 403,
    bytesIn: 0,
    bytesOut: 0,
    ...(why !== undefined ? { why } : {}),
  });
  it("every allowed call is kept; refusals past the first 64 become summary lines; every line bounded", async () => {
    const B = EGRESS_LOG_BUDGET;
    const long = "/".padEnd(16_000, "a\u0001\u00e9");
    let s: LogState = LOG_START;
    const lines: string[] = [];
    const N = 10_000;
    for (let i = 0; i < N; i++) {
      const p = planLogLine(
        s,
        i % 1000 === 0 ? rec(i, "allowed", "/v1/messages") : rec(i, "refused", long, `why ${long}`),
      );
      s = p.state;
      lines.push(...p.lines);
    }
    lines.push(...closingLines(s, "end"));
    const parsed = lines.map(
      (l) => JSON.parse(l) as { outcome: string; suppressed?: number; refused?: number; path?: string },
    );
    expect(parsed.filter((l) => l.outcome === "allowed").length, "every allowed call is recorded").toBe(N / 1000);
    expect(parsed.filter((l) => l.outcome === "refused").length, "the first refusals are kept").toBe(
      B.refusedKept.value,
    );
    const summaries = parsed.filter((l) => l.outcome === "refused-summary");
    expect(summaries.at(-1), "the closing summary counts every refusal").toMatchObject({
      refused: N - N / 1000,
      suppressed: N - N / 1000 - B.refusedKept.value,
    });
    expect(summaries.length, "one summary per power of two, and the closing one").toBeLessThanOrEqual(
      Math.ceil(Math.log2(N)) + 1,
    );
    for (const l of lines)
      expect(new TextEncoder().encode(l).length, "each line bounded").toBeLessThanOrEqual(B.lineBytes.value);
    const total = lines.reduce((n, l) => n + new TextEncoder().encode(l).length + 1, 0);
    expect(total, "the run's log within egressLogBound()").toBeLessThanOrEqual(egressLogBound(N / 1000));
    expect(
      parsed.find((l) => l.outcome === "refused")?.path,
      "positive control: a kept line shows the path tried, cut",
    ).toMatch(/^\/a.*…\(\+\d+\)$/);
    const short = renderRecord(rec(0, "refused", "/v1/models", "the session's proxy forwards only POST /v1/messages"));
    expect(JSON.parse(short), "a short record is written whole").toEqual(
      rec(0, "refused", "/v1/models", "the session's proxy forwards only POST /v1/messages"),
    );
    await matchGolden(
      "network",
      "egress-log-budget",
      "txt",
      "EGRESS_LOG_BUDGET: how much of a run's refusals the host keeps",
      [
        "budget | value | why",
        ...Object.entries(B).map(([k, v]) => `${k} | ${v.value} | ${v.why}`),
        `egressLogBound(0) | ${egressLogBound(0)} | the most bytes refusals alone can add to a run's log`,
      ].join("\n"),
    );
  });
});
