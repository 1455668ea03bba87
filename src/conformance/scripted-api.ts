import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted model reply: a tool call, or plain text that ends the turn. */
export type ScriptedReply =
  | { kind: "tool_use"; name: string; input: Record<string, unknown> }
  | { kind: "text"; text: string };

export interface RecordedRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * A scripted Anthropic Messages API on 127.0.0.1: each POST /v1/messages gets the next reply of
 * the script as the SSE stream both CLIs accept (with `event:` lines and `usage`, which Pi needs).
 * Every request is recorded so a test can assert what reached the model, such as a leaked secret.
 */
export class ScriptedApi {
  readonly requests: RecordedRequest[] = [];
  private replies: ScriptedReply[];
  private server: Server | undefined;
  private nextId = 1;

  constructor(replies: ScriptedReply[]) {
    this.replies = [...replies];
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((ok) => s.close(() => ok()));
  }

  /** Sets the replies still to come, for a script that names paths known only after start(). */
  replaceScript(replies: ScriptedReply[]): void {
    this.replies = [...replies];
  }

  /** Request bodies of the model calls, in order. */
  messageBodies(): string[] {
    return this.requests.filter((r) => r.method === "POST" && r.url.startsWith("/v1/messages")).map((r) => r.body);
  }

  /** Replies not yet served. */
  remaining(): number {
    return this.replies.length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    this.requests.push({ method: req.method ?? "", url: req.url ?? "", body });
    if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/messages")) {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    const reply = this.replies.shift() ?? { kind: "text", text: "(the script has no more replies)" };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const [event, data] of this.events(reply)) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  }

  private events(reply: ScriptedReply): Array<[string, unknown]> {
    const id = `msg_scripted_${this.nextId++}`;
    const usage = { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const block =
      reply.kind === "tool_use"
        ? { type: "tool_use", id: `toolu_scripted_${this.nextId}`, name: reply.name, input: {} }
        : { type: "text", text: "" };
    const delta =
      reply.kind === "tool_use"
        ? { type: "input_json_delta", partial_json: JSON.stringify(reply.input) }
        : { type: "text_delta", text: reply.text };
    return [
      ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model: "scripted", content: [], stop_reason: null, stop_sequence: null, usage } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: reply.kind === "tool_use" ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }],
      ["message_stop", { type: "message_stop" }],
    ];
  }
}

/** The text of each tool result in one Messages API request body: what the model was shown. */
export function toolResultsIn(body: string | undefined): string[] {
  if (body === undefined) return [];
  const out: string[] = [];
  for (const m of (JSON.parse(body) as { messages: Array<{ content: unknown }> }).messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type: string; content?: unknown }>) {
      if (b.type !== "tool_result") continue;
      out.push(typeof b.content === "string" ? b.content : (b.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n"));
    }
  }
  return out;
}
