// The runner's model port (src/host/runner/model-forward.ts) in-process: a TCP port on 127.0.0.1
// forwarded byte for byte to a Unix socket standing in for the host's model proxy.
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { forwardModelPort } from "../src/host/runner/model-forward.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("model-forward");
afterAll(() => scratch.remove());
let n = 0;

/** A stand-in model proxy on a fresh Unix socket; `onConnection` gets each connection it accepts. */
async function proxy(onConnection: (c: Socket) => void): Promise<{ path: string; server: Server }> {
  const path = join(scratch.root, `m${n++}.sock`);
  const server = createServer((c) => {
    c.on("error", () => {});
    onConnection(c);
  });
  await new Promise<void>((ok) => server.listen(path, ok));
  return { path, server };
}

/** Resolves true when `c` closes within `ms`, false when it is still open then. */
function closesWithin(c: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (c.closed) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    c.once("close", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

const portOf = (s: Server) => (s.address() as AddressInfo).port;

describe("the runner's model port", () => {
  it("listens on 127.0.0.1 only and carries bytes both ways", async () => {
    const p = await proxy((c) => c.on("data", (d) => c.write(Buffer.concat([Buffer.from("proxy:"), d]))));
    const fwd = await forwardModelPort(0, p.path);
    try {
      expect((fwd.address() as AddressInfo).address).toBe("127.0.0.1");
      const c = connect(portOf(fwd), "127.0.0.1");
      const got = await new Promise<string>((resolve, reject) => {
        c.on("error", reject);
        c.on("connect", () => c.write("GET / HTTP/1.1\r\n\r\n"));
        c.on("data", (d) => resolve(d.toString()));
      });
      expect(got).toBe("proxy:GET / HTTP/1.1\r\n\r\n");
      c.destroy();
    } finally {
      fwd.close();
      p.server.close();
    }
  });

  it("a client that resets its connection closes the proxy's side too", async () => {
    const accepted: Socket[] = [];
    const p = await proxy((c) => accepted.push(c));
    const fwd = await forwardModelPort(0, p.path);
    try {
      const c = connect(portOf(fwd), "127.0.0.1");
      c.on("error", () => {});
      await new Promise<void>((ok) => c.on("connect", () => ok()));
      while (accepted.length === 0) await new Promise((r) => setTimeout(r, 1));
      c.resetAndDestroy();
      expect(await closesWithin(accepted[0]!, 1000), "the forward's connection to the proxy is destroyed").toBe(true);
    } finally {
      fwd.close();
      p.server.close();
    }
  });

  it("no model proxy behind the socket: the client's connection is closed, not left hanging", async () => {
    const fwd = await forwardModelPort(0, join(scratch.root, "no-proxy.sock"));
    try {
      const c = connect(portOf(fwd), "127.0.0.1");
      c.on("error", () => {});
      expect(await closesWithin(c, 1000)).toBe(true);
    } finally {
      fwd.close();
    }
  });

  it("a port already taken is an error, not a hang", async () => {
    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(0, "127.0.0.1", ok));
    try {
      await expect(forwardModelPort(portOf(taken), join(scratch.root, "x.sock"))).rejects.toMatchObject({
        code: "EADDRINUSE",
      });
    } finally {
      taken.close();
    }
  });
});
