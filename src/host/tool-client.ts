// A typed tool's one call to the runner's tool socket: one connection, one request line, one answer
// line. Whatever goes wrong on the way (no socket, no listener, no answer, a bad answer) comes back as
// a refusal saying the call did not happen; only the runner's own success reads as success.
import { createConnection } from "node:net";
import {
  MAX_ANSWER_BYTES,
  failClosed,
  readToolAnswer,
  renderToolRequest,
  type ToolOutcome,
} from "../core/tools/tool-wire.ts";

export type { ToolOutcome } from "../core/tools/tool-wire.ts";

export const TOOL_SOCKET_ENV = "MOSAIC_TOOL_SOCKET";

/** Long enough for a broker round trip; a runner that says nothing for this long is not answering. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

let nextId = 1;

export function callTool(
  socketPath: string | undefined,
  tool: string,
  args: unknown,
  opts: { timeoutMs?: number } = {},
): Promise<ToolOutcome> {
  if (socketPath === undefined || socketPath === "")
    return Promise.resolve(failClosed({ kind: "no-socket-env", variable: TOOL_SOCKET_ENV }));
  const id = nextId++;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let connected = false;
    const timer = setTimeout(() => settle(failClosed({ kind: "timeout", ms: timeoutMs })), timeoutMs);
    const socket = createConnection(socketPath);
    function settle(outcome: ToolOutcome) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    }
    socket.on("connect", () => {
      connected = true;
      socket.write(renderToolRequest(id, tool, args));
    });
    socket.on("data", (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      const take = nl === -1 ? chunk : chunk.subarray(0, nl);
      chunks.push(take);
      size += take.length;
      if (size > MAX_ANSWER_BYTES) return settle(failClosed({ kind: "too-long" }));
      if (nl === -1) return;
      let line: string;
      try {
        line = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        return settle(failClosed({ kind: "garbled", why: "not UTF-8" }));
      }
      settle(readToolAnswer(line, id));
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      settle(
        connected
          ? failClosed({ kind: "hang-up" })
          : failClosed({ kind: "connect", path: socketPath, code: e.code ?? "error" }),
      );
    });
    socket.on("close", () => settle(failClosed({ kind: "hang-up" })));
  });
}
