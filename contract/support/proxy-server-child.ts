// The proxy's HTTP server (proxyServer() of model-proxy-serve.ts) in a process of its own, for a
// test to watch its stderr: `node proxy-server-child.ts '<ProxyConfig as JSON>' <socket>` prints
// "listening" once it serves the socket; each stdin line `accept-error <message>` makes the server
// emit the error node's net server emits for an accept that fails, then prints "emitted". On
// SIGTERM it closes the log and exits 0.
import { createInterface } from "node:readline";
import { proxyServer, type ProxyConfig } from "../../src/host/model-proxy-serve.ts";

const config = JSON.parse(process.argv[2]!) as ProxyConfig;
const { server, log } = proxyServer(config);
server.listen(process.argv[3]!, () => process.stdout.write("listening\n"));
createInterface({ input: process.stdin }).on("line", (line) => {
  const [cmd, ...rest] = line.split(" ");
  if (cmd !== "accept-error") return;
  server.emit("error", Object.assign(new Error(rest.join(" ")), { code: "EMFILE", syscall: "accept" }));
  process.stdout.write("emitted\n");
});
process.on("SIGTERM", () => {
  log.close();
  process.exit(0);
});
