// The model proxy's remaining edges, in-process: a refusal's own headers, a compressed body, what
// goes up for a HEAD, a body that keeps coming after an early refusal, a request cut mid-body, and
// close() with a request still open.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveSweptProxy } from "./support/swept-proxy.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-proxy3-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CALL = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });

let n = 0;
async function world(limits: Record<string, number> = {}) {
  const seen: IncomingHttpHeaders[] = [];
  const up = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(req.headers);
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  const socket = join(root, `m${n++}.sock`);
  const p = serveSweptProxy({
    socket,
    upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
    credential: { header: "x-api-key", value: "real" },
    mode: "model-only",
    egressLog: join(root, `m${n}`, "egress.jsonl"),
    limits,
  });
  await p.listening;
  const close = async () => {
    await p.close();
    await new Promise<void>((r) => up.close(() => r()));
  };
  return { p, socket, seen, close };
}

type Reply = { status: number; headers: IncomingHttpHeaders; body: string };
function send(
  socket: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<Reply> {
  return new Promise((ok, fail) => {
    const r = request({ socketPath: socket, method, path, headers }, (res) => {
      let b = "";
      res.on("data", (c: Buffer) => (b += c));
      res.on("end", () => ok({ status: res.statusCode!, headers: res.headers, body: b }));
    });
    r.on("error", fail);
    r.end(body);
  });
}

describe("the model proxy, more edges", () => {
  it("a refusal is JSON with its own length", async () => {
    const w = await world();
    try {
      const r = await send(w.socket, "GET", "/v1/models", {});
      expect(r.status).toBe(403);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["content-length"]).toBe(String(Buffer.byteLength(r.body)));
    } finally {
      await w.close();
    }
  });

  it("a compressed body is refused, never forwarded unread", async () => {
    const w = await world();
    try {
      const r = await send(w.socket, "POST", "/v1/messages", { "content-encoding": "gzip" }, CALL);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(w.seen).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("a HEAD goes up without the session's content-length, and one with a body is an invalid request", async () => {
    const w = await world();
    try {
      expect((await send(w.socket, "HEAD", "/", { "content-length": "0" })).status).toBe(200);
      expect(w.seen[0]!["content-length"]).toBeUndefined();
      const bad = await send(w.socket, "POST", "/v1/messages", {}, "");
      expect(bad.status).toBe(400);
      const head = await new Promise<string>((ok) => {
        const c = connect(w.socket);
        let b = "";
        c.on("data", (d) => (b += d.toString("utf8")));
        c.on("close", () => ok(b));
        c.write("HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
      });
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toContain("content-type: application/json");
    } finally {
      await w.close();
    }
  });

  it("a body that keeps coming after an early refusal is read and dropped, and past the bound the connection is cut", async () => {
    const w = await world({ bodyBytes: 100 });
    try {
      const got = await new Promise<{ text: string; closed: boolean }>((ok) => {
        const c = connect(w.socket);
        let b = "";
        c.on("data", (d) => (b += d.toString("utf8")));
        c.on("close", () => ok({ text: b, closed: true }));
        c.on("error", () => {});
        c.write("POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
        setTimeout(() => c.write("x".repeat(1000)), 20);
        setTimeout(() => ok({ text: b, closed: false }), 1500);
      });
      expect(got.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(got.closed, "cut once more than the bound was dropped").toBe(true);
    } finally {
      await w.close();
    }
  });

  it("a request cut mid-body gives back the bytes it held", async () => {
    const w = await world({ heldBytes: 100, bodyBytes: 1000 });
    try {
      await new Promise<void>((ok) => {
        const c = connect(w.socket);
        c.on("error", () => {});
        c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n${"y".repeat(90)}`, () =>
          setTimeout(() => {
            c.destroy();
            ok();
          }, 20),
        );
      });
      await new Promise((r) => setTimeout(r, 20));
      expect((await send(w.socket, "POST", "/v1/messages", {}, CALL)).status, "the cut request's bytes are back").toBe(
        200,
      );
    } finally {
      await w.close();
    }
  });

  it("close() ends a request still sending its body, without waiting for it", async () => {
    const w = await world();
    const c = connect(w.socket);
    c.on("error", () => {});
    await new Promise<void>((ok) =>
      c.write("POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{", () => ok()),
    );
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await w.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    c.destroy();
  });
});
