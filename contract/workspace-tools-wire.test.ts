// The edges of src/core/tools the generated sweep found untested: each garbled answer's exact text,
// every way tools.json is refused (word for word), and what the catalog hands a session. A client
// shows these texts to the model, so a changed word is a changed behaviour.
import { describe, expect, it } from "vitest";
import {
  actionsWithoutTool,
  describeVia,
  heldActions,
  renderTools,
  selectTools,
  TOOL_CATALOG,
} from "../src/core/tools/catalog.ts";
import { readToolAnswer, renderToolRequest } from "../src/core/tools/tool-wire.ts";
import { findTool, notATypedTool, parseToolsFile, type ToolEntry } from "../src/core/tools/tools-file.ts";

const line = (v: unknown) => JSON.stringify(v);
const garbled = (why: string) => ({
  ok: false,
  text: `refused: the runner's tool socket sent an answer that is not a tool answer (${why}); the call did not complete`,
});

describe("an answer line read as the model's text", () => {
  it("each garbled answer names what is wrong with it, in the full refusal", () => {
    expect(readToolAnswer("not json", 3)).toEqual(garbled("not JSON"));
    expect(readToolAnswer("[1]", 3)).toEqual(garbled("not a JSON object"));
    expect(readToolAnswer("null", 3)).toEqual(garbled("not a JSON object"));
    expect(readToolAnswer(line({ id: 3, ok: true }), 3)).toEqual(garbled("ok is true without a result"));
    expect(readToolAnswer(line({ id: 3, ok: false }), 3)).toEqual(garbled("ok is false without an error text"));
    expect(readToolAnswer(line({ id: 3, ok: false, error: "" }), 3)).toEqual(
      garbled("ok is false without an error text"),
    );
    expect(readToolAnswer(line({ ok: 1, result: 1 }), 3)).toEqual(garbled("ok is neither true nor false"));
  });

  it("a success for another request names that request, null when it has no id", () => {
    expect(readToolAnswer(line({ id: 4, ok: true, result: 1 }), 3)).toEqual(garbled("it answers request 4, not 3"));
    expect(readToolAnswer(line({ ok: true, result: 1 }), 3)).toEqual(garbled("it answers request null, not 3"));
    expect(readToolAnswer(line({ id: "3", ok: true, result: 1 }), 3)).toEqual(garbled('it answers request "3", not 3'));
  });

  it("a result of false is a success with id 0; an error with any id is the refusal itself", () => {
    expect(readToolAnswer(line({ id: 0, ok: true, result: false }), 0)).toEqual({ ok: true, text: "false" });
    expect(readToolAnswer(line({ id: 9, ok: false, error: "refused: no" }), 3)).toEqual({
      ok: false,
      text: "refused: no",
    });
  });

  it("a request's args go as given when they are an object, and as {} otherwise", () => {
    expect(renderToolRequest(2, "read_task", { task: "t-1" })).toBe(
      '{"id":2,"tool":"read_task","args":{"task":"t-1"}}\n',
    );
    expect(renderToolRequest(2, "read_task", null)).toBe('{"id":2,"tool":"read_task","args":{}}\n');
  });
});

