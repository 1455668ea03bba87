import { describe, expect, it } from "vitest";
import { BUNDLE_VERSION } from "../src/core/bundle/plan-bundle.ts";
import { renderTools, selectTools } from "../src/core/tools/catalog.ts";
import {
  MAX_ANSWER_BYTES,
  failClosed,
  readToolAnswer,
  renderToolRequest,
  type SocketProblem,
} from "../src/core/tools/tool-wire.ts";
import { TOOLS_FILE_VERSION, findTool, notATypedTool, parseToolsFile } from "../src/core/tools/tools-file.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";

const answer = (v: unknown) => JSON.stringify(v);

describe("the tool socket's wire format, as the typed-tool clients speak it", () => {
  it("a request is one line: id, the catalog name and the args object", () => {
    const line = renderToolRequest(7, "send_message", { to: "acme-pm", body: "hi\nthere" });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1).includes("\n"), "one line: a newline inside args is escaped").toBe(false);
    expect(JSON.parse(line)).toEqual({ id: 7, tool: "send_message", args: { to: "acme-pm", body: "hi\nthere" } });
  });
  it("args that are not an object go as {}: the runner refuses them by schema, not by a bad request", () => {
    for (const args of [undefined, null, [1], "x", 3])
      expect(JSON.parse(renderToolRequest(1, "read_task", args)).args).toEqual({});
  });
  it("ok: true with this request's id reads as the result's JSON", () => {
    expect(readToolAnswer(answer({ id: 3, ok: true, result: { id: "m-1" } }), 3)).toEqual({
      ok: true,
      text: '{"id":"m-1"}',
    });
    expect(readToolAnswer(answer({ id: 3, ok: true, result: null }), 3)).toEqual({ ok: true, text: "null" });
    expect(readToolAnswer(answer({ id: 3, ok: true, result: "sent" }), 3)).toEqual({ ok: true, text: '"sent"' });
  });
  it("ok: false reads as its error verbatim, with this id or null", () => {
    expect(readToolAnswer(answer({ id: 3, ok: false, error: "refused: acme-x is not an instance" }), 3)).toEqual({
      ok: false,
      text: "refused: acme-x is not an instance",
    });
    expect(readToolAnswer(answer({ id: null, ok: false, error: "bad request: not JSON" }), 3)).toEqual({
      ok: false,
      text: "bad request: not JSON",
    });
  });
  it("an answer without a literal ok: true is never a success", () => {
    for (const a of [
      { id: 3, result: { id: "m-1" } },
      { id: 3, ok: "true", result: 1 },
      { id: 3, ok: 1, result: 1 },
      { id: 3, ok: null, result: 1 },
    ]) {
      const out = readToolAnswer(answer(a), 3);
      expect(out.ok, `${JSON.stringify(a)} is not a success`).toBe(false);
      expect(out.text).toMatch(
        /^refused: the runner's tool socket sent an answer that is not a tool answer \(ok is neither true nor false\)/,
      );
    }
  });
  it("a success for another request is not this call's success", () => {
    for (const id of [4, "3", null, undefined]) {
      const out = readToolAnswer(answer({ id, ok: true, result: { id: "m-1" } }), 3);
      expect(out.ok, `an answer to ${JSON.stringify(id)} is not the answer to 3`).toBe(false);
      expect(out.text).toContain("not 3");
    }
  });
  it("garbled answers fail closed and say so", () => {
    const cases: Array<[string, RegExp]> = [
      ["not json", /not JSON/],
      ["[1,2]", /not a JSON object/],
      ['"ok"', /not a JSON object/],
      [answer({ id: 3, ok: true }), /ok is true without a result/],
      [answer({ id: 3, ok: false }), /ok is false without an error text/],
      [answer({ id: 3, ok: false, error: "" }), /ok is false without an error text/],
      [answer({ id: 3, ok: false, error: { code: "refused" } }), /ok is false without an error text/],
    ];
    for (const [line, why] of cases) {
      const out = readToolAnswer(line, 3);
      expect(out.ok, line).toBe(false);
      expect(out.text, line).toMatch(/^refused: the runner's tool socket /);
      expect(out.text, line).toMatch(why);
    }
  });
  const PROBLEMS: SocketProblem[] = [
    { kind: "no-socket-env", variable: "MOSAIC_TOOL_SOCKET" },
    { kind: "connect", path: "<run>/tools.sock", code: "ENOENT" },
    { kind: "connect", path: "<run>/tools.sock", code: "ECONNREFUSED" },
    { kind: "connect", path: "<run>/tools.sock", code: "EACCES" },
    { kind: "connect", path: "<run>/tools.sock", code: "ENOTSOCK" },
    { kind: "connect", path: "<run>/tools.sock", code: "EMFILE" },
    { kind: "timeout", ms: 30_000 },
    { kind: "hang-up" },
    { kind: "too-long" },
    { kind: "garbled", why: "not JSON" },
  ];
  it("every way a call can fail is a refusal that says the call did not happen", () => {
    for (const p of PROBLEMS) {
      const out = failClosed(p);
      expect(out.ok, `${p.kind} is a failure`).toBe(false);
      expect(out.text, p.kind).toMatch(/^refused: /);
      expect(out.text, p.kind).toMatch(/; the call (was not made|did not complete)$/);
    }
    expect(failClosed({ kind: "too-long" }).text).toContain(String(MAX_ANSWER_BYTES));
  });
  it("golden: what the model sees for each failure", async () => {
    await matchGolden(
      "tools",
      "fail-closed",
      "txt",
      "the model's text when a typed tool call cannot be made or trusted: problem → text",
      PROBLEMS.map((p) => `${p.kind}${"code" in p ? ` ${p.code}` : ""} → ${failClosed(p).text}`).join("\n"),
    );
  });
});

