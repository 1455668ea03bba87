// A listener on the host that counts who reaches it: a network trap a sandboxed session must not
// reach (a TCP port on the host's loopback, an abstract Unix socket), or a stand-in socket whose
// connections a test counts (the broker's, the launch socket). Loopback and Unix sockets only.
import { createServer, type Server } from "node:net";

export type Trap = {
  /** Where it listens: `127.0.0.1:<port>`, `@<abstract name>` or a socket path. */
  address: string;
  /** The TCP port, or null for a Unix socket. */
  port: number | null;
  /** Connections accepted so far. */
  hits: () => number;
  close: () => Promise<void>;
};

export type TrapAt = { tcp: "127.0.0.1" } | { abstract: string } | { path: string };

/**
 * Starts a trap: each connection is counted (and `onHit` called, for a counter a test resets),
 * answered with `answer` so a reader inside sees it landed, and ended.
 */
export async function startTrap(at: TrapAt, opts: { answer?: string; onHit?: () => void } = {}): Promise<Trap> {
  let n = 0;
  const server: Server = createServer((c) => {
    c.on("error", () => {});
    n++;
    opts.onHit?.();
    c.end(opts.answer ?? "trap\n");
  });
  const listenOn = "tcp" in at ? { port: 0, host: at.tcp } : { path: "abstract" in at ? `\0${at.abstract}` : at.path };
  await new Promise<void>((ok, bad) => server.once("error", bad).listen(listenOn, ok));
  const port = "tcp" in at ? (server.address() as { port: number }).port : null;
  const address = "tcp" in at ? `${at.tcp}:${port}` : "abstract" in at ? `@${at.abstract}` : at.path;
  return { address, port, hits: () => n, close: () => new Promise((ok) => server.close(() => ok())) };
}
