// callTool's edges against a plain Unix socket server the test scripts byte by byte: answers split
// over writes, the size bound at its edge, a reset after the request, fresh ids, and what a settled
// call leaves behind (no timer, no connection).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES } from "../src/core/tools/tool-wire.ts";
import { callTool } from "../src/host/tool-client.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-tools-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Runner = { path: string; requests: Array<{ id: number; tool: string; args: unknown }>; closed: number };
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

let n = 0;
/** A runner stand-in: `answer` gets each request line, parsed, and the connection to write to. */
async function runner(answer: (req: { id: number }, s: Socket) => void): Promise<Runner> {
  const r: Runner = { path: join(root, `t${n++}.sock`), requests: [], closed: 0 };
  const server = createServer((s) => {
    let got = "";
    s.on("close", () => r.closed++);
    s.on("error", () => {});
    s.on("data", (d) => {
      got += d.toString("utf8");
      const nl = got.indexOf("\n");
      if (nl === -1) return;
      const req = JSON.parse(got.slice(0, nl)) as { id: number; tool: string; args: unknown };
      r.requests.push(req);
      answer(req, s);
    });
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(r.path, ok));
  return r;
}

const line = (id: number, result: unknown) => `${JSON.stringify({ id, ok: true, result })}\n`;
const timers = () => process.getActiveResourcesInfo().filter((x) => x === "Timeout").length;

describe("callTool reads one answer line", () => {
  it("an answer split over several writes is read whole, and what follows its newline is ignored", async () => {
    const r = await runner((req, s) => {
      const all = line(req.id, { id: "m-1", body: "x".repeat(100) });
      s.write(all.slice(0, 10));
      setTimeout(() => s.write(all.slice(10, 60)), 2);
      setTimeout(() => s.write(`${all.slice(60)}not json after the line\n`), 4);
    });
    expect(await callTool(r.path, "send_message", { to: "a" })).toEqual({
      ok: true,
      text: JSON.stringify({ id: "m-1", body: "x".repeat(100) }),
    });
  });

  it("each call sends a request with the next id", async () => {
    const r = await runner((req, s) => s.write(line(req.id, null)));
    await callTool(r.path, "read_task", {});
    await callTool(r.path, "read_task", {});
    const [a, b] = r.requests;
    expect(b!.id).toBe(a!.id + 1);
  });

  it("an answer of exactly the bound is judged as an answer, one byte more is too long", async () => {
    const at = await runner((_req, s) => s.write(`${"a".repeat(MAX_ANSWER_BYTES)}\n`));
    const atOut = await callTool(at.path, "read_task", {}, { timeoutMs: 5_000 });
    expect(atOut.ok).toBe(false);
    expect(atOut.text).toMatch(/not a tool answer \(not JSON\)/);
    const over = await runner((_req, s) => s.write(`${"a".repeat(MAX_ANSWER_BYTES + 1)}\n`));
    const overOut = await callTool(over.path, "read_task", {}, { timeoutMs: 5_000 });
    expect(overOut.text).toMatch(/longer than 1048576 bytes/);
  });

  it("a runner that drops the connection while the request is sent: the call did not complete", async () => {
    const path = join(root, "drops.sock");
    const server = createServer((s) => s.destroy());
    servers.push(server);
    await new Promise<void>((ok) => server.listen(path, ok));
    // A request far larger than the socket's buffer: its write meets the closed end (EPIPE).
    expect(await callTool(path, "read_task", { pad: "p".repeat(4 * 1024 * 1024) })).toEqual({
      ok: false,
      text: "refused: the runner's tool socket closed the connection without an answer; the call did not complete",
    });
  });

  it("without a timeout given, a runner that takes a while still answers in time", async () => {
    const r = await runner((req, s) => setTimeout(() => s.write(line(req.id, 7)), 20));
    expect(await callTool(r.path, "read_task", {})).toEqual({ ok: true, text: "7" });
  });

  it("a settled call leaves no timer and no connection behind", async () => {
    const r = await runner((req, s) => s.write(line(req.id, 1)));
    const before = timers();
    const out = callTool(r.path, "read_task", {});
    expect(timers(), "the call's timeout runs while it waits").toBe(before + 1);
    expect(await out).toEqual({ ok: true, text: "1" });
    expect(timers(), "and is cleared when it settles").toBe(before);
    for (let i = 0; i < 200 && r.closed === 0; i++) await new Promise((ok) => setImmediate(ok));
    expect(r.closed, "the client closed its connection").toBe(1);
  });
});
