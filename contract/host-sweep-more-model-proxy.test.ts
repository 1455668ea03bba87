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
import { serveSweptProxy } from "./support/swept-proxy.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-more-proxy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CALL = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });

let n = 0;
async function world(
  limits: Record<string, number>,
  hold: (body: string, answer: () => void) => void = (_b, answer) => answer(),
) {
  const seen: string[] = [];
  const up = createServer((req, res) => {
    let b = "";
    req.on("data", (c: Buffer) => (b += c));
    req.on("end", () => {
      seen.push(b);
      hold(b, () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  const socket = join(root, `m${n++}.sock`);
  const log = join(root, `m${n}`, "egress.jsonl");
  const p = serveSweptProxy({
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
/** One POST /v1/messages of `body` with its length: the answer's status. */
function post(socket: string, body: string): Promise<number> {
  return new Promise((ok, fail) => {
    const r = request(
      { socketPath: socket, method: "POST", path: "/v1/messages", headers: { "content-length": String(body.length) } },
      (res) => {
        res.resume();
        res.on("end", () => ok(res.statusCode!));
      },
    );
    r.on("error", fail);
    r.end(body);
  });
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
  it("past the body bound after a chunk's refusal the connection is cut: no second answer", async () => {
    const w = await world({ bodyBytes: 100 });
    try {
      const k = raw(w.socket);
      k.c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk("x".repeat(101))}`);
      expect(await until(() => answers(k.text).length === 1), "the refusal").toBe(true);
      // 101 bytes more, one past the bound, then the body's end and a second request.
      k.c.write(`${chunk("y".repeat(101))}0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(await until(() => answers(k.text).length === 2 || k.closed)).toBe(true);
      expect({ answers: answers(k.text), closed: k.closed }).toEqual({ answers: ["HTTP/1.1 413"], closed: true });
    } finally {
      await w.close();
    }
  });

  it("a request the egress table refuses, past the body bound: what keeps coming after its refusal is cut past the bound", async () => {
    const w = await world({ bodyBytes: 100 });
    try {
      const k = raw(w.socket);
      // Refused by its path, and too large by its declared length at its first byte.
      k.c.write("POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\nx");
      expect(await until(() => answers(k.text).length === 1), "the refusal").toBe(true);
      expect(answers(k.text)).toEqual(["HTTP/1.1 413"]);
      // The rest of the body (299 bytes, past the bound) and a second request.
      k.c.write(`${"y".repeat(299)}GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(await until(() => answers(k.text).length === 2 || k.closed)).toBe(true);
      expect({ answers: answers(k.text), closed: k.closed }).toEqual({ answers: ["HTTP/1.1 413"], closed: true });
    } finally {
      await w.close();
    }
  });

  it("a chunk's refusal gives its request's held bytes back at once, while its connection stays open", async () => {
    const w = await world({ bodyBytes: 100, heldBytes: 150 });
    try {
      const k = raw(w.socket);
      k.c.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk("x".repeat(101))}`);
      expect(await until(() => answers(k.text).length === 1), "the refusal").toBe(true);
      // 101 refused bytes would leave no room for this one's 70 under 150.
      const r = await post(w.socket, CALL);
      expect(r, "nothing of the refused request is held").toBe(200);
      expect(w.seen).toEqual([CALL]);
      k.c.destroy();
    } finally {
      await w.close();
    }
  });

  it("a request whose answer is on its way up holds none of its bytes: another request is judged without them", async () => {
    let answerFirst: () => void = () => {};
    const w = await world({ heldBytes: 100 }, (body, answer) => {
      if (body.includes("first")) answerFirst = answer;
      else answer();
    });
    try {
      const first = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "first" }] });
      const firstStatus = post(w.socket, first);
      expect(await until(() => w.seen.length === 1), "the first is up, unanswered").toBe(true);
      expect(await post(w.socket, CALL), "the second is not held back by the first").toBe(200);
      answerFirst();
      expect(await firstStatus).toBe(200);
    } finally {
      await w.close();
    }
  });

  it("a socket that cannot be made: listening rejects, and no one waiting on it is no unhandled rejection", async () => {
    const seen: unknown[] = [];
    const track = (e: unknown) => void seen.push(e);
    process.on("unhandledRejection", track);
    try {
      const p = serveSweptProxy({
        socket: join(root, "no-such-dir", "model.sock"),
        upstream: "http://127.0.0.1:1",
        credential: null,
        mode: "model-only",
        egressLog: join(root, "never.jsonl"),
      });
      await new Promise((r) => setTimeout(r, 20));
      expect(seen, "no unhandled rejection").toEqual([]);
      await expect(p.listening).rejects.toThrow(/^listen E/);
    } finally {
      process.off("unhandledRejection", track);
    }
  });
});