describe("tools.json as the typed-tool clients read it", () => {
  const planned = () => ({
    version: BUNDLE_VERSION,
    tools: renderTools(selectTools(["message.send"]), (n) => `mcp__mosaic__${n}`) as Array<Record<string, unknown>>,
  });
  it("reads the bundle's own tools.json, entry for entry", () => {
    expect(TOOLS_FILE_VERSION).toBe(BUNDLE_VERSION);
    const file = parseToolsFile(JSON.stringify(planned()));
    expect("tools" in file && file.tools.map((t) => `${t.name} ${t.harnessName}`)).toEqual([
      "read_messages mcp__mosaic__read_messages",
      "read_task mcp__mosaic__read_task",
      "list_tasks mcp__mosaic__list_tasks",
      "raise_decision mcp__mosaic__raise_decision",
      "send_message mcp__mosaic__send_message",
    ]);
    if ("tools" in file) expect(file.tools[4]!.inputSchema).toEqual(planned().tools[4]!.inputSchema);
  });
  it("one entry out of shape, and the whole file serves no tool", () => {
    const bad: Array<[(d: ReturnType<typeof planned>) => unknown, RegExp]> = [
      [() => "{", /not JSON/],
      [(d) => ({ ...d, version: 2 }), /version 2 is not 1/],
      [(d) => ({ ...d, tools: {} }), /tools is not a list/],
      [
        (d) => ({ ...d, tools: [...d.tools, { ...d.tools[0], name: "Send-Message" }] }),
        /tools\[5\]: name "Send-Message" is not a catalog name/,
      ],
      [(d) => ({ ...d, tools: [...d.tools, d.tools[0]] }), /tools\[5\]: read_messages is listed twice/],
      [
        (d) => ({ ...d, tools: [{ ...d.tools[0], inputSchema: { type: "string" } }] }),
        /tools\[0\]: inputSchema is not a JSON Schema of an object/,
      ],
      [(d) => ({ ...d, tools: [{ ...d.tools[0], harnessName: 3 }] }), /tools\[0\]: harnessName/],
      [(d) => ({ ...d, tools: [{ ...d.tools[0], description: null }] }), /tools\[0\]: description/],
    ];
    for (const [mutate, why] of bad) {
      const out = mutate(planned());
      const file = parseToolsFile(typeof out === "string" ? out : JSON.stringify(out));
      expect("problem" in file, String(why)).toBe(true);
      if ("problem" in file) expect(file.problem).toMatch(why);
    }
  });
  it("finds a tool by its catalog name only, and refuses the rest in the runner's words", () => {
    const file = parseToolsFile(JSON.stringify(planned()));
    if (!("tools" in file)) throw new Error(file.problem);
    expect(findTool(file.tools, "send_message")?.name).toBe("send_message");
    expect(findTool(file.tools, "mcp__mosaic__send_message")).toBeNull();
    expect(findTool(file.tools, "launch")).toBeNull();
    expect(notATypedTool("launch")).toBe("refused: launch is not one of this session's typed tools");
  });
});
