// The model API's server-side features that reach the network, each a grant a policy may give.
// Without its grant a feature's tool types, body fields, content blocks, source types and betas are
// refused by the proxy (model-body.ts, model-headers.ts): the provider would otherwise fetch, search
// or run code on the session's behalf, outside the sandbox's network namespace.

export type GrantRow = {
  grant: string;
  why: string;
  /** Tool `type` prefixes: a versioned type such as web_fetch_20250910 matches web_fetch_. */
  toolTypes: readonly string[];
  /** Top-level body fields. */
  fields: readonly string[];
  /** Content block types, anywhere in messages. */
  blocks: readonly string[];
  /** `source.type` of image and document blocks. */
  sources: readonly string[];
  /** anthropic-beta values that turn the feature on. */
  betas: readonly string[];
};

/** Read off the Messages API's tool reference and the pinned @anthropic-ai/sdk 0.123.0 types (BetaToolUnion, MessageCreateParams, BetaContentBlockParam). */
export const MODEL_GRANTS = [
  {
    grant: "web-search",
    why: "the provider searches the web for the session and hands it the results",
    toolTypes: ["web_search_"],
    fields: [],
    blocks: ["server_tool_use", "web_search_tool_result"],
    sources: [],
    betas: ["web-search-2025-03-05"],
  },
  {
    grant: "web-fetch",
    why: "the provider fetches any URL the session names: a way out to any host, and a way in for any content",
    toolTypes: ["web_fetch_"],
    fields: [],
    blocks: ["server_tool_use", "web_fetch_tool_result"],
    sources: [],
    betas: ["web-fetch-2025-09-10"],
  },
  {
    grant: "code-execution",
    why: "the provider runs the session's code in a container of its own, with files (Files API, container_upload) and skills",
    toolTypes: ["code_execution_", "bash_code_execution", "text_editor_code_execution"],
    fields: ["container"],
    blocks: [
      "server_tool_use",
      "code_execution_tool_result",
      "bash_code_execution_tool_result",
      "text_editor_code_execution_tool_result",
      "container_upload",
    ],
    sources: [],
    betas: ["code-execution-2025-05-22", "code-execution-2025-08-25", "skills-2025-10-02"],
  },
  {
    grant: "mcp-connector",
    why: "the provider connects to remote MCP servers at URLs the session gives (mcp_servers), with tokens it gives",
    toolTypes: ["mcp_toolset"],
    fields: ["mcp_servers"],
    blocks: ["mcp_tool_use", "mcp_tool_result"],
    sources: [],
    betas: ["mcp-client-2025-04-04", "mcp-client-2025-11-20"],
  },
  {
    grant: "url-sources",
    why: "the provider downloads an image or PDF from a URL the session names",
    toolTypes: [],
    fields: [],
    blocks: [],
    sources: ["url"],
    betas: [],
  },
  {
    grant: "file-sources",
    why: "an image or document by Files API id: files stored with the provider, outside what the session's sandbox holds",
    toolTypes: [],
    fields: [],
    blocks: [],
    sources: ["file"],
    betas: ["files-api-2025-04-14"],
  },
] as const satisfies readonly GrantRow[];

export type ModelGrant = (typeof MODEL_GRANTS)[number]["grant"];

/** What a set of grants admits beyond the proxy's own tables. No grant admits nothing. */
export type Admitted = { toolTypes: string[]; fields: string[]; blocks: string[]; sources: string[]; betas: string[] };

export function admittedBy(grants: readonly ModelGrant[]): Admitted {
  const rows: readonly GrantRow[] = MODEL_GRANTS.filter((g) => grants.includes(g.grant));
  const all = (k: keyof Admitted) => [...new Set(rows.flatMap((r) => r[k]))];
  return {
    toolTypes: all("toolTypes"),
    fields: all("fields"),
    blocks: all("blocks"),
    sources: all("sources"),
    betas: all("betas"),
  };
}

/** The grants that would admit a value, for a refusal's message ("the grant web-fetch admits it"). */
export function grantsAdmitting(kind: keyof Admitted, value: string): ModelGrant[] {
  return MODEL_GRANTS.filter((g) =>
    kind === "toolTypes"
      ? g.toolTypes.some((p) => value.startsWith(p))
      : (g[kind] as readonly string[]).includes(value),
  ).map((g) => g.grant);
}
