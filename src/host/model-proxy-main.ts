// One session's model proxy, as a process of its own (started by serveModelProxy() in
// model-proxy.ts): what a session sends can cost it its own proxy, never the host's process nor
// another session's proxy. It reads its options from stdin (the credential is never in its argv
// or environment), serves the listening socket it inherits, says "listening" over its IPC channel,
// and ends, writing the egress log's closing lines, on SIGTERM or when the host's end of the
// channel goes (the host process ended).
import { PROXY_LISTEN_FD, proxyServer, type ProxyConfig } from "./model-proxy-serve.ts";

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const c of stream) text += String(c);
  return text;
}

const config = JSON.parse(await readAll(process.stdin)) as ProxyConfig;
const { server, log } = proxyServer(config);
const end = () => {
  log.close();
  process.exit(0);
};
process.on("SIGTERM", end);
process.on("disconnect", end); // safety: proxy-dies-with-host
// A socket it cannot serve ends it, so the host's `listening` rejects rather than waits.
const cannotListen = (e: Error) => {
  process.stderr.write(`the model proxy cannot serve its socket: ${e.message}\n`);
  process.exit(1);
};
server.once("error", cannotListen);
server.listen({ fd: PROXY_LISTEN_FD }, () => {
  server.off("error", cannotListen);
  process.send!({ kind: "listening" }, undefined, undefined, () => {});
});
