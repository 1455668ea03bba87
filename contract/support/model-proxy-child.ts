// The model proxy in a process of its own, as the launcher runs it, so a test can count its
// descriptors and memory: `node model-proxy-child.ts '<ModelProxyOptions as JSON>'`. Prints
// "listening" once the socket listens; on SIGTERM closes (writing the log's closing summary) and exits.
import { serveModelProxy, type ModelProxyOptions } from "../../src/host/model-proxy.ts";

const o = JSON.parse(process.argv[2]!) as ModelProxyOptions;
const proxy = serveModelProxy(o);
await proxy.listening;
process.stdout.write("listening\n");
process.on("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
