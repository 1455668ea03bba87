// The model proxy's held bytes and its drop bound, in-process, over raw HTTP/1.1 on the proxy's
// socket: a body refused mid-way that keeps coming and ends is refused once and never forwarded,
// what is dropped after an early refusal is cut only past the body bound (exactly the bound is
// read to the end, and the connection answers its next request), and a finished request's bytes
// are given back once, not twice.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveModelProxy } from "../src/host/model-proxy.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-more-proxy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CALL = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });

let n = 0;
async function world(limits: Record<string, number>) {
  const seen: string[] = [];
  const up = createServer((req, res) => {
    let b = "";
    req.on("data", (c: Buffer) => (b += c));
    req.on("end", () => {
      seen.push(b);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  const socket = join(root, `m${n++}.sock`);
  const log = join(root, `m${n}`, "egress.jsonl");
  const p = serveModelProxy({
    socket,
    upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
    credential: { header: "x-api-key", value: "real" },
    mode: "model-only",
    egressLog: log,
    limits,
  });
  await p.listening;
  const close = async () => {
    await p.close();
    await new Promise<void>((r) => up.close(() => r()));
  };
  return { socket, log, seen, close };
}

const readLog = (f: string): Array<Record<string, unknown>> =>
  existsSync(f)
    ? readFileSync(f, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

/** A raw connection: what it has read so far, whether it closed, and a wait for either. */
function raw(socket: string) {
  const c: Socket = connect(socket);
  const s = { c, text: "", closed: false };
  c.on("data", (d: Buffer) => (s.text += d.toString("latin1")));
  c.on("close", () => (s.closed = true));
  c.on("error", () => {});
  return s;
}
async function until(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  return cond();
}
const answers = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;

describe("the model proxy's held bytes and drop bound", () => {
  it("a body refused at a chunk past the bound that keeps coming and ends: one refusal, nothing forwarded, and the connection goes on", async () => {
    const w = await world({ bodyBytes: 100 });
    try {
      const k = raw(w.socket);
      k.c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk("x".repeat(101))}`);
      expect(await until(() => answers(k.text).length === 1), "the refusal").toBe(true);
      expect(answers(k.text)).toEqual(["HTTP/1.1 413"]);
      // More of the refused body, its end, and a second request on the same connection.
      k.c.write(`${chunk("y".repeat(10))}${chunk("z".repeat(10))}0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(await until(() => answers(k.text).length === 2 || k.closed), "the second answer").toBe(true);
      expect(answers(k.text)).toEqual(["HTTP/1.1 413", "HTTP/1.1 403"]);
      expect(readLog(w.log).map((l) => [l.method, l.status, l.bytesIn])).toEqual([
        ["POST", 413, 101],
        ["GET", 403, 0],
      ]);
      expect(w.seen, "nothing went up").toEqual([]);
      k.c.destroy();
    } finally {
      await w.close();
    }
  });

  it("after an early refusal, exactly the body bound is read and dropped, and the connection answers its next request", async () => {
    const w = await world({ bodyBytes: 100 });
    try {
      const k = raw(w.socket);
      k.c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk("x".repeat(101))}`);
      expect(await until(() => answers(k.text).length === 1), "the refusal").toBe(true);
      // 100 bytes more, the bound exactly: dropped, not cut.
      k.c.write(`${chunk("y".repeat(60))}${chunk("z".repeat(40))}0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(await until(() => answers(k.text).length === 2 || k.closed), "the second answer").toBe(true);
      expect(answers(k.text), "not cut at the bound").toEqual(["HTTP/1.1 413", "HTTP/1.1 403"]);
      k.c.destroy();
    } finally {
      await w.close();
    }
  });

  it("a finished request gives its held bytes back once: a later request is judged by what is held now", async () => {
    const w = await world({ heldBytes: 100, bodyBytes: 1000 });
    try {
      // A finished request: its bytes are held while it is read, then given back.
      const body = CALL;
      const first = await new Promise<number>((ok, fail) => {
        const r = request(
          {
            socketPath: w.socket,
            method: "POST",
            path: "/v1/messages",
            headers: { "content-length": String(body.length) },
          },
          (res) => {
            res.resume();
            res.on("end", () => ok(res.statusCode!));
          },
        );
        r.on("error", fail);
        r.end(body);
      });
      expect(first).toBe(200);
      expect(await until(() => w.seen.length === 1)).toBe(true);
      // A request that holds 90 bytes and waits for the rest of its body.
      const a = raw(w.socket);
      a.c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n${"a".repeat(90)}`);
      // Then requests of 20 more, until the proxy has read those 90: 110 held, past the bound.
      const post20 = () =>
        new Promise<number>((ok, fail) => {
          const r = request(
            { socketPath: w.socket, method: "POST", path: "/v1/messages", headers: { "content-length": "20" } },
            (res) => {
              res.resume();
              res.on("end", () => ok(res.statusCode!));
            },
          );
          r.on("error", fail);
          r.end("b".repeat(20));
        });
      let status = 0;
      for (let i = 0; i < 100 && status !== 429; i++) status = await post20();
      expect(status, "over the held bound").toBe(429);
      expect(answers(a.text), "the held request has no answer yet").toEqual([]);
      a.c.destroy();
    } finally {
      await w.close();
    }
  });
});
