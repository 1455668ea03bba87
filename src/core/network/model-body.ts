// What a POST /v1/messages body may ask of the provider. Allowlists, not a list of known server
// tools: a body field, a tool type, a content block type or a source type the tables do not name
// is refused, so the next server-side tool, which arrives as a new type or field, is refused too
// until a grant names it. The tables hold what the pinned Claude Code and Pi send
// (baselines/model-requests.json), plus fields and blocks that reach nothing outside the prompt.
import { admittedBy, grantsAdmitting, type Admitted, type ModelGrant } from "./grants.ts";

export type BodyDecision = { kind: "pass" } | { kind: "refuse"; status: number; errorType: string; message: string };

type Row = { sentBy: string; why: string };

/** Top-level fields of the body. `mcp_servers` and `container` are grant-only (MODEL_GRANTS). */
export const BODY_FIELDS: readonly ({ field: string } & Row)[] = [
  { field: "model", sentBy: "claude-code, pi", why: "which model answers" },
  {
    field: "messages",
    sentBy: "claude-code, pi",
    why: "the conversation; every content block in it is checked against CONTENT_BLOCKS",
  },
  { field: "max_tokens", sentBy: "claude-code, pi", why: "the reply's length" },
  { field: "stream", sentBy: "claude-code, pi", why: "the reply as server-sent events" },
  { field: "system", sentBy: "claude-code, pi", why: "the system prompt; its blocks are checked like messages'" },
  {
    field: "tools",
    sentBy: "claude-code, pi",
    why: "tool definitions; each must be the client's own (CLIENT_TOOL_TYPES)",
  },
  { field: "thinking", sentBy: "claude-code, pi", why: "the thinking budget and how it is shown" },
  { field: "metadata", sentBy: "claude-code", why: "an opaque user_id for the provider's abuse checks" },
  {
    field: "context_management",
    sentBy: "claude-code",
    why: "the provider clears old thinking and tool results from the prompt",
  },
  { field: "output_config", sentBy: "claude-code (Opus 4.x)", why: "effort and output format" },
  { field: "tool_choice", sentBy: "(the API's)", why: "which of the body's own tools the model must use" },
  { field: "temperature", sentBy: "(the API's)", why: "sampling" },
  { field: "top_p", sentBy: "(the API's)", why: "sampling" },
  { field: "top_k", sentBy: "(the API's)", why: "sampling" },
  { field: "stop_sequences", sentBy: "(the API's)", why: "where the reply stops" },
];

/** A tool the client runs itself: no `type`, or "custom". Anthropic-defined tools (typed) run on the provider or need its schema; only a grant admits one. */
export const CLIENT_TOOL_TYPES: readonly ({ type: string | null } & Row)[] = [
  { type: null, sentBy: "claude-code, pi", why: "a tool the CLI defines and runs inside the sandbox, behind the gate" },
  { type: "custom", sentBy: "(the API's)", why: "the explicit spelling of the same" },
];

/** Content block types, in messages, system, tool results and document contents. Server-tool blocks are grant-only. */
export const CONTENT_BLOCKS: readonly ({ type: string } & Row)[] = [
  { type: "text", sentBy: "claude-code, pi", why: "words" },
  { type: "image", sentBy: "claude-code, pi", why: "an image whose bytes are in the body (SOURCE_TYPES)" },
  { type: "document", sentBy: "claude-code", why: "a PDF or text whose bytes are in the body (SOURCE_TYPES)" },
  { type: "tool_use", sentBy: "claude-code, pi", why: "a call of a client tool, already run inside the sandbox" },
  { type: "tool_result", sentBy: "claude-code, pi", why: "what a client tool returned; its blocks are checked too" },
  { type: "thinking", sentBy: "claude-code", why: "the model's own thinking, passed back signed" },
  { type: "redacted_thinking", sentBy: "claude-code", why: "the same, encrypted by the provider" },
  {
    type: "search_result",
    sentBy: "(the API's)",
    why: "text the client found, with a source label for citations; nothing is fetched",
  },
  { type: "tool_reference", sentBy: "(the API's)", why: "names a tool of the body's own tools[]" },
];

