// A host process of its own with the model proxy as the launcher runs it, so a test can count the
// proxy's descriptors and memory and watch the host beside it:
// `node model-proxy-child.ts '<ModelProxyOptions as JSON>'`. Prints "listening <the proxy
// process's pid>" once the socket listens; on SIGTERM closes (the proxy writes the log's closing
// summary) and exits.
import { serveModelProxy, type ModelProxyOptions } from "../../src/host/model-proxy.ts";
import { proxyPidsOf } from "./proxy-procs.ts";

const o = JSON.parse(process.argv[2]!) as ModelProxyOptions;
const proxy = serveModelProxy(o);
await proxy.listening;
process.stdout.write(`listening ${proxyPidsOf("self").join(" ")}\n`);
process.on("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
