import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { ToolSocketBounds } from "../../core/runner/bounds.ts";
import { boundRefusal, decideToolCall, readToolLine, toolAnswer, type ToolRoute } from "../../core/runner/tool-call.ts";
import type { BrokerAnswer } from "../../core/runner/decisions.ts";
import type { GateReport } from "../../core/runner/tripwire.ts";

const NEWLINE = 0x0a;

export type ToolForward = (
  socket: "broker" | "launch",
  verb: string,
  args: Record<string, unknown>,
) => Promise<BrokerAnswer>;

const errorLine = (id: string | number | null, error: string) => JSON.stringify({ id, ok: false, error });

/** Runs fn; whatever it throws stays here. The runner is pid 1: nothing a client sends may end it. */
function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // a client's bad input, or a bug reached through it: that connection's loss, never the runner's
  }
}

/** After a connection's last answer, how long what the client still sends is read and dropped, so its write does not fail before it reads the answer. */
const LINGER_MS = 1000;

/** One last answer, then the connection is gone: the rest of what the client sends is dropped unread. */
function close(c: Socket, line: string): void {
  c.removeAllListeners("data");
  c.on("data", () => {});
  c.resume();
  c.end(line + "\n");
  setTimeout(() => c.destroy(), LINGER_MS).unref();
}

/**
 * The runner's tool socket (`<run>/sock/tools.sock`, 0600): one `{id?, tool, args}` per line, checked
 * against tools.json and forwarded with the runner's capability. Every bound (bounds.ts) is applied
 * before anything recurses over the client's bytes, a bad line gets one error answer naming the
 * bound, and every step of every connection is caught: nothing a client sends can crash the runner.
 * The host makes the socket (0600, the session's, in the read-only sock/) and passes it listening
 * as `fd`; a path alone is listened on here (the contract tier's fuzz).
 */
export function serveToolSocket(
  at: { path: string; fd?: number },
  routes: ReadonlyMap<string, ToolRoute>,
  launchSocket: string | null,
  forward: ToolForward,
  bounds: ToolSocketBounds,
  onReport: (r: GateReport) => void = () => {},
): Promise<Server> {
  if (at.fd === undefined) rmSync(at.path, { force: true });
  let open = 0;
  const server = createServer((c) =>
    guard(() => {
      open += 1;
      c.on("close", () => (open -= 1));
      c.on("error", () => {});
      if (open > bounds.connections) return close(c, errorLine(null, boundRefusal("connections", bounds))); // safety: tool-socket-connections-unbounded
      serveConnection(c, routes, launchSocket, forward, bounds, onReport);
    }),
  );
  // Accept errors come here. At EMFILE libuv accepts and closes the connection itself (measured:
  // contract/runner-tool-socket.test.ts), so none reaches node today; one that did, unheard, would throw in pid 1.
  server.on("error", () => {});
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    if (at.fd !== undefined) {
      return void server.listen({ fd: at.fd }, () => {
        server.off("error", reject);
        resolve(server);
      });
    }
    server.listen(at.path, () => {
      server.off("error", reject);
      chmodSync(at.path, 0o600);
      resolve(server);
    });
  });
}

function serveConnection(
  c: Socket,
  routes: ReadonlyMap<string, ToolRoute>,
  launchSocket: string | null,
  forward: ToolForward,
  bounds: ToolSocketBounds,
  onReport: (r: GateReport) => void,
): void {
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let waiting = 0;
  let queue: Promise<void> = Promise.resolve();

  const answer = (line: string) =>
    guard(() => {
      if (!c.destroyed && c.writable) c.write(line + "\n");
    });
  // Read more only when this connection has caught up: answers it does not read cannot pile up.
  const flow = () =>
    guard(() => {
      if (c.destroyed) return;
      if (waiting >= bounds.pending || c.writableNeedDrain)
        c.pause(); // safety: tool-socket-pending-unbounded
      else c.resume();
    });
  c.on("drain", flow);

  const serve = async (bytes: Buffer): Promise<void> => {
    const req = readToolLine(bytes, bounds);
    if ("bad" in req) return answer(errorLine(req.id, req.bad));
    const d = decideToolCall(routes, req, launchSocket);
    if (d.kind === "answer") return answer(errorLine(d.id, d.error));
    if (d.kind === "report") {
      onReport(d.report);
      return answer(JSON.stringify({ id: d.id, ok: true, result: null }));
    }
    answer(toolAnswer(d.id, await forward(d.socket, d.verb, d.args)));
  };
  const take = (bytes: Buffer) => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    const line = bytes.subarray(0, end);
    if (line.toString("latin1").trim() === "") return;
    waiting += 1;
    // One answer per request, in order; whatever a request throws becomes its error answer.
    queue = queue
      .then(() => serve(line))
      .catch(() => answer(errorLine(null, "refused: the runner could not make the call"))) // safety: tool-socket-forward-throw-escapes
      .finally(() => {
        waiting -= 1;
        flow();
      });
  };
  const tooLong = () => {
    partial = [];
    close(c, errorLine(null, boundRefusal("lineBytes", bounds)));
  };

  c.on("data", (chunk: Buffer) =>
    guard(() => {
      for (let start = 0; ; ) {
        const nl = chunk.indexOf(NEWLINE, start);
        const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
        // A line is never held past its bound: the client's bytes stop here, not in pid 1's memory.
        if (partialBytes + piece.length > bounds.lineBytes) return tooLong(); // safety: tool-socket-line-unbounded
        if (nl === -1) {
          if (piece.length > 0) {
            partial.push(piece);
            partialBytes += piece.length;
          }
          break;
        }
        take(partial.length === 0 ? piece : Buffer.concat([...partial, piece]));
        partial = [];
        partialBytes = 0;
        start = nl + 1;
      }
      flow();
    }),
  );
}
