import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_VERSION } from "../src/core/bundle/plan-bundle.ts";
import { renderTools, selectTools } from "../src/core/tools/catalog.ts";
import { MCP_SERVER_NAME, MCP_SERVER_VERSION } from "../src/host/mcp-server.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { loadedPackages } from "../src/conformance/processes/load-trace.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { ToolSocketStandIn, type StandInAnswer, type ToolRequest } from "../src/conformance/stand-ins/tool-socket.ts";

// The real server as Claude Code runs it: a child process on stdio, driven by the SDK's own client.
const SERVER = join(REPO_ROOT, "src/host/mcp-server.ts");
const BASELINE = JSON.parse(readFileSync(join(REPO_ROOT, "baselines/mcp.json"), "utf8")) as {
  sdk: { version: string; supportedProtocolVersions: string[] };
  runtimePackages: string[];
};

type Text = { content: Array<{ type: string; text: string }>; isError?: boolean };

let scratch: ReturnType<typeof makeScratch>;
let stand: ToolSocketStandIn;
let reply: (req: ToolRequest) => StandInAnswer = () => ({ ok: true, result: null });
const toolsFile = () => join(scratch.root, "bundle/tools.json");
const planned = {
  version: BUNDLE_VERSION,
  tools: renderTools(selectTools(["message.send"]), (n) => `mcp__mosaic__${n}`) as Array<{
    name: string;
    description: string;
    inputSchema: unknown;
  }>,
};

/** Starts the server with this environment and connects the SDK's client; stderr is collected. */
async function connect(
  env: Record<string, string>,
  node: string[] = [],
): Promise<{ client: Client; stderr: () => string; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...node, SERVER],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "contract-test", version: "1" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

let main: Awaited<ReturnType<typeof connect>>;
const trace = () => join(scratch.root, "loads.txt");

beforeAll(async () => {
  scratch = makeScratch("mcp");
  mkdirSync(join(scratch.root, "bundle"));
  writeFileSync(toolsFile(), JSON.stringify(planned, null, 2));
  stand = new ToolSocketStandIn(join(scratch.root, "tools.sock"), (r) => reply(r));
  await stand.start();
  main = await connect({ MOSAIC_TOOLS_FILE: toolsFile(), MOSAIC_TOOL_SOCKET: stand.path, LOAD_TRACE_OUT: trace() }, [
    "--import",
    join(REPO_ROOT, "src/conformance/processes/load-trace.ts"),
  ]);
});
afterAll(async () => {
  await main?.close();
  await stand?.stop();
  scratch?.remove();
});

