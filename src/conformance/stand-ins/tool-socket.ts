import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";

/** A request as it arrived on the tool socket (docs/protocols.md, "Tool socket"). */
export interface ToolRequest {
  id?: string | number;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * What the stand-in does with one request: a protocol answer, or, to test a client against a
 * broken runner, raw bytes instead of an answer, a hang-up, or silence.
 */
export type StandInAnswer =
  | { ok: true; result: unknown }
  | { ok: false; error: string }
  | { raw: string | Uint8Array }
  | { hangUp: true }
  | { silent: true };

const MAX_LINE = 1024 * 1024;

/**
 * A stand-in for the runner's tool socket, for tests only: a real Unix socket speaking the tool
 * socket's newline-delimited JSON, recording each well-formed request and answering it from the
 * test's function. The lead's runner replaces it in integration tests.
 */
export class ToolSocketStandIn {
  readonly requests: ToolRequest[] = [];
  readonly path: string;
  private readonly answer: (req: ToolRequest) => StandInAnswer | Promise<StandInAnswer>;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(path: string, answer: (req: ToolRequest) => StandInAnswer | Promise<StandInAnswer>) {
    this.path = path;
    this.answer = answer;
  }

  async start(): Promise<void> {
    rmSync(this.path, { force: true });
    this.server = createServer((s) => this.serve(s));
    await new Promise<void>((ok, fail) => {
      this.server!.once("error", fail);
      this.server!.listen(this.path, ok);
    });
    chmodSync(this.path, 0o600);
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    for (const c of this.sockets) c.destroy();
    await new Promise<void>((ok) => s.close(() => ok()));
    rmSync(this.path, { force: true });
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => {});
    let buffered = Buffer.alloc(0);
    // Answers go out in request order even when the test's function answers out of order.
    let queue = Promise.resolve();
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let nl = buffered.indexOf(0x0a); nl !== -1; nl = buffered.indexOf(0x0a)) {
        const line = buffered.subarray(0, nl);
        buffered = buffered.subarray(nl + 1);
        queue = queue.then(() => this.answerLine(socket, line));
      }
      if (buffered.length > MAX_LINE) {
        queue = queue.then(
          () =>
            void socket.end(JSON.stringify({ id: null, ok: false, error: "bad request: a line over 1 MiB" }) + "\n"),
        );
        buffered = Buffer.alloc(0);
      }
    });
  }

  private async answerLine(socket: Socket, bytes: Buffer): Promise<void> {
    const parsed = parseRequest(bytes);
    if ("bad" in parsed) {
      socket.write(JSON.stringify({ id: parsed.id, ok: false, error: `bad request: ${parsed.bad}` }) + "\n");
      return;
    }
    this.requests.push(parsed.req);
    const id = parsed.req.id ?? null;
    const a = await this.answer(parsed.req);
    if ("raw" in a) socket.write(a.raw);
    else if ("hangUp" in a) socket.destroy();
    else if ("silent" in a) return;
    else
      socket.write(
        JSON.stringify(a.ok ? { id, ok: true, result: a.result } : { id, ok: false, error: a.error }) + "\n",
      );
  }
}

function parseRequest(bytes: Buffer): { req: ToolRequest } | { bad: string; id: string | number | null } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { bad: "not UTF-8", id: null };
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { bad: "not JSON", id: null };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { bad: "not a JSON object", id: null };
  const o = v as Record<string, unknown>;
  const id = typeof o.id === "string" || typeof o.id === "number" ? o.id : null;
  if (o.id !== undefined && id === null) return { bad: "id is neither a string nor a number", id: null };
  if (typeof o.tool !== "string" || o.tool === "") return { bad: "tool is not a name", id };
  if (typeof o.args !== "object" || o.args === null || Array.isArray(o.args))
    return { bad: "args is not an object", id };
  return { req: { ...(id !== null ? { id } : {}), tool: o.tool, args: o.args as Record<string, unknown> } };
}
