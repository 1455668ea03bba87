import { describe, expect, it } from "vitest";
import { TOOL_CATALOG, actionsWithoutTool, describeVia, renderTools, selectTools } from "../src/core/tools/catalog.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";

const EVERY_SESSION = ["read_messages", "read_task", "list_tasks", "raise_decision"];

describe("typed tool catalog (seed 000, Typed tools)", () => {
  it("names are unique and valid MCP tool names; each tool has one way to the bus and a one-line description", () => {
    const names = TOOL_CATALOG.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of TOOL_CATALOG) {
      expect(t.name, t.name).toMatch(/^[a-z][a-z_]*$/);
      expect(Object.keys(t.via), t.name).toHaveLength(1);
      expect(t.description, t.name).toMatch(/^[A-Z].*\.$/);
      expect(t.description.includes("\n"), t.name).toBe(false);
    }
  });
  it("only launch goes to the launch socket, and only an instance holding launch gets it", () => {
    expect(TOOL_CATALOG.filter((t) => "launchSocket" in t.via).map((t) => t.name)).toEqual(["launch"]);
    expect(selectTools(["task.update"]).map((t) => t.name)).not.toContain("launch");
    expect(selectTools(["launch"]).map((t) => t.name)).toContain("launch");
  });
  it("a tool an action grants calls that action's verb; the tools every session gets call only reads and decision.raise", () => {
    for (const t of TOOL_CATALOG) {
      if ("action" in t.grant)
        expect(t.via, t.name).toEqual(
          t.grant.action === "launch" ? { launchSocket: true } : { broker: t.grant.action },
        );
    }
    // Hand-typed: what a session holding no action can reach on the bus.
    expect(selectTools([]).map((t) => [t.name, t.via])).toEqual([
      ["read_messages", { broker: "message.list" }],
      ["read_task", { broker: "task.get" }],
      ["list_tasks", { broker: "task.list" }],
      ["raise_decision", { broker: "decision.raise" }],
    ]);
  });
  it("a session with no actions gets the reads and raise_decision only", () => {
    expect(selectTools([]).map((t) => t.name)).toEqual(EVERY_SESSION);
  });
  it("each held action with a tool adds exactly that tool; the others are listed", () => {
    expect(selectTools(["message.send", "payroll.run"]).map((t) => t.name)).toEqual([...EVERY_SESSION, "send_message"]);
    expect(actionsWithoutTool(["payroll.run", "message.send", "a.b", "payroll.run"])).toEqual(["a.b", "payroll.run"]);
  });
  it("tools.json entries carry a strict JSON Schema", () => {
    const [entry] = renderTools(selectTools(["task.comment"]).slice(-1), (n) => `mcp__mosaic__${n}`) as {
      harnessName: string;
      inputSchema: { additionalProperties: boolean; required: string[] };
    }[];
    expect(entry!.harnessName).toBe("mcp__mosaic__comment_task");
    expect(entry!.inputSchema.additionalProperties).toBe(false);
    expect(entry!.inputSchema.required).toEqual(["task", "body"]);
  });
  it("golden", async () => {
    await matchGolden(
      "tools",
      "catalog",
      "txt",
      "typed tool catalog: name | way to the bus | who gets it | description",
      [
        "name | via | grant | description",
        ...TOOL_CATALOG.map(
          (t) =>
            `${t.name} | ${describeVia(t.via)} | ${"action" in t.grant ? `holds ${t.grant.action}` : `every session (${t.grant.every})`} | ${t.description}`,
        ),
      ].join("\n"),
    );
  });
});
