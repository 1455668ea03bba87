// A host process as the launcher is one: it serves several sessions' model proxies (each its own
// process) and goes on answering, so a test can attack one proxy and watch the host and the others.
// `node model-proxy-host.ts '<ModelProxyOptions[] as JSON>'` prints "listening <pid> ..." (each
// proxy process's pid, in order), then answers one line per stdin line:
//   ping                     → pong <the host's VmRSS in bytes>
//   close <i>                → closed <i> (proxy i's close() resolved)
//   serve-and-close <json>   → closed-early (a proxy closed before it listened, as a failed launch does; listening never awaited)
// On SIGTERM it closes every proxy and exits 0. With no handler of its own, an uncaught exception
// or unhandled rejection ends it: the test sees the exit.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { serveModelProxy, type ModelProxy, type ModelProxyOptions } from "../../src/host/model-proxy.ts";
import { proxyPidsOf } from "./proxy-procs.ts";

const all = JSON.parse(process.argv[2]!) as ModelProxyOptions[];
const proxies: ModelProxy[] = [];
const pids: number[] = [];
for (const o of all) {
  const p = serveModelProxy(o);
  await p.listening;
  proxies.push(p);
  pids.push(proxyPidsOf("self").find((pid) => !pids.includes(pid)) ?? -1);
}
process.stdout.write(`listening ${pids.join(" ")}\n`);

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "NaN") * 1024;

createInterface({ input: process.stdin }).on("line", (line) => {
  const [cmd, ...rest] = line.split(" ");
  if (cmd === "ping") process.stdout.write(`pong ${rss()}\n`);
  else if (cmd === "close")
    void proxies[Number(rest[0])]!.close().then(() => process.stdout.write(`closed ${rest[0]}\n`));
  else if (cmd === "serve-and-close") {
    void serveModelProxy(JSON.parse(rest.join(" ")) as ModelProxyOptions)
      .close()
      .then(() => process.stdout.write("closed-early\n"));
  }
});
process.on("SIGTERM", () => void Promise.all(proxies.map((p) => p.close())).then(() => process.exit(0)));