describe("tools.json, refused whole for any entry out of shape", () => {
  const entry = (over: Record<string, unknown> = {}) => ({
    name: "send_message",
    harnessName: "mcp__mosaic__send_message",
    description: "Send a message.",
    inputSchema: { type: "object" },
    ...over,
  });
  const file = (tools: unknown, version: unknown = 1) => JSON.stringify({ version, tools });

  it("a text that is not JSON is refused with JSON.parse's own message", () => {
    // The message is node's JSON.parse's (V8's wording), read off it here rather than copied.
    let message = "";
    try {
      JSON.parse("{");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(parseToolsFile("{")).toEqual({ problem: `not JSON (${message})` });
  });

  it("the document: an object with version 1 and a tools list", () => {
    expect(parseToolsFile("[]")).toEqual({ problem: "not a JSON object" });
    expect(parseToolsFile("null")).toEqual({ problem: "not a JSON object" });
    expect(parseToolsFile('"tools"')).toEqual({ problem: "not a JSON object" });
    expect(parseToolsFile(JSON.stringify({ tools: [] }))).toEqual({ problem: "version null is not 1" });
    expect(parseToolsFile(file([], "1"))).toEqual({ problem: 'version "1" is not 1' });
    expect(parseToolsFile(JSON.stringify({ version: 1 }))).toEqual({ problem: "tools is not a list" });
    expect(parseToolsFile(file([]))).toEqual({ tools: [] });
  });

  it("each entry's fields, with the index of the first bad one", () => {
    const cases: Array<[unknown, string]> = [
      [null, "not an object"],
      ["send_message", "not an object"],
      [[entry()], "not an object"],
      [entry({ name: undefined }), "name null is not a catalog name"],
      [entry({ name: 7 }), "name 7 is not a catalog name"],
      [entry({ name: "9lives" }), 'name "9lives" is not a catalog name'],
      [entry({ name: "x".repeat(65) }), `name "${"x".repeat(65)}" is not a catalog name`],
      [entry({ name: "send message" }), 'name "send message" is not a catalog name'],
      [entry({ name: "send_message!" }), 'name "send_message!" is not a catalog name'],
      [entry({ name: "" }), 'name "" is not a catalog name'],
      [entry({ harnessName: "" }), "harnessName is not a name"],
      [entry({ harnessName: undefined }), "harnessName is not a name"],
      [entry({ description: 1 }), "description is not a text"],
      [entry({ inputSchema: null }), "inputSchema is not a JSON Schema of an object"],
      [entry({ inputSchema: [] }), "inputSchema is not a JSON Schema of an object"],
      [entry({ inputSchema: { type: "array" } }), "inputSchema is not a JSON Schema of an object"],
    ];
    for (const [bad, why] of cases)
      expect(parseToolsFile(file([entry({ name: "read_task" }), bad])), why).toEqual({ problem: `tools[1]: ${why}` });
  });

  it("names of one to 64 characters, digits and underscores after a lowercase letter, each once", () => {
    const names = ["a", "x".repeat(64), "a9_b"];
    const out = parseToolsFile(file(names.map((name) => entry({ name }))));
    expect("tools" in out && out.tools.map((t) => t.name)).toEqual(names);
    expect(parseToolsFile(file([entry(), entry({ harnessName: "other" })]))).toEqual({
      problem: "tools[1]: send_message is listed twice",
    });
  });

  it("an entry keeps its four fields and nothing else", () => {
    expect(parseToolsFile(file([entry({ via: { broker: "message.send" }, extra: 1 })]))).toEqual({
      tools: [
        {
          name: "send_message",
          harnessName: "mcp__mosaic__send_message",
          description: "Send a message.",
          inputSchema: { type: "object" },
        },
      ],
    });
  });

  it("a call names a tool by its catalog name; a refusal spells a name that is not a string as JSON", () => {
    const tools = [entry({ name: "read_task" }), entry()] as ToolEntry[];
    expect(findTool(tools, "send_message")).toEqual(entry());
    expect(findTool(tools, "launch")).toBeNull();
    expect(findTool([], undefined)).toBeNull();
    expect([3, null, { a: 1 }, "x y"].map(notATypedTool)).toEqual([
      "refused: 3 is not one of this session's typed tools",
      "refused: null is not one of this session's typed tools",
      'refused: {"a":1} is not one of this session\'s typed tools',
      "refused: x y is not one of this session's typed tools",
    ]);
  });
});

describe("the catalog a session is given", () => {
  it("held actions are the within-role ones, then the cross-role ones", () => {
    expect(heldActions({ withinRole: ["task.create", "message.send"], crossRole: ["launch"] })).toEqual([
      "task.create",
      "message.send",
      "launch",
    ]);
  });

  it("an instance holding every action gets the whole catalog, in catalog order", () => {
    const all = TOOL_CATALOG.flatMap((t) => ("action" in t.grant ? [t.grant.action] : []));
    expect(selectTools([...all].reverse()).map((t) => t.name)).toEqual([
      "read_messages",
      "read_task",
      "list_tasks",
      "raise_decision",
      "send_message",
      "create_task",
      "update_task",
      "comment_task",
      "launch",
    ]);
    expect(actionsWithoutTool(all)).toEqual([]);
    expect(actionsWithoutTool(["z.z", "read", "always", "a.a"])).toEqual(["a.a", "always", "read", "z.z"]);
    // An instance's actions are any non-empty text (src/core/launch/instance.ts): a tool every session
    // gets serves none of them, whatever the text (the sweep seeds this very one).
    expect(actionsWithoutTool(["Stryker was here", "message.send"])).toEqual(["Stryker was here"]);
  });

  it("each way to the bus reads as its verb or the launch socket", () => {
    expect(describeVia({ broker: "task.get" })).toBe("broker task.get");
    expect(describeVia({ launchSocket: true })).toBe("launch socket");
  });

  it("a tools.json entry: name, the harness's name for it, its way to the bus, description and schema", () => {
    const [launch] = renderTools(
      TOOL_CATALOG.filter((t) => t.name === "launch"),
      (n) => `h_${n}`,
    );
    expect(launch).toEqual({
      name: "launch",
      harnessName: "h_launch",
      via: { launchSocket: true },
      description: "Start a session of another role instance with a first message.",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          instance: { type: "string", minLength: 1, maxLength: 200 },
          message: { type: "string", minLength: 1, maxLength: 20_000 },
        },
        required: ["instance", "message"],
        additionalProperties: false,
      },
    });
  });
});
