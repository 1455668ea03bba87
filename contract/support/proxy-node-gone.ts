// Run by a contract test on a copy of node that it deletes first, so the model proxy's process
// cannot be spawned (ENOENT), as when node is upgraded or removed under a running host. Argv: the
// socket and the egress log. Prints how `listening` settled and whether close() returned, each
// within 10 s: a launch waits on both, so either hanging hangs the launch.
import { unlinkSync } from "node:fs";
import { serveModelProxy } from "../../src/host/model-proxy.ts";

const [socket, egressLog] = process.argv.slice(2) as [string, string];
unlinkSync(process.execPath);
const within = (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => "resolved",
      (e: Error) => `rejected: ${e.message}`,
    ),
    new Promise<string>((ok) => setTimeout(() => ok("pending"), 10_000)),
  ]);
const p = serveModelProxy({ socket, upstream: "http://127.0.0.1:1", credential: null, mode: "model-only", egressLog });
const listening = await within(p.listening);
const closed = await within(p.close());
process.stdout.write(JSON.stringify({ listening, closed }));
process.exit(0);
