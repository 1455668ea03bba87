import { z } from "zod";

/** How a typed tool reaches the bus: one broker verb, or the host's launch socket for `launch`. */
export type ToolVia = { broker: string } | { launchSocket: true };

/**
 * Who gets the tool: an instance holding `action` (within-role or cross-role), or every session
 * ("read" and "always"). Presence is not permission: the broker still decides every call.
 */
export type ToolGrant = { action: string } | { every: "read" | "always" };

export interface TypedTool {
  name: string;
  via: ToolVia;
  grant: ToolGrant;
  input: z.ZodType;
  description: string;
}

const id = z.string().min(1).max(200);
const text = z.string().min(1).max(20_000);

/** The typed tool catalog (seed 000, "Typed tools"). Names are what the model sees (Claude Code prefixes mcp__mosaic__). */
export const TOOL_CATALOG: readonly TypedTool[] = [
  {
    name: "read_messages",
    via: { broker: "message.list" },
    grant: { every: "read" },
    input: z.strictObject({ since: id.optional() }),
    description: "List the messages addressed to this role since a message id.",
  },
  {
    name: "read_task",
    via: { broker: "task.get" },
    grant: { every: "read" },
    input: z.strictObject({ task: id }),
    description: "Read one task with its comments.",
  },
  {
    name: "list_tasks",
    via: { broker: "task.list" },
    grant: { every: "read" },
    input: z.strictObject({ state: z.enum(["open", "closed", "all"]).optional() }),
    description: "List the business's tasks, open ones by default.",
  },
  {
    name: "raise_decision",
    via: { broker: "decision.raise" },
    grant: { every: "always" },
    input: z.strictObject({ question: text, options: z.array(text).max(10).optional() }),
    description: "Ask a person to decide something this role may not decide alone.",
  },
  {
    name: "send_message",
    via: { broker: "message.send" },
    grant: { action: "message.send" },
    input: z.strictObject({ to: id, body: text }),
    description: "Send a message to another role of the business.",
  },
  {
    name: "create_task",
    via: { broker: "task.create" },
    grant: { action: "task.create" },
    input: z.strictObject({ title: z.string().min(1).max(200), body: text, assignee: id.optional() }),
    description: "Open a task, optionally assigned to a role.",
  },
  {
    name: "update_task",
    via: { broker: "task.update" },
    grant: { action: "task.update" },
    input: z.strictObject({ task: id, state: z.enum(["open", "closed"]).optional(), body: text.optional() }),
    description: "Change a task's state or description.",
  },
  {
    name: "comment_task",
    via: { broker: "task.comment" },
    grant: { action: "task.comment" },
    input: z.strictObject({ task: id, body: text }),
    description: "Add a comment to a task.",
  },
  {
    name: "launch",
    via: { launchSocket: true },
    grant: { action: "launch" },
    input: z.strictObject({ instance: id, message: text }),
    description: "Start a session of another role instance with a first message.",
  },
];

/** The tools one session gets: one per action it holds, the reads and raise_decision, in catalog order. */
export function selectTools(actions: readonly string[]): TypedTool[] {
  const held = new Set(actions);
  return TOOL_CATALOG.filter((t) => ("every" in t.grant ? true : held.has(t.grant.action)));
}

/** Every action an instance holds, within-role and cross-role alike: both get typed tools. */
export function heldActions(actions: { withinRole: readonly string[]; crossRole: readonly string[] }): string[] {
  return [...actions.withinRole, ...actions.crossRole];
}

/** Held actions no typed tool serves: listed in the manifest so a reviewer sees what the session cannot do. */
export function actionsWithoutTool(actions: readonly string[]): string[] {
  const served = new Set(TOOL_CATALOG.flatMap((t) => ("action" in t.grant ? [t.grant.action] : [])));
  return [...new Set(actions)].filter((a) => !served.has(a)).sort();
}

export function describeVia(via: ToolVia): string {
  return "broker" in via ? `broker ${via.broker}` : "launch socket";
}

/** tools.json's entries: the model-facing name, how the runner forwards it, and its JSON Schema. */
export function renderTools(tools: readonly TypedTool[], nameFor: (tool: string) => string): unknown[] {
  return tools.map((t) => ({
    name: t.name,
    harnessName: nameFor(t.name),
    via: t.via,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input),
  }));
}
