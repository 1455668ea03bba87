import type { FixedReply } from "./resolve.ts";

export type SseEvent = { event: string; data: Record<string, unknown> };

/**
 * The stream both CLIs accept for one reply (DESIGN.md, "Driving the real CLIs"): one content
 * block, its whole content in one delta, `usage` in message_start and message_delta (Pi fails
 * without it). `seq` makes the message and tool-use ids unique within a conversation.
 */
export function sseEvents(reply: FixedReply, seq: number): SseEvent[] {
  const tool = "tool_use" in reply;
  const usage = { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const block = tool
    ? { type: "tool_use", id: `toolu_scripted_${seq}`, name: reply.tool_use.name, input: {} }
    : { type: "text", text: "" };
  const delta = tool
    ? { type: "input_json_delta", partial_json: JSON.stringify(reply.tool_use.input) }
    : { type: "text_delta", text: reply.text };
  return [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: `msg_scripted_${seq}`,
          type: "message",
          role: "assistant",
          model: "scripted",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: block } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
}

/** One event on the wire: an `event:` line (Pi needs it), a `data:` line, a blank line. */
export function encodeSseEvent(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The encoded body as a ReadableStream, one chunk per event, for an msw HttpResponse. */
export function sseStream(events: readonly SseEvent[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const e = events[i++];
      if (e === undefined) controller.close();
      else controller.enqueue(enc.encode(encodeSseEvent(e)));
    },
  });
}
