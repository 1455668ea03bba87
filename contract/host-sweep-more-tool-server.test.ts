// The runner's tool socket in-process: the errors nothing may leave unheard in pid 1. A client that
// resets its connection makes the server's end of it fail (ECONNRESET), and an error the server
// itself emits after listening (an accept error, the way node reports one) is heard too: neither
// becomes an uncaught exception, and the server goes on answering.
import { connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ToolSocketBounds } from "../src/core/runner/bounds.ts";
import type { ToolRoute } from "../src/core/runner/tool-call.ts";
import { serveToolSocket, type ToolForward } from "../src/host/runner/tool-server.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("tool-server-more");
afterAll(() => scratch.remove());
let n = 0;

const BOUNDS: ToolSocketBounds = { lineBytes: 4096, depth: 8, argsBytes: 1024, connections: 4, pending: 8 };
const ROUTES = new Map<string, ToolRoute>([["send_message", { broker: "message.send" }]]);
const req = (id: unknown, args: unknown = {}) => JSON.stringify({ id, tool: "send_message", args }) + "\n";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every uncaught exception while a test runs: pid 1 would die of any of them. */
const uncaught: Error[] = [];
const monitor = (e: Error) => void uncaught.push(e);
process.on("uncaughtExceptionMonitor", monitor);
afterAll(() => void process.off("uncaughtExceptionMonitor", monitor));
afterEach(() => void uncaught.splice(0));

async function until(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(2);
  return cond();
}

async function serve(forward: ToolForward): Promise<{ path: string; server: Server; sockets: Socket[] }> {
  const path = join(scratch.root, `m${n++}.sock`);
  const server = await serveToolSocket({ path }, ROUTES, null, forward, BOUNDS);
  // The server's own end of each connection, in the order they came (after the server's handler).
  const sockets: Socket[] = [];
  server.on("connection", (s: Socket) => void sockets.push(s));
  return { path, server, sockets };
}

/** One request on a fresh connection: its answer line. */
async function ask(path: string, id: number): Promise<unknown> {
  const k = connect(path);
  k.on("error", () => {});
  let buf = "";
  k.setEncoding("utf8");
  k.on("data", (d: string) => (buf += d));
  k.write(req(id));
  await until(() => buf.includes("\n"));
  k.destroy();
  return buf === "" ? null : JSON.parse(buf.slice(0, buf.indexOf("\n")));
}

describe("the tool socket hears its errors", () => {
  it("a client that resets its connection under an unread answer: the server's end fails, is heard, and closes", async () => {
    const s = await serve(async () => ({ kind: "ok", result: "x".repeat(64 * 1024) }));
    try {
      const c = connect(s.path);
      c.on("error", () => {});
      await new Promise<void>((ok) => c.on("connect", () => ok()));
      c.pause();
      c.write(req(1));
      expect(await until(() => s.sockets.length === 1)).toBe(true);
      const end = s.sockets[0]!;
      let closedWithError: boolean | null = null;
      end.on("close", (hadError: boolean) => (closedWithError = hadError));
      // The whole answer is in the kernel's buffers, unread by the client.
      expect(await until(() => end.bytesWritten > 64 * 1024 && end.writableLength === 0)).toBe(true);
      c.destroy();
      expect(await until(() => closedWithError !== null), "the server's end closed").toBe(true);
      expect(closedWithError, "it closed on an error (the reset)").toBe(true);
      await sleep(10);
      expect(uncaught, "no uncaught exception").toEqual([]);
      expect(await ask(s.path, 2), "the server still answers").toEqual({
        id: 2,
        ok: true,
        result: "x".repeat(64 * 1024),
      });
    } finally {
      s.server.close();
    }
  });

  it("an error the server emits after listening is heard, and the server goes on answering", async () => {
    const s = await serve(async () => ({ kind: "ok", result: "fine" }));
    try {
      const accept = Object.assign(new Error("accept ENFILE"), { code: "ENFILE", syscall: "accept" });
      let heard: boolean | "thrown";
      try {
        heard = s.server.emit("error", accept);
      } catch {
        heard = "thrown";
      }
      expect(heard, "a listener heard it").toBe(true);
      expect(await ask(s.path, 3)).toEqual({ id: 3, ok: true, result: "fine" });
    } finally {
      s.server.close();
    }
  });
});
