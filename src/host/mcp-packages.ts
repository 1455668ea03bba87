/**
 * The packages Claude Code's MCP server (src/host/mcp-server.ts) loads, each bound read-only into
 * a Claude Code sandbox, which has no node_modules otherwise. baselines/mcp.json records the set as
 * measured by a load trace; contract/runtime.test.ts holds this table to it.
 */
export const MCP_SERVER_PACKAGES: readonly { name: string; why: string }[] = [
  { name: "@modelcontextprotocol/sdk", why: "the MCP server and its stdio transport" },
  { name: "ajv", why: "the SDK's Server imports its JSON Schema validator" },
  { name: "ajv-formats", why: "loaded by the SDK with ajv" },
  { name: "fast-deep-equal", why: "an ajv dependency" },
  { name: "fast-uri", why: "an ajv dependency" },
  { name: "json-schema-traverse", why: "an ajv dependency" },
  { name: "zod", why: "the SDK's message schemas" },
  { name: "zod-to-json-schema", why: "loaded by the SDK with zod" },
];
