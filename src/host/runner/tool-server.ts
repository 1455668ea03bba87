import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { decideToolCall, parseToolLine, toolAnswer, type ToolRoute } from "../../core/runner/tool-call.ts";
import type { BrokerAnswer } from "../../core/runner/decisions.ts";

const MAX_LINE = 1024 * 1024;

/**
 * The runner's tool socket (`<run>/tools.sock`, 0600): one `{id?, tool, args}` per line, checked
 * against tools.json and forwarded with the runner's capability. A bad line gets an error answer;
 * nothing a client sends can crash the runner.
 */
export function serveToolSocket(path: string, routes: ReadonlyMap<string, ToolRoute>, launchSocket: string | null, forward: (socket: "broker" | "launch", verb: string, args: Record<string, unknown>) => Promise<BrokerAnswer>): Promise<Server> {
  rmSync(path, { force: true });
  const server = createServer((c) => {
    let buf = "";
    c.setEncoding("utf8");
    c.on("error", () => {});
    const answer = (line: string) => {
      if (!c.destroyed) c.write(line + "\n");
    };
    let queue = Promise.resolve();
    c.on("data", (d: string) => {
      buf += d;
      if (buf.length > MAX_LINE && !buf.includes("\n")) {
        answer(JSON.stringify({ id: null, ok: false, error: "bad request: a line over 1 MiB" }));
        c.destroy();
        return;
      }
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        if (line.trim() === "") continue;
        // One answer per request, in order.
        queue = queue.then(async () => {
          const req = parseToolLine(line);
          if ("bad" in req) return answer(JSON.stringify({ id: null, ok: false, error: req.bad }));
          const d = decideToolCall(routes, req, launchSocket);
          if (d.kind === "answer") return answer(JSON.stringify({ id: d.id, ok: false, error: d.error }));
          answer(toolAnswer(d.id, await forward(d.socket, d.verb, d.args)));
        }).catch(() => answer(JSON.stringify({ id: null, ok: false, error: "refused: the runner could not make the call" })));
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      chmodSync(path, 0o600); // safety: tool-socket-mode
      resolve(server);
    });
  });
}