/** `source.type` of image and document blocks. `url` and `file` are grant-only. */
export const SOURCE_TYPES: readonly ({ type: string } & Row)[] = [
  { type: "base64", sentBy: "claude-code, pi", why: "the bytes are in the body: what the session read, nothing more" },
  { type: "text", sentBy: "(the API's)", why: "a plain-text document in the body" },
  { type: "content", sentBy: "(the API's)", why: "a document made of blocks in the body; each is checked" },
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 120) ?? String(v);

function refuse(at: string, what: string, kind: keyof Admitted | null, value: string): BodyDecision {
  const by = kind === null ? [] : grantsAdmitting(kind, value);
  return {
    kind: "refuse",
    status: 403,
    errorType: "permission_error",
    message: `${at}: ${what} is not one the session's proxy passes${by.length > 0 ? ` (it needs the grant ${by.join(" or ")})` : ""}`,
  };
}

const malformed = (at: string, what: string): BodyDecision => ({
  kind: "refuse",
  status: 400,
  errorType: "invalid_request_error",
  message: `${at}: ${what}`,
});

/**
 * One body's verdict, given the session's grants. Walks only where content blocks live (system,
 * messages[].content, tool_result and search_result content, a document's content source), with a
 * work list, so no input makes it recurse.
 */
export function decideModelBody(body: unknown, grants: readonly ModelGrant[]): BodyDecision {
  if (!isObj(body)) return malformed("(body)", "a Messages API request is a JSON object");
  const extra = admittedBy(grants);
  for (const field of Object.keys(body)) {
    const allowed = BODY_FIELDS.some((f) => f.field === field) || extra.fields.includes(field); // safety: body-field-allowlist
    if (!allowed) return refuse(field, `the body field ${JSON.stringify(field)}`, "fields", field);
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return malformed("tools", "a list of tool definitions");
    for (const [i, tool] of body.tools.entries()) {
      if (!isObj(tool)) return malformed(`tools[${i}]`, "a tool definition is an object");
      const type = tool.type ?? null;
      const client = CLIENT_TOOL_TYPES.some((t) => t.type === type); // safety: client-tools-only
      const granted = typeof type === "string" && extra.toolTypes.some((p) => type.startsWith(p));
      if (!client && !granted)
        return refuse(
          `tools[${i}].type`,
          `the tool type ${shown(type)} (a tool the provider runs or defines)`,
          typeof type === "string" ? "toolTypes" : null,
          String(type),
        );
    }
  }

  // Every place content blocks live, as [blocks, path]; a string is text and needs nothing.
  const work: Array<[unknown, string]> = [];
  if (body.system !== undefined) work.push([body.system, "system"]);
  if (!Array.isArray(body.messages)) return malformed("messages", "a list of messages");
  for (const [i, m] of body.messages.entries()) {
    if (!isObj(m)) return malformed(`messages[${i}]`, "a message is an object");
    work.push([m.content, `messages[${i}].content`]);
  }
  for (let next = work.pop(); next !== undefined; next = work.pop()) {
    const [blocks, at] = next;
    if (typeof blocks === "string") continue;
    if (!Array.isArray(blocks)) return malformed(at, "a string or a list of content blocks");
    for (const [j, b] of blocks.entries()) {
      const here = `${at}[${j}]`;
      if (!isObj(b) || typeof b.type !== "string")
        return malformed(here, "a content block is an object with a string type");
      const type = b.type;
      const known = CONTENT_BLOCKS.some((c) => c.type === type) || extra.blocks.includes(type); // safety: content-block-allowlist
      if (!known) return refuse(`${here}.type`, `the content block ${JSON.stringify(type)}`, "blocks", type);
      if (b.source !== undefined && typeof b.source !== "string") {
        // search_result's source is a label string; every object source is a fetch or a payload.
        if (!isObj(b.source) || typeof b.source.type !== "string")
          return malformed(`${here}.source`, "a source is an object with a string type");
        const st = b.source.type;
        const inline = SOURCE_TYPES.some((s) => s.type === st) || extra.sources.includes(st); // safety: source-type-allowlist
        if (!inline)
          return refuse(
            `${here}.source.type`,
            `the source ${JSON.stringify(st)} (the provider would fetch it)`,
            "sources",
            st,
          );
        if (st === "content") work.push([b.source.content, `${here}.source.content`]); // safety: document-content-checked
      }
      if (type === "tool_result" || type === "search_result") {
        if (b.content !== undefined) work.push([b.content, `${here}.content`]); // safety: nested-blocks-checked
      }
    }
  }
  return { kind: "pass" };
}
