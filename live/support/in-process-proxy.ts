// The positive control of live/model-proxy-isolation.test.ts: a small server that reproduces the
// old design's failure mode, not the shipped proxy. It serves a session's model socket in its own
// process the way the host's one process used to serve every session's: the body read whole and
// parsed with JSON.parse before any bound on its shape, and the upstream request built in the
// request's 'end' handler from the headers the session sent, with nothing to catch what node
// throws. `node in-process-proxy.ts <socket> <upstream>` prints "listening", then, on each stdin
// line, `REPORT {"maxLagMs":…,"peakRss":…}` (its event loop's longest stall and its VmHWM).
import { chmodSync, chownSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, request } from "node:http";
import { createInterface } from "node:readline";
import { decideModelBody } from "../../src/core/network/model-body.ts";

const [socket, upstream] = process.argv.slice(2) as [string, string];
const up = new URL(upstream);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    let out: string | undefined;
    if (req.method !== "HEAD") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return void res.writeHead(400).end();
      }
      out = JSON.stringify(parsed);
      const b = decideModelBody(parsed, []);
      if (b.kind === "refuse") return void res.writeHead(b.status).end(b.message);
    }
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: up.host };
    delete headers["content-length"];
    const upReq = request(
      { hostname: up.hostname, port: up.port, method: req.method, path: req.url, headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    upReq.on("error", () => res.destroy());
    upReq.end(out);
  });
});
// In the place of the session's socket, owned and moded as the launcher left it (a root host's
// session runs as its own uid, which owns the run directory).
const was = statSync(socket);
rmSync(socket, { force: true });
server.listen(socket, () => {
  chownSync(socket, was.uid, was.gid);
  chmodSync(socket, was.mode & 0o777);
  process.stdout.write("listening\n");
});

let maxLagMs = 0;
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  maxLagMs = Math.max(maxLagMs, now - last - 50);
  last = now;
}, 50);
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
createInterface({ input: process.stdin }).on("line", () =>
  process.stdout.write(`REPORT ${JSON.stringify({ maxLagMs: Math.round(maxLagMs), peakRss: peakRss() })}\n`),
);
