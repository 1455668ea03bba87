// More of the model proxy's edges, in-process: its server's timeouts, a log that stays unwritten
// while there is nothing to write, and a body past the bound that keeps coming after the answer.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveSweptProxy } from "./support/swept-proxy.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-proxy2-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
async function proxy(limits: Record<string, number> = {}, upstream = "http://127.0.0.1:1") {
  const socket = join(root, `q${n++}.sock`);
  const log = join(root, `q${n}`, "egress.jsonl");
  const p = serveSweptProxy({
    socket,
    upstream,
    credential: upstream.endsWith(":1") ? null : { header: "x-api-key", value: "real" },
    mode: "model-only",
    egressLog: log,
    limits,
  });
  await p.listening;
  return { p, socket, log };
}

describe("the model proxy's server", () => {
  it("closes a connection whose request head does not arrive within the headers timeout, with 408", async () => {
    const { p, socket } = await proxy({ headersTimeoutMs: 40, requestTimeoutMs: 40, checkEveryMs: 10 });
    try {
      const got = await new Promise<string>((ok) => {
        const c = connect(socket);
        let b = "";
        c.on("data", (d) => (b += d.toString("utf8")));
        c.on("close", () => ok(b));
        c.on("error", () => {});
        c.write("POST /v1/messages HTTP/1.1\r\nHost: x\r\n");
      });
      expect(got).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await p.close();
    }
  });

  it("a proxy closed without a request leaves no log file", async () => {
    const { p, log } = await proxy();
    await p.close();
    expect(existsSync(log)).toBe(false);
  });

  it("an upstream that resets the connection after its answer's head: the session's answer is cut, and the log says so", async () => {
    const up = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"partial":');
        setTimeout(() => res.socket!.resetAndDestroy(), 5);
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    const { p, socket, log } = await proxy({}, `http://127.0.0.1:${(up.address() as AddressInfo).port}`);
    try {
      const outcome = await new Promise<string>((ok) => {
        const r = request(
          { socketPath: socket, method: "POST", path: "/v1/messages", headers: { "content-type": "application/json" } },
          (res) => {
            res.on("data", () => {});
            res.on("end", () => ok(`ended ${res.statusCode}`));
            res.on("error", () => ok(`cut ${res.statusCode}`));
            res.on("aborted", () => ok(`cut ${res.statusCode}`));
          },
        );
        r.on("error", () => ok("cut"));
        r.end(JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }));
      });
      expect(outcome).toMatch(/^cut/);
      const lines = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.at(-1)).toMatchObject({ outcome: "allowed", status: 502, bytesOut: 0, why: "read ECONNRESET" });
    } finally {
      await p.close();
      await new Promise<void>((r) => up.close(() => r()));
    }
  });
});
