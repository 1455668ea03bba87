// A stand-in peer on a Unix socket, as the runner and the hook meet theirs (the broker, the tool
// socket): each connection's first JSON line is handed to `answer`, whose value is written back as
// one line and the connection ended; `undefined` answers nothing and leaves the connection open.
import { createServer, type Server } from "node:net";

export async function lineServer<T>(
  path: string,
  answer: (line: T) => unknown | Promise<unknown>,
  after: (line: T) => void = () => {},
): Promise<Server> {
  const server = createServer((c) => {
    let buf = "";
    c.setEncoding("utf8");
    c.on("error", () => {});
    c.on("data", (d: string) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl === -1) return;
      const line = JSON.parse(buf.slice(0, nl)) as T;
      void Promise.resolve(answer(line)).then((a) => {
        if (a !== undefined) c.end(`${JSON.stringify(a)}\n`);
        after(line);
      });
    });
  });
  await new Promise<void>((done) => server.listen(path, done));
  return server;
}
