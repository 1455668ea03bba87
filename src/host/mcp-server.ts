// Claude Code's typed tools: the stdio MCP server `mosaic` (the bundle's mcp.json starts it). It
// lists exactly the entries of MOSAIC_TOOLS_FILE, with their JSON Schemas as they are, and forwards
// each call to the runner's tool socket (MOSAIC_TOOL_SOCKET). Claude Code names the tools
// mcp__mosaic__<name>; the socket takes <name>. A tools file it cannot read lists no tool.
//
// Its imports stay few: Claude Code's sandbox binds only the packages this file reaches
// (contract/mcp-server.test.ts pins them).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { findTool, notATypedTool, type ToolEntry } from "../core/tools/tools-file.ts";
import { readToolsFile } from "./read-tools-file.ts";
import { TOOL_SOCKET_ENV, callTool, type ToolOutcome } from "./tool-client.ts";

export const MCP_SERVER_NAME = "mosaic";
/** package.json's version (a contract test ties them). */
export const MCP_SERVER_VERSION = "0.1.0";

type CallFn = typeof callTool;

/** One tools/call: a tool tools.json does not list is refused here, before any socket call. */
export async function answerCall(
  tools: readonly ToolEntry[],
  socket: string | undefined,
  name: string,
  args: unknown,
  call: CallFn = callTool,
): Promise<ToolOutcome> {
  // safety: mcp-unlisted-tool-forwarded
  if (findTool(tools, name) === null) return { ok: false, text: notATypedTool(name) };
  return call(socket, name, args ?? {});
}

export function createMosaicServer(tools: readonly ToolEntry[], socket: string | undefined): Server {
  const server = new Server({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object" },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const outcome = await answerCall(tools, socket, req.params.name, req.params.arguments);
    return {
      content: [{ type: "text" as const, text: outcome.text }],
      isError: !outcome.ok, // safety: mcp-refusal-not-error
    };
  });
  return server;
}

async function main(): Promise<void> {
  const file = readToolsFile(process.env);
  if ("problem" in file) process.stderr.write(`mosaic mcp server: serving no typed tools: ${file.problem}\n`);
  const tools = "tools" in file ? file.tools : [];
  const server = createMosaicServer(tools, process.env[TOOL_SOCKET_ENV]);
  await server.connect(new StdioServerTransport());
}

if (import.meta.main) {
  main().catch((e: unknown) => {
    process.stderr.write(`mosaic mcp server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
