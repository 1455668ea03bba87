import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_VERSION } from "../src/core/bundle/plan-bundle.ts";
import { renderTools, selectTools } from "../src/core/tools/catalog.ts";
import { pi } from "../src/core/route/pi.ts";
import { parseToolsFile, type ToolsFile } from "../src/core/tools/tools-file.ts";
import { registerTypedTools } from "../src/host/pi-typed-tools.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { ToolSocketStandIn, type StandInAnswer, type ToolRequest } from "../src/conformance/stand-ins/tool-socket.ts";

// registerTypedTools against a recording registerTool (Pi's own loader runs it in
// live/typed-tools.test.ts) and a real tool socket.
type Registered = {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  execute: (id: string, params: unknown) => Promise<{ content: Array<{ type: string; text: string }> }>;
};

let scratch: ReturnType<typeof makeScratch>;
let stand: ToolSocketStandIn;
let reply: (req: ToolRequest) => StandInAnswer = () => ({ ok: true, result: null });
const file = parseToolsFile(
  JSON.stringify({ version: BUNDLE_VERSION, tools: renderTools(selectTools(["message.send"]), pi.typedToolName) }),
);

function register(f: ToolsFile, socket: string | undefined): { tools: Registered[]; names: string[]; log: string[] } {
  const tools: Registered[] = [];
  const log: string[] = [];
  const names = registerTypedTools(
    { registerTool: (t) => void tools.push(t as unknown as Registered) },
    f,
    socket,
    (l) => log.push(l),
  );
  return { tools, names, log };
}

beforeAll(async () => {
  scratch = makeScratch("pi-tools");
  stand = new ToolSocketStandIn(join(scratch.root, "tools.sock"), (r) => reply(r));
  await stand.start();
});
afterAll(async () => {
  await stand?.stop();
  scratch?.remove();
});

describe("Pi's typed tools", () => {
  it("registers each tools.json entry under its harness name, with its JSON Schema as parameters", () => {
    if (!("tools" in file)) throw new Error(file.problem);
    const { tools, names, log } = register(file, stand.path);
    expect(names).toEqual(["read_messages", "read_task", "list_tasks", "raise_decision", "send_message"]);
    expect(tools.map((t) => t.name)).toEqual(names);
    expect(tools.map((t) => t.parameters)).toEqual(file.tools.map((t) => t.inputSchema));
    expect(tools.map((t) => t.description)).toEqual(file.tools.map((t) => t.description));
    expect(log).toEqual([]);
  });
  it("a call goes to the tool socket by its catalog name; the model sees the result's JSON", async () => {
    reply = () => ({ ok: true, result: { id: "m-1" } });
    const entry = {
      name: "send_message",
      harnessName: "mosaic_send_message",
      description: "d",
      inputSchema: { type: "object" },
    };
    const { tools } = register({ tools: [entry] }, stand.path);
    const before = stand.requests.length;
    expect(tools[0]!.name).toBe("mosaic_send_message");
    expect(await tools[0]!.execute("call-1", { to: "acme-pm", body: "hello" })).toEqual({
      content: [{ type: "text", text: '{"id":"m-1"}' }],
      details: {},
    });
    expect(stand.requests.slice(before)).toEqual([
      { id: expect.any(Number), tool: "send_message", args: { to: "acme-pm", body: "hello" } },
    ]);
  });
  it("a refusal is thrown, so Pi shows its text verbatim as an error result", async () => {
    reply = () => ({ ok: false, error: "refused: acme-x is not an instance this role may message" });
    const { tools } = register(file, stand.path);
    const send = tools.find((t) => t.name === "send_message")!;
    await expect(
      send.execute("call-2", { to: "acme-x", body: "hello" }),
      "a refusal never reads as a result",
    ).rejects.toThrow(/^refused: acme-x is not an instance this role may message$/);
  });
  it("a tool socket that is not there: thrown, fail closed", async () => {
    const gone = join(scratch.root, "gone.sock");
    const { tools } = register(file, gone);
    await expect(tools[0]!.execute("call-3", {})).rejects.toThrow(
      `refused: the runner's tool socket ${gone} does not exist (the runner is not serving it); the call was not made`,
    );
  });
  it("a tools file that could not be read registers nothing and says why", () => {
    const { tools, names, log } = register({ problem: "MOSAIC_TOOLS_FILE is not set" }, stand.path);
    expect(tools).toEqual([]);
    expect(names).toEqual([]);
    expect(log).toEqual(["mosaic extension: no typed tools: MOSAIC_TOOLS_FILE is not set"]);
  });
});
