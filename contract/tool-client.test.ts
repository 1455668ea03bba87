import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callTool } from "../src/host/tool-client.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { ToolSocketStandIn, type StandInAnswer, type ToolRequest } from "../src/conformance/stand-ins/tool-socket.ts";
import { createConnection } from "node:net";

// callTool against a real Unix socket: the stand-in answers each request from a function the test
// sets, so every way a runner can answer, or fail to, is one line here.
let scratch: ReturnType<typeof makeScratch>;
let stand: ToolSocketStandIn;
let reply: (req: ToolRequest) => StandInAnswer = () => ({ ok: true, result: null });

beforeAll(async () => {
  scratch = makeScratch("tool-client");
  stand = new ToolSocketStandIn(join(scratch.root, "tools.sock"), (r) => reply(r));
  await stand.start();
});
afterAll(async () => {
  await stand?.stop();
  scratch?.remove();
});

const call = (tool = "send_message", args: unknown = { to: "acme-pm", body: "hi" }, timeoutMs = 2_000) =>
  callTool(stand.path, tool, args, { timeoutMs });

describe("callTool over a real Unix socket", () => {
  it("sends the catalog name and args, and a success reads as the result's JSON", async () => {
    reply = () => ({ ok: true, result: { id: "m-1" } });
    const before = stand.requests.length;
    expect(await call()).toEqual({ ok: true, text: '{"id":"m-1"}' });
    expect(stand.requests.slice(before)).toEqual([
      { id: expect.any(Number), tool: "send_message", args: { to: "acme-pm", body: "hi" } },
    ]);
  });
  it("a refusal reaches the caller verbatim, as a failure", async () => {
    reply = () => ({ ok: false, error: "refused: acme-x is not an instance this role may message" });
    expect(await call()).toEqual({ ok: false, text: "refused: acme-x is not an instance this role may message" });
  });
  it("no MOSAIC_TOOL_SOCKET: refused, nothing sent", async () => {
    const before = stand.requests.length;
    for (const path of [undefined, ""]) {
      const out = await callTool(path, "send_message", {});
      expect(out.ok).toBe(false);
      expect(out.text).toBe(
        "refused: MOSAIC_TOOL_SOCKET is not set, so there is no runner's tool socket to call; the call was not made",
      );
    }
    expect(stand.requests.length).toBe(before);
  });
  it("a socket that does not exist: refused, the call was not made", async () => {
    const missing = join(scratch.root, "gone.sock");
    expect(await callTool(missing, "send_message", {})).toEqual({
      ok: false,
      text: `refused: the runner's tool socket ${missing} does not exist (the runner is not serving it); the call was not made`,
    });
  });
  it("a path no one listens on: refused, the call was not made", async () => {
    const dead = join(scratch.root, "dead.sock");
    writeFileSync(dead, "");
    const out = await callTool(dead, "send_message", {});
    expect(out.ok).toBe(false);
    expect(out.text).toBe(
      `refused: the runner's tool socket ${dead} refused the connection (no runner is listening); the call was not made`,
    );
  });
  it("a runner that never answers: refused after the timeout, and the call never hangs", async () => {
    reply = () => ({ silent: true });
    const out = await Promise.race([
      call("send_message", {}, 150),
      new Promise((ok) => setTimeout(() => ok("hung"), 3_000)),
    ]);
    expect(out, "the timeout ends the call").not.toBe("hung");
    expect(out).toEqual({
      ok: false,
      text: "refused: the runner's tool socket did not answer within 150 ms; the call did not complete",
    });
  });
  it("a runner that hangs up without an answer: refused", async () => {
    reply = () => ({ hangUp: true });
    expect(await call()).toEqual({
      ok: false,
      text: "refused: the runner's tool socket closed the connection without an answer; the call did not complete",
    });
  });
  it("garbage, bad UTF-8, an over-long line or another request's answer: refused, never a success", async () => {
    const cases: Array<[StandInAnswer, RegExp]> = [
      [{ raw: "sent!\n" }, /not a tool answer \(not JSON\)/],
      [{ raw: Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]) }, /not a tool answer \(not UTF-8\)/],
      [{ raw: '{"id": 999999, "ok": true, "result": {"id": "m-1"}}\n' }, /it answers request 999999/],
      [{ raw: '{"ok": true, "result": {"id": "m-1"}}\n' }, /it answers request null/],
      [{ raw: '{"id": 1, "result": {"id": "m-1"}}\n' }, /ok is neither true nor false/],
      [{ raw: "a".repeat(1024 * 1024 + 10) }, /longer than 1048576 bytes/],
    ];
    for (const [a, why] of cases) {
      reply = () => a;
      const out = await call();
      expect(out.ok, String(why)).toBe(false);
      expect(out.text, String(why)).toMatch(/^refused: the runner's tool socket /);
      expect(out.text).toMatch(why);
    }
  });
});

describe("the tool socket stand-in speaks the protocol", () => {
  it("answers several requests on one connection in order, and a malformed line with bad request", async () => {
    reply = (r) => ({ ok: true, result: r.args });
    const lines = await new Promise<string[]>((ok, fail) => {
      const s = createConnection(stand.path);
      let got = "";
      s.on("error", fail);
      s.on("data", (d) => {
        got += d.toString("utf8");
        if (got.split("\n").length > 4) {
          s.destroy();
          ok(got.split("\n").slice(0, 4));
        }
      });
      s.write(
        '{"id":"a","tool":"read_task","args":{"task":"1"}}\n{"id":"b","tool":"read_task","args":{"task":"2"}}\nnot json\n{"id":"c","tool":"read_task","args":[]}\n',
      );
    });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { id: "a", ok: true, result: { task: "1" } },
      { id: "b", ok: true, result: { task: "2" } },
      { id: null, ok: false, error: "bad request: not JSON" },
      { id: "c", ok: false, error: "bad request: args is not an object" },
    ]);
  });
});
