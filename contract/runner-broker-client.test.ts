// The runner's broker call (src/host/runner/broker-client.ts) in-process, against a real Unix
// socket: what goes out on the wire, and what each kind of answer (or silence) comes back as.
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { callBroker } from "../src/host/runner/broker-client.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("broker-client");
afterAll(() => scratch.remove());
let n = 0;

type Request = { id: number; cap: string; verb: string; args: unknown };

/**
 * A broker on a fresh socket: `reply` writes what it wants for each request it reads, or nothing.
 * `requests` holds every request line it read, parsed; `closed` resolves when its side of the
 * connection closes.
 */
async function broker(reply: (r: Request, c: Socket) => void): Promise<{
  path: string;
  server: Server;
  requests: Request[];
  closed: Promise<void>;
}> {
  const path = join(scratch.root, `b${n++}.sock`);
  const requests: Request[] = [];
  let closedOk: () => void = () => {};
  const closed = new Promise<void>((ok) => (closedOk = ok));
  const server = createServer((c) => {
    let buf = "";
    c.setEncoding("utf8");
    c.on("error", () => {});
    c.on("close", () => closedOk());
    c.on("data", (d: string) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl === -1) return;
      const r = JSON.parse(buf.slice(0, nl)) as Request;
      requests.push(r);
      reply(r, c);
    });
  });
  await new Promise<void>((ok) => server.listen(path, ok));
  return { path, server, requests, closed };
}

async function ask(reply: (r: Request, c: Socket) => void, timeoutMs = 2000) {
  const b = await broker(reply);
  try {
    const answer = await callBroker(b.path, "cap-1", "message.read", { a: 1 }, timeoutMs);
    return { answer, requests: b.requests, closed: b.closed };
  } finally {
    b.server.close();
  }
}

describe("the runner's broker call", () => {
  it("sends one line of {id, cap, verb, args} and reads an ok answer's result", async () => {
    const { answer, requests } = await ask((r, c) =>
      c.write(JSON.stringify({ id: r.id, ok: true, result: [1] }) + "\n"),
    );
    expect(answer).toEqual({ kind: "ok", result: [1] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toEqual({ id: requests[0]!.id, cap: "cap-1", verb: "message.read", args: { a: 1 } });
    expect(typeof requests[0]!.id).toBe("number");
  });

  it("each call has an id of its own", async () => {
    const b = await broker((r, c) => c.end(JSON.stringify({ id: r.id, ok: true, result: r.id }) + "\n"));
    try {
      const one = await callBroker(b.path, "c", "v", {}, 2000);
      const two = await callBroker(b.path, "c", "v", {}, 2000);
      expect(b.requests[1]!.id).not.toBe(b.requests[0]!.id);
      expect([one, two]).toEqual([
        { kind: "ok", result: b.requests[0]!.id },
        { kind: "ok", result: b.requests[1]!.id },
      ]);
    } finally {
      b.server.close();
    }
  });

  it("an answer split over several writes is read once its newline arrives", async () => {
    const { answer } = await ask((r, c) => {
      const line = JSON.stringify({ id: r.id, ok: true, result: "split" }) + "\n";
      c.write(line.slice(0, 5));
      setTimeout(() => c.write(line.slice(5)), 5);
    });
    expect(answer).toEqual({ kind: "ok", result: "split" });
  });

  it("an error answer keeps the broker's code and message", async () => {
    const { answer } = await ask((r, c) =>
      c.write(JSON.stringify({ id: r.id, ok: false, error: { code: "claim-revoked", message: "gone" } }) + "\n"),
    );
    expect(answer).toEqual({ kind: "error", code: "claim-revoked", message: "gone" });
  });

  it("an error answer without a code or message reads as code unknown and an empty message", async () => {
    const { answer } = await ask((r, c) => c.write(JSON.stringify({ id: r.id, ok: false }) + "\n"));
    expect(answer).toEqual({ kind: "error", code: "unknown", message: "" });
  });

  it("an answer whose ok is not true is an error, not a result", async () => {
    const { answer } = await ask((r, c) =>
      c.write(JSON.stringify({ id: r.id, ok: "yes", result: 1, error: { code: 3, message: 4 } }) + "\n"),
    );
    expect(answer).toEqual({ kind: "error", code: "3", message: "4" });
  });

  it("a null id with ok false is the broker saying it could not read the request: its error is kept", async () => {
    const { answer } = await ask((_r, c) =>
      c.write(JSON.stringify({ id: null, ok: false, error: { code: "bad-request", message: "too long" } }) + "\n"),
    );
    expect(answer).toEqual({ kind: "error", code: "bad-request", message: "too long" });
  });

  it("an answer for another id, or a null id that claims success, is unreachable", async () => {
    for (const other of [
      (r: Request) => ({ id: r.id + 1, ok: true, result: 1 }),
      (r: Request) => ({ id: r.id + 1, ok: false, error: { code: "x" } }),
      () => ({ id: null, ok: true, result: 1 }),
      () => ({ ok: false, error: { code: "x" } }),
    ]) {
      const { answer } = await ask((r, c) => c.write(JSON.stringify(other(r)) + "\n"));
      expect(answer).toEqual({ kind: "unreachable", why: "an answer for another request" });
    }
  });

  it("an answer that is JSON but not an object is unreachable", async () => {
    for (const line of ["null", "3", '"ok"']) {
      const { answer } = await ask((_r, c) => c.write(line + "\n"));
      expect(answer, line).toEqual({ kind: "unreachable", why: "an answer that is not a JSON object" });
    }
  });

  it("an answer that is not JSON is unreachable", async () => {
    const { answer } = await ask((_r, c) => c.write("{not json\n"));
    expect(answer).toEqual({ kind: "unreachable", why: "an answer that is not JSON" });
  });

  it("a broker that says nothing is unreachable after the timeout, and the connection is closed", async () => {
    const { answer, closed } = await ask(() => {}, 50);
    expect(answer).toEqual({ kind: "unreachable", why: "no answer within 50 ms" });
    await closed;
  });

  it("a broker that closes without an answer is unreachable", async () => {
    const { answer } = await ask((_r, c) => c.end());
    expect(answer).toEqual({ kind: "unreachable", why: "the broker closed the connection" });
  });

  it("the connection is closed once the answer is read", async () => {
    const { answer, closed } = await ask((r, c) => c.write(JSON.stringify({ id: r.id, ok: true, result: 0 }) + "\n"));
    expect(answer.kind).toBe("ok");
    await closed;
  });

  it("a socket with no broker is unreachable with the connect error's code", async () => {
    const answer = await callBroker(join(scratch.root, "none.sock"), "c", "v", {}, 2000);
    expect(answer).toEqual({ kind: "unreachable", why: "ENOENT" });
  });

  it("args that cannot be encoded are a call not made, with the encoder's reason", async () => {
    const b = await broker(() => {});
    try {
      const answer = await callBroker(b.path, "c", "v", { n: 1n }, 2000);
      expect(answer).toEqual({
        kind: "unreachable",
        why: "the request could not be encoded (Do not know how to serialize a BigInt)",
      });
      const thrower = {
        toJSON() {
          throw "not an Error";
        },
      };
      expect(await callBroker(b.path, "c", "v", { t: thrower }, 2000)).toEqual({
        kind: "unreachable",
        why: "the request could not be encoded (not an Error)",
      });
      expect(b.requests).toEqual([]);
    } finally {
      b.server.close();
    }
  });
});
