// Every verb of the stand-in broker's two sockets: pure. The typed-tool verbs validate their args
// with the catalog's own schemas, so the broker refuses exactly what the typed tool's caller was told.
import { z } from "zod";
import { formatPath } from "../../../core/launch/instance.ts";
import { TOOL_CATALOG } from "../../../core/tools/catalog.ts";
import type { ErrorCode } from "./protocol.ts";
import {
  deliver,
  policyOf,
  sentTo,
  type BrokerState,
  type Decision,
  type MessageKind,
  type SocketName,
  type StoredMessage,
  type Task,
} from "./store.ts";

/** Who calls: a live capability's binding. */
export interface Caller {
  cap: string;
  run: string;
  instance: string;
  business: string | null;
}

export type Exec = { state: BrokerState; result: unknown } | { refuse: string };

export interface VerbSpec {
  socket: SocketName;
  /** Whether the instance's policy decides it (the typed-tool verbs); role.* and message.read are the runner's own. */
  governed: (args: unknown) => boolean;
  why: string;
  parse: (raw: unknown) => { args: unknown } | { invalid: string };
  exec: (state: BrokerState, caller: Caller, args: unknown) => Exec;
}

// The casts erase T at the table: parse() only hands exec() what the schema accepted.
function defineVerb<T>(spec: {
  socket?: SocketName;
  governed: boolean | ((args: T) => boolean);
  why: string;
  args: z.ZodType<T>;
  exec: (state: BrokerState, caller: Caller, args: T) => Exec;
}): VerbSpec {
  return {
    socket: spec.socket ?? "broker",
    why: spec.why,
    governed: (a) => (typeof spec.governed === "boolean" ? spec.governed : spec.governed(a as T)),
    parse: (raw) => {
      const r = spec.args.safeParse(raw);
      return r.success ? { args: r.data } : { invalid: describeIssue(r.error.issues[0]!) };
    },
    exec: (state, caller, args) => spec.exec(state, caller, args as T),
  };
}

/** "args.to: Invalid input: expected string, received undefined": the zod path under args. */
function describeIssue(issue: z.core.$ZodIssue): string {
  // An unknown key is reported at its parent; name the key itself.
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  const message = issue.code === "unrecognized_keys" ? "not an argument of this verb" : issue.message;
  return `${formatPath(["args", ...path])}: ${message}`;
}

/** The catalog's input schema for a broker verb: the same one the typed tool's caller was given. */
function catalogArgs<T>(verb: string): z.ZodType<T> {
  const tool = TOOL_CATALOG.find((t) => ("broker" in t.via ? t.via.broker : "launch") === verb);
  if (tool === undefined) throw new Error(`the catalog has no tool for ${verb}`);
  return tool.input as z.ZodType<T>;
}

const id = z.string().min(1).max(200);
const NO_ARGS = z.strictObject({});

type SendArgs = { to: string; body: string; kind?: MessageKind; replyTo?: string };
// A model's send_message is the catalog's schema plus the runner's kind and replyTo. A result is
// a turn's whole output: it may be empty or longer than a tool's body, up to the line limit.
const SEND_MESSAGE = (catalogArgs<SendArgs>("message.send") as unknown as z.ZodObject).extend({
  kind: z.literal("message").optional(),
  replyTo: id.optional(),
});
const SEND_RESULT = z.strictObject({ to: id, body: z.string(), kind: z.literal("result"), replyTo: id.optional() });
const SEND_ARGS = z.discriminatedUnion("kind", [SEND_RESULT, SEND_MESSAGE]) as unknown as z.ZodType<SendArgs>;

function serialId(state: BrokerState, prefix: string): string {
  return `${prefix}-${state.serial}`;
}

function findTask(state: BrokerState, caller: Caller, task: string): Task | undefined {
  return state.tasks.find((t) => t.id === task && t.business === caller.business);
}

function replaceTask(state: BrokerState, task: Task): BrokerState {
  return { ...state, tasks: state.tasks.map((t) => (t.id === task.id ? task : t)) };
}