describe("the mosaic MCP server, as a child process over stdio", () => {
  it("is named mosaic and lists exactly tools.json's entries, schemas as they are", async () => {
    expect(main.client.getServerVersion()).toEqual({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION });
    const { tools } = await main.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(planned.tools.map((t) => t.name));
    for (const [i, t] of tools.entries()) {
      expect(t.inputSchema, t.name).toEqual(planned.tools[i]!.inputSchema);
      expect(t.description, t.name).toBe(planned.tools[i]!.description);
    }
    expect(
      tools.some((t) => t.name.startsWith("mcp__")),
      "Claude Code adds the mcp__mosaic__ prefix itself",
    ).toBe(false);
  });
  it("a call goes to the tool socket by its catalog name, and the model sees the result's JSON", async () => {
    reply = () => ({ ok: true, result: { id: "m-1" } });
    const before = stand.requests.length;
    const r = (await main.client.callTool({
      name: "send_message",
      arguments: { to: "acme-pm", body: "hello" },
    })) as Text;
    expect(r).toEqual({ content: [{ type: "text", text: '{"id":"m-1"}' }], isError: false });
    expect(stand.requests.slice(before)).toEqual([
      { id: expect.any(Number), tool: "send_message", args: { to: "acme-pm", body: "hello" } },
    ]);
  });
  it("a refused call is an error whose text is the refusal", async () => {
    reply = () => ({ ok: false, error: "refused: acme-x is not an instance this role may message" });
    const r = (await main.client.callTool({
      name: "send_message",
      arguments: { to: "acme-x", body: "hello" },
    })) as Text;
    expect(r.isError, "a refusal is an error result").toBe(true);
    expect(r.content).toEqual([{ type: "text", text: "refused: acme-x is not an instance this role may message" }]);
  });
  it("a tool not in tools.json is refused with no socket call", async () => {
    reply = () => ({ ok: true, result: { launched: true } });
    const before = stand.requests.length;
    for (const name of ["launch", "mcp__mosaic__send_message", "Send_Message"]) {
      const r = (await main.client.callTool({ name, arguments: { instance: "acme-pm", message: "go" } })) as Text;
      expect(r.isError, name).toBe(true);
      expect(r.content[0]!.text).toBe(`refused: ${name} is not one of this session's typed tools`);
    }
    expect(stand.requests.length, "nothing reached the tool socket").toBe(before);
  });
  it("loads only the packages baselines/mcp.json lists, of the SDK version it pins", async () => {
    await main.client.listTools();
    const urls = readFileSync(trace(), "utf8").split("\n").filter(Boolean);
    expect(
      urls.some((u) => u.endsWith("/src/host/mcp-server.ts")),
      "the trace saw the server load",
    ).toBe(true);
    expect(loadedPackages(urls), "the packages Claude Code's sandbox must bind for the server").toEqual(
      BASELINE.runtimePackages,
    );
    const sdk = JSON.parse(
      readFileSync(join(REPO_ROOT, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
    ) as { version: string };
    expect(sdk.version).toBe(BASELINE.sdk.version);
    expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual(BASELINE.sdk.supportedProtocolVersions);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    expect(MCP_SERVER_VERSION, "serverInfo.version is the package's").toBe(pkg.version);
  });
  it("a tool socket that is not there: the call is refused, fail closed", async () => {
    const gone = join(scratch.root, "gone.sock");
    const s = await connect({ MOSAIC_TOOLS_FILE: toolsFile(), MOSAIC_TOOL_SOCKET: gone });
    try {
      const r = (await s.client.callTool({
        name: "send_message",
        arguments: { to: "acme-pm", body: "hello" },
      })) as Text;
      expect(r.isError, "a call that did not happen is never a success").toBe(true);
      expect(r.content).toEqual([
        {
          type: "text",
          text: `refused: the runner's tool socket ${gone} does not exist (the runner is not serving it); the call was not made`,
        },
      ]);
    } finally {
      await s.close();
    }
  });
  it("a tools file it cannot read: it starts, lists no tool, says why on stderr and refuses every call", async () => {
    const bad = join(scratch.root, "bundle/bad-tools.json");
    writeFileSync(bad, JSON.stringify({ ...planned, tools: [...planned.tools, { name: "x" }] }));
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /serving no typed tools: MOSAIC_TOOLS_FILE is not set/],
      [
        { MOSAIC_TOOLS_FILE: join(scratch.root, "bundle/missing.json") },
        /serving no typed tools: .*missing\.json: ENOENT/,
      ],
      [{ MOSAIC_TOOLS_FILE: bad }, /serving no typed tools: .*bad-tools\.json: tools\[5\]: harnessName is not a name/],
    ];
    const before = stand.requests.length;
    await Promise.all(
      cases.map(async ([env, why]) => {
        const s = await connect({ ...env, MOSAIC_TOOL_SOCKET: stand.path });
        try {
          expect((await s.client.listTools()).tools, String(why)).toEqual([]);
          const r = (await s.client.callTool({
            name: "send_message",
            arguments: { to: "acme-pm", body: "hello" },
          })) as Text;
          expect(r.isError).toBe(true);
          expect(r.content[0]!.text).toBe("refused: send_message is not one of this session's typed tools");
          for (let i = 0; i < 50 && !why.test(s.stderr()); i++) await new Promise((ok) => setTimeout(ok, 20));
          expect(s.stderr()).toMatch(why);
        } finally {
          await s.close();
        }
      }),
    );
    expect(stand.requests.length, "nothing reached the tool socket").toBe(before);
  });
});
