// The real serveToolSocket in a process of its own, for contract/runner-tool-socket.test.ts: a throw
// that escaped a connection would end this process, as it would end the runner (pid 1). Forwards go
// through the real callBroker to an echo broker in this process, so the broker call's own encoding
// is on the path; three stub tools make the forward itself fail in the ways a broker could.
// `node contract/support/tool-socket-child.ts <dir>`: prints "ready" once <dir>/tools.sock listens.
// `... <dir> --fd <path>`: listens on the bound socket it inherits as fd 3, as the runner does, and
// is told `<path>` as the socket's path (which it must leave alone).
import { join } from "node:path";
import { planRunnerBounds } from "../../src/core/runner/bounds.ts";
import type { ToolRoute } from "../../src/core/runner/tool-call.ts";
import { callBroker } from "../../src/host/runner/broker-client.ts";
import { serveToolSocket } from "../../src/host/runner/tool-server.ts";
import { lineServer } from "./line-server.ts";

const dir = process.argv[2]!;
const brokerSocket = join(dir, "broker.sock");

/** A value nested `n` deep, built without recursion. */
function deep(n: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

// The echo broker: every request answered with its verb and args, as a broker's result.
await lineServer<{ id: number; verb: string; args: unknown }>(brokerSocket, (r) => ({
  id: r.id,
  ok: true,
  result: { verb: r.verb, args: r.args },
}));

const routes = new Map<string, ToolRoute>([
  ["send_message", { broker: "message.send" }],
  ["stub_throws", { broker: "stub.throws" }],
  ["stub_rejects", { broker: "stub.rejects" }],
  ["stub_deep_result", { broker: "stub.deep-result" }],
]);

const at = process.argv[3] === "--fd" ? { path: process.argv[4]!, fd: 3 } : { path: join(dir, "tools.sock") };
await serveToolSocket(
  at,
  routes,
  null,
  (_socket, verb, args) => {
    if (verb === "stub.throws") throw new Error("a forward that throws");
    if (verb === "stub.rejects") return Promise.reject(new Error("a forward that rejects"));
    // A result too deep for the answer's own JSON.stringify.
    if (verb === "stub.deep-result") return Promise.resolve({ kind: "ok", result: deep(20_000) });
    return callBroker(brokerSocket, "stand-in-cap", verb, args, 2000);
  },
  planRunnerBounds({ kind: "exit" }).toolSocket,
);
process.stdout.write("ready\n");