function publicMessage(m: StoredMessage): Omit<StoredMessage, "to" | "read"> {
  return {
    id: m.id,
    from: m.from,
    kind: m.kind,
    body: m.body,
    ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
  };
}

/** Every verb of both sockets. The typed-tool verbs validate their args with the catalog's own schemas. */
export const VERBS: ReadonlyMap<string, VerbSpec> = new Map<string, VerbSpec>([
  [
    "role.claim",
    defineVerb({
      governed: false,
      why: "the runner claims its role before anything else; one live claim per instance",
      args: NO_ARGS,
      exec: (s, c) => {
        if (policyOf(s, c.instance).claim === "refuse")
          return { refuse: `the broker refuses ${c.instance}'s claim (policy)` };
        const held = s.claims.get(c.instance);
        if (held !== undefined && held.run !== c.run) return { refuse: `${c.instance} is claimed by run ${held.run}` }; // safety: broker-one-claim
        return {
          state: { ...s, claims: new Map(s.claims).set(c.instance, { run: c.run, cap: c.cap }) },
          result: { instance: c.instance, run: c.run },
        };
      },
    }),
  ],
  [
    "role.release",
    defineVerb({
      governed: false,
      why: "the runner releases its role when it stops",
      args: NO_ARGS,
      exec: (s, c) => {
        const claims = new Map(s.claims);
        claims.delete(c.instance);
        return { state: { ...s, claims }, result: { released: true } };
      },
    }),
  ],
  [
    "message.read",
    defineVerb({
      governed: false,
      why: "the runner polls for the messages it has not yet read; reading marks them read",
      args: NO_ARGS,
      exec: (s, c) => {
        const unread = s.messages.filter((m) => m.to === c.instance && !m.read);
        const messages = s.messages.map((m) => (m.to === c.instance && !m.read ? { ...m, read: true } : m));
        return { state: { ...s, messages }, result: { messages: unread.map(publicMessage) } };
      },
    }),
  ],
  [
    "message.send",
    defineVerb({
      governed: (a) => a.kind !== "result",
      why: "send_message, and the runner's reply with a turn's result (a reply is not the policy's to refuse)",
      args: SEND_ARGS,
      exec: (s, c, a) => {
        const r = deliver(s, a.to, {
          from: c.instance,
          body: a.body,
          ...(a.kind === undefined ? {} : { kind: a.kind }),
          ...(a.replyTo === undefined ? {} : { replyTo: a.replyTo }),
        });
        return { state: r.state, result: { id: r.id } };
      },
    }),
  ],
  [
    "message.list",
    defineVerb({
      governed: true,
      why: "read_messages: the messages addressed to this instance after `since`, read or not",
      args: catalogArgs<{ since?: string }>("message.list"),
      exec: (s, c, a) => {
        const mine = sentTo(s, c.instance);
        const at = a.since === undefined ? -1 : mine.findIndex((m) => m.id === a.since);
        if (at === -1 && a.since !== undefined)
          return { refuse: `args.since: no message ${a.since} addressed to ${c.instance}` };
        return { state: s, result: { messages: mine.slice(at + 1).map(publicMessage) } };
      },
    }),
  ],
  [
    "task.get",
    defineVerb({
      governed: true,
      why: "read_task",
      args: catalogArgs<{ task: string }>("task.get"),
      exec: (s, c, a) => {
        const t = findTask(s, c, a.task);
        return t === undefined ? { refuse: `args.task: no task ${a.task}` } : { state: s, result: { task: t } };
      },
    }),
  ],
  [
    "task.list",
    defineVerb({
      governed: true,
      why: "list_tasks: the business's tasks, open ones by default",
      args: catalogArgs<{ state?: "open" | "closed" | "all" }>("task.list"),
      exec: (s, c, a) => {
        const want = a.state ?? "open";
        const tasks = s.tasks.filter((t) => t.business === c.business && (want === "all" || t.state === want));
        return {
          state: s,
          result: {
            tasks: tasks.map((t) => ({
              id: t.id,
              title: t.title,
              state: t.state,
              ...(t.assignee === undefined ? {} : { assignee: t.assignee }),
            })),
          },
        };
      },
    }),
  ],
  [
    "decision.raise",
    defineVerb({
      governed: true,
      why: "raise_decision",
      args: catalogArgs<{ question: string; options?: string[] }>("decision.raise"),
      exec: (s, c, a) => {
        const d: Decision = {
          id: serialId(s, "d"),
          business: c.business,
          by: c.instance,
          question: a.question,
          options: a.options ?? [],
        };
        return { state: { ...s, decisions: [...s.decisions, d], serial: s.serial + 1 }, result: { id: d.id } };
      },
    }),
  ],
  [
    "task.create",
    defineVerb({
      governed: true,
      why: "create_task",
      args: catalogArgs<{ title: string; body: string; assignee?: string }>("task.create"),
      exec: (s, c, a) => {
        const t: Task = {
          id: serialId(s, "t"),
          business: c.business,
          title: a.title,
          body: a.body,
          state: "open",
          ...(a.assignee === undefined ? {} : { assignee: a.assignee }),
          createdBy: c.instance,
          comments: [],
        };
        return { state: { ...s, tasks: [...s.tasks, t], serial: s.serial + 1 }, result: { id: t.id } };
      },
    }),
  ],
  [
    "task.update",
    defineVerb({
      governed: true,
      why: "update_task",
      args: catalogArgs<{ task: string; state?: "open" | "closed"; body?: string }>("task.update"),
      exec: (s, c, a) => {
        const t = findTask(s, c, a.task);
        if (t === undefined) return { refuse: `args.task: no task ${a.task}` };
        const next: Task = {
          ...t,
          ...(a.state === undefined ? {} : { state: a.state }),
          ...(a.body === undefined ? {} : { body: a.body }),
        };
        return { state: replaceTask(s, next), result: { task: next } };
      },
    }),
  ],
  [
    "task.comment",
    defineVerb({
      governed: true,
      why: "comment_task",
      args: catalogArgs<{ task: string; body: string }>("task.comment"),
      exec: (s, c, a) => {
        const t = findTask(s, c, a.task);
        if (t === undefined) return { refuse: `args.task: no task ${a.task}` };
        const comment = { id: serialId(s, "c"), by: c.instance, body: a.body };
        return {
          state: { ...replaceTask(s, { ...t, comments: [...t.comments, comment] }), serial: s.serial + 1 },
          result: { id: comment.id },
        };
      },
    }),
  ],
  [
    "launch",
    defineVerb({
      socket: "launch",
      governed: true,
      why: "the launch tool: only the launch socket, which only a launching role's sandbox binds",
      args: catalogArgs<{ instance: string; message: string }>("launch"),
      exec: (s, c, a) => ({
        state: {
          ...s,
          launches: [...s.launches, { by: c.instance, run: c.run, instance: a.instance, message: a.message }],
        },
        result: { launched: true, instance: a.instance },
      }),
    }),
  ],
]);

/** A catalog tool's name sent as a verb: the caller skipped the runner's mapping. */
const TOOL_NAMES: ReadonlyMap<string, string> = new Map(
  TOOL_CATALOG.map((t) => [
    t.name,
    "broker" in t.via ? `its broker verb is ${t.via.broker}` : "it goes to the launch socket as launch",
  ]),
);

/** The answer to a verb this socket does not serve. */
export function misdirected(verb: string, socket: SocketName): { code: ErrorCode; message: string } {
  const spec = VERBS.get(verb);
  if (socket === "launch")
    return { code: "unknown-verb", message: `the launch socket serves launch only, not ${verb}` };
  if (spec !== undefined)
    return { code: "refused", message: `${verb} is served by the launch socket, not the broker socket` };
  const tool = TOOL_NAMES.get(verb);
  if (tool !== undefined)
    return { code: "refused", message: `${verb} is a typed tool's name, not a broker verb: ${tool}` };
  return { code: "unknown-verb", message: `${verb} is not a verb of the broker socket` };
}
