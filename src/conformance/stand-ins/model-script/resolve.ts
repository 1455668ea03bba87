import type { Reply } from "./format.ts";

/** A reply with nothing left to decide: what goes on the wire. */
export type FixedReply = { tool_use: { name: string; input: Record<string, unknown> } } | { text: string };

/** Stands for a missing result in a template, so an echo of nothing still shows. */
export const NO_TOOL_RESULT = "(no tool result)";

type Block = {
  type: string;
  content?: unknown;
  id?: string;
  tool_use_id?: string;
  name?: string;
  input?: unknown;
  is_error?: boolean;
};
type Body = { messages: Array<{ content: unknown }> };

function resultText(b: Block): string {
  return typeof b.content === "string"
    ? b.content
    : Array.isArray(b.content)
      ? (b.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n")
      : "";
}

function resultsOf(content: unknown): string[] {
  return Array.isArray(content) ? (content as Block[]).filter((b) => b.type === "tool_result").map(resultText) : [];
}

function messagesOf(body: string): Body["messages"] {
  const parsed = JSON.parse(body) as Partial<Body>;
  if (!Array.isArray(parsed.messages)) throw new Error("the request body has no messages array");
  return parsed.messages;
}

/** The text of each tool result in one Messages API request body, over the whole conversation: what the model was shown. */
export function toolResultsIn(body: string | undefined): string[] {
  if (body === undefined) return [];
  return messagesOf(body).flatMap((m) => resultsOf(m.content));
}

/** One tool call the model made, with the result it was shown; null until a later request carries it. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  result: string | null;
  isError: boolean;
}

/** Every tool call in one request body's conversation, each paired with its result by tool_use_id. */
export function toolCallsIn(body: string): ToolCall[] {
  const blocks = messagesOf(body).flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : []));
  const results = new Map(
    blocks.filter((b) => b.type === "tool_result" && typeof b.tool_use_id === "string").map((b) => [b.tool_use_id!, b]),
  );
  return blocks
    .filter((b) => b.type === "tool_use")
    .map((b) => {
      const r = b.id === undefined ? undefined : results.get(b.id);
      return {
        name: b.name ?? "",
        input: (typeof b.input === "object" && b.input !== null ? b.input : {}) as Record<string, unknown>,
        result: r === undefined ? null : resultText(r),
        isError: r?.is_error === true,
      };
    });
}

/** The tool results in the request's last message: the answers to the previous turn's tool call. */
export function latestToolResults(body: string): string[] {
  return resultsOf(messagesOf(body).at(-1)?.content);
}

/** Decides a dynamic reply from the request body. Pure; a body that is not a Messages request throws. */
export function resolveReply(reply: Reply, body: string): FixedReply {
  if ("tool_use" in reply || "text" in reply) return reply;
  const results = latestToolResults(body);
  if ("text_from_tool_results" in reply) {
    const values: Record<string, string> = {
      last_tool_result: results.at(-1) ?? NO_TOOL_RESULT,
      tool_results: results.length > 0 ? results.join("\n") : NO_TOOL_RESULT,
    };
    return {
      text: reply.text_from_tool_results.template.replace(
        /\{\{(last_tool_result|tool_results)\}\}/g,
        (_w, name: string) => values[name]!,
      ),
    };
  }
  const hit = results.some((r) => r.includes(reply.when_tool_result_contains));
  return resolveReply(hit ? reply.then : reply.else, body);
}
