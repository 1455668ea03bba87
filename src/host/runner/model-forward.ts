import { connect, createServer, type Server } from "node:net";

/**
 * The session's only way out: 127.0.0.1:<port> inside the sandbox's network namespace, each
 * connection forwarded byte for byte to the host's model proxy on a Unix socket in the run
 * directory. The proxy decides what passes and adds the credential.
 */
export function forwardModelPort(port: number, socket: string): Promise<Server> {
  const server = createServer((inside) => {
    const out = connect(socket);
    inside.on("error", () => out.destroy());
    out.on("error", () => inside.destroy());
    inside.pipe(out);
    out.pipe(inside);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}
