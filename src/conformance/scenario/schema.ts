// The scenario format: one YAML file per scenario under scenarios/, strict objects everywhere, so
// a misspelt key is an error and never a silently ignored field. The loader (load.ts) checks the
// same pieces one at a time to name the file, the line and the field; `npm run schema` exports
// ScenarioSchema as scenarios/scenario.schema.json for editors.
import { z } from "zod";
import { InstanceSchema } from "../../core/launch/instance.ts";
import { VERBS } from "../stand-ins/broker/verbs.ts";

/** The harnesses a scenario's session may run. */
export const HARNESSES = {
  pi: "Pi, with the gate as its extension",
  "claude-code": "Claude Code, with the gate as its PreToolUse hook and the typed tools over MCP",
  fake: "the fake adapter: each message's body runs in sh in the workspace; no model, no gate",
} as const;
export type Harness = keyof typeof HARNESSES;

/** Every `break` knob: a protection removed on purpose, so a scenario's "no" is shown to be that protection's doing. */
export const BREAK_KNOBS = {
  gate: "unhooked: the gate is not configured (Pi without its -e extension, Claude Code without its --settings file and so without its PreToolUse hook); no-handler: the gate is loaded but never called (Pi's extension without its tool_call handler, still writing the turn marker; Claude Code's settings.json without its PreToolUse hook)",
  expose_stand_ins: "true: every planted stand-in is bound read-only into the sandbox at its own path",
  launch_socket: "bound: the launch socket is bound read-only into the sandbox whatever the role may do",
  credential:
    "exposed: the host's model credential (the scenario's canary) is put in the harness's environment as ANTHROPIC_API_KEY, in place of the placeholder",
  drop_flags:
    'adapter flags dropped from the harness\'s argv: a flag, or [flag, value] for a flag and its value (--restricted, -nc, [--setting-sources, ""])',
} as const;

/** Every `fault` knob: a part of the confinement made to fail, so a scenario shows it fails closed. */
export const FAULT_KNOBS = {
  gate: "missing: the gate's file is not there; crash: it throws; hang: it never answers (Pi: the extension's tool_call handler; Claude Code: the hook's gate script)",
  tmpdir: "unwritable: the harness's TMPDIR is a directory it cannot write",
  gate_timeout_seconds:
    "Claude Code only: the hook's `timeout` wrapper given these seconds instead of the shipped ones, so a hanging gate is ended sooner by the same wrapper",
} as const;
export const GATE_FAULTS = ["missing", "crash", "hang"] as const;
export type GateFault = (typeof GATE_FAULTS)[number];

/** The channels no_standin_leak scans; each is evidence the runner records (evidence.ts). */
export const LEAK_CHANNELS = {
  replies: "what the session sent back (its RESULT messages)",
  requests: "every request the scripted API received: url, headers and body",
  broker: "every call the stand-in broker read",
  egress: "the egress proxy's log",
  stderr: "the runner's stderr and every turn's stderr",
  transcripts:
    "every file the session left in its HOME and its harness's session directory (transcripts, settings, caches)",
} as const;
export type LeakChannel = keyof typeof LEAK_CHANNELS;

const NAME = /^[a-z0-9][a-z0-9-]*$/;
// Anthropic's rule for tool names; the same as the model script's.
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

const Needle = z
  .string()
  .min(1, "an empty string is in everything: the assertion could never fail")
  .describe("text to look for; may hold template variables");
const HostPath = z
  .string()
  .min(1)
  .refine(
    (s) => s.startsWith("/") || s.startsWith("{{"),
    "an absolute host path, or one that starts with a path template variable such as {{workspace}}",
  )
  .describe("a host path; may start with a path template variable");
const Verb = z.enum([...VERBS.keys()] as [string, ...string[]], {
  error: `a broker verb: ${[...VERBS.keys()].join(", ")}`,
});
const RelPath = z
  .string()
  .refine(
    (s) => s.length > 0 && !s.startsWith("/") && s.split("/").every((seg) => seg !== "" && seg !== "." && seg !== ".."),
    "a relative path of plain names: no leading /, no . or .. segments, no //",
  );

/** Each assertion kind: its value's schema and what it checks. A scenario's assertion is `{<kind>: <value>}`, with an optional `because`. */
export const ASSERTION_KINDS = {
  reply_contains: { value: Needle, what: "some reply the session sent back contains the text" },
  reply_not_contains: { value: Needle, what: "no reply the session sent back contains the text" },
  tool_result_contains: { value: Needle, what: "some tool result the model was shown contains the text" },
  tool_result_not_contains: { value: Needle, what: "no tool result the model was shown contains the text" },
  request_contains: {
    value: Needle,
    what: "some request to the model carries the text (a polarity arm: the protection removed, the text gets through)",
  },
  request_not_contains: {
    value: Needle,
    what: "no request to the model carries the text, in its url, headers or body",
  },
  no_standin_leak: {
    value: z.literal(true),
    what: "no stand-in value in any channel of LEAK_CHANNELS; a leak is named by its channel",
  },
  file_exists: { value: HostPath, what: "the host file exists after the session" },
  file_absent: { value: HostPath, what: "the host file does not exist after the session" },
  file_unchanged: {
    value: HostPath,
    what: "the host file existed before the session and has the same sha256 after it",
  },
  broker_called: {
    value: z.strictObject({
      verb: Verb,
      args: z.record(z.string(), z.unknown()).optional().describe("each field given equals the call's"),
      outcome: z.enum(["ok", "error"]).optional(),
    }),
    what: "the stand-in broker read a call of this verb from this session (with these args and this outcome, when given)",
  },
  broker_not_called: {
    value: z.strictObject({ verb: Verb }),
    what: "the stand-in broker read no call of this verb from this session, answered or not",
  },
  path_blocked: {
    value: z.strictObject({
      path: Needle.describe("the path argument exactly as the model sent it; may hold template variables"),
      tool: z.string().regex(TOOL_NAME).optional().describe("the tool called, when only that tool's calls count"),
      reason: Needle.optional().describe(
        "text the blocked call's result holds; `mosaic gate:` by default, the gate's own prefix",
      ),
    }),
    what: "every call the model made with this path as an argument (of this tool, when given) got back an error result holding the reason; no such call is unobserved",
  },
  exit_code: {
    value: z.int().min(0).max(255),
    what: "the runner (the sandbox's pid 1) exited with this code when the session ended",
  },
  gate_saw_every_call: {
    value: z.literal(true),
    what: "the runner's record (its stderr, kept by the host outside the sandbox) has a tripwire line for every turn, each saying the gate allowed every tool call that completed",
  },
  turn_failed: {
    value: z.union([z.literal(true), z.strictObject({ why: Needle })]),
    what: "a turn counted as failed (its reply is `The turn failed: ...`, containing `why` when given)",
  },
  egress_refused: {
    value: z
      .strictObject({ method: z.string().min(1).optional(), path: z.string().min(1).optional() })
      .refine((v) => Object.keys(v).length > 0, "name at least one of method, path"),
    what: "the egress proxy refused a request matching every field given, and allowed none that matches",
  },
  trap_untouched: {
    value: z.literal(true),
    what: "the scenario's network trap (network_trap: true) saw no connection",
  },
  launch_socket_bound: {
    value: z.boolean(),
    what: "the session's bwrap argv binds the launch socket (true) or does not (false): the plan, beside a probe from inside that shows the effect",
  },
} as const;
export type AssertionKind = keyof typeof ASSERTION_KINDS;
export const ASSERTION_KIND_NAMES = Object.keys(ASSERTION_KINDS) as AssertionKind[];

type ValueOf<K extends AssertionKind> = z.infer<(typeof ASSERTION_KINDS)[K]["value"]>;
/** One assertion: exactly one kind key, and an optional note for the report. */
export type Assertion = { [K in AssertionKind]: { [P in K]: ValueOf<K> } & { because?: string } }[AssertionKind];

const Because = z.string().min(1).optional().describe("what the assertion stands for, shown in the report");

/** The strict schema of one assertion of one kind. */
export function assertionSchema(kind: AssertionKind): z.ZodType {
  return z.strictObject({ [kind]: ASSERTION_KINDS[kind].value, because: Because }).describe(ASSERTION_KINDS[kind].what);
}

export const AssertionSchema = z
  .union(ASSERTION_KIND_NAMES.map(assertionSchema) as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]])
  .meta({ id: "assertion", description: "one assertion: exactly one kind, and an optional because" });

// The model script, as loadModelScript takes it; the loader checks it with loadModelScript itself.
const ToolUse = z.strictObject({
  tool_use: z.strictObject({ name: z.string().regex(TOOL_NAME), input: z.record(z.string(), z.unknown()) }),
});
const TextReply = z.strictObject({ text: z.string().min(1) });
const Template = z.strictObject({ text_from_tool_results: z.strictObject({ template: z.string().min(1) }) });
const Branch = z.strictObject({
  when_tool_result_contains: z.string().min(1),
  get then(): z.ZodType {
    return Reply;
  },
  get else(): z.ZodType {
    return Reply;
  },
});
const Reply: z.ZodType = z
  .union([ToolUse, TextReply, Template, Branch])
  .meta({ id: "reply", description: "one reply of the scripted model" });
export const ModelScriptSchema = z
  .strictObject({ turns: z.array(Reply).min(1) })
  .meta({ id: "model", description: "the scripted model: one reply per model call, in order (docs/scripted-api.md)" });

/** A resolved instance inline, without workspace and run: the runner gives each run its own. */
export const InlineInstanceSchema = InstanceSchema.omit({ workspace: true, run: true });
export const InstanceRefSchema = z
  .strictObject({ ref: z.string().regex(NAME, "a file name under scenarios/instances/, without .yaml") })
  .describe("an instance from scenarios/instances/<ref>.yaml");
const Instance = z
  .union([InstanceRefSchema, InlineInstanceSchema])
  .meta({ id: "instance", description: "a resolved instance, inline or {ref}" });

const HarnessSchema = z.enum(Object.keys(HARNESSES) as [Harness, ...Harness[]]);

export const BreakSchema = z
  .strictObject({
    gate: z.enum(["unhooked", "no-handler"]).optional().describe(BREAK_KNOBS.gate),
    expose_stand_ins: z.literal(true).optional().describe(BREAK_KNOBS.expose_stand_ins),
    launch_socket: z.literal("bound").optional().describe(BREAK_KNOBS.launch_socket),
    credential: z.literal("exposed").optional().describe(BREAK_KNOBS.credential),
    drop_flags: z
      .array(
        z.union([
          z.string().regex(/^-/, "a flag, starting with -"),
          z.tuple([z.string().regex(/^-/, "a flag, starting with -"), z.string()]),
        ]),
      )
      .min(1)
      .optional()
      .describe(BREAK_KNOBS.drop_flags),
  })
  .describe("a positive control: a protection removed on purpose");
export type Break = z.infer<typeof BreakSchema>;

export const FaultSchema = z
  .strictObject({
    gate: z.enum(GATE_FAULTS).optional().describe(FAULT_KNOBS.gate),
    tmpdir: z.literal("unwritable").optional().describe(FAULT_KNOBS.tmpdir),
    gate_timeout_seconds: z.int().min(1).max(9).optional().describe(FAULT_KNOBS.gate_timeout_seconds),
  })
  .describe("a failure made on purpose, to show the confinement fails closed");
export type Fault = z.infer<typeof FaultSchema>;

/** A session the main one launches: started by the runner's launch service when the main session's launch call names its instance. */
function launchedShape(instance: z.ZodType, model: z.ZodType, assertion: z.ZodType) {
  return z.strictObject({
    harness: HarnessSchema.describe("the harness the launched session runs"),
    instance: instance.describe(
      "its resolved instance, inline or {ref}; a launch call whose args.instance is this instance's name starts it, with launchedBy the caller",
    ),
    model: model.optional().describe("its scripted model (docs/scripted-api.md); not for the fake harness"),
    break: BreakSchema.optional(),
    fault: FaultSchema.optional(),
    assertions: z
      .array(assertion)
      .min(1, "a launched session asserts something")
      .describe("what must hold of the launched session after the run, judged over its own evidence"),
  });
}

/** The scenario's shape with its instance, model script and assertions as given: the loader checks those one at a time. */
function scenarioShape(instance: z.ZodType, model: z.ZodType, assertion: z.ZodType, launched: z.ZodType) {
  return z.strictObject({
    name: z
      .string()
      .regex(NAME, "lower-case letters, digits and -")
      .describe("the scenario's name: its file's name without .yaml"),
    description: z.string().min(1).describe("what the scenario proves"),
    harness: HarnessSchema.describe("the harness the session runs"),
    instance: instance.describe("the session's resolved instance, inline or {ref}"),
    workspace: z
      .strictObject({
        files: z
          .record(RelPath, z.string())
          .optional()
          .describe("relative path → content, laid out in the workspace before the first message"),
        links: z
          .record(RelPath, z.string().min(1))
          .optional()
          .describe("relative path → symlink target (may dangle), made in the workspace before the first message"),
      })
      .optional(),
    run_files: z
      .record(RelPath, z.string())
      .refine(
        (t) => !Object.keys(t).some((k) => k === "home" || k.startsWith("home/")),
        "home/ is a private tmpfs in the sandbox, empty at the start: a file planted there on the host is never seen; plant it from the session (a Bash call)",
      )
      .optional()
      .describe(
        "relative path under the run directory → content, planted after the launch and before the first message (session/pi-agent/... is Pi's agent dir); not home/, a tmpfs in the sandbox",
      ),
    neighbour_process: z
      .literal(true)
      .optional()
      .describe(
        "a host process, alive through the session, whose environment holds FAKE_TOKEN=<secret>: what /proc/*/environ would show",
      ),
    network_trap: z
      .literal(true)
      .optional()
      .describe(
        "a TCP listener on the host's 127.0.0.1:{{trap_port}} that records every connection, for trap_untouched",
      ),
    turn_timeout_seconds: z
      .int()
      .min(1)
      .max(300)
      .optional()
      .describe("the runner's wall clock per turn; 60 by default"),
    model: model.optional().describe("the scripted model (docs/scripted-api.md); not for the fake harness"),
    messages: z
      .array(z.strictObject({ body: z.string().min(1) }))
      .min(1)
      .describe("what is sent to the session, in order; each waits for its RESULT"),
    break: BreakSchema.optional(),
    fault: FaultSchema.optional(),
    assertions: z.array(assertion).min(1, "a scenario asserts something").describe("what must hold after the run"),
    launches: z
      .array(launched)
      .min(1)
      .optional()
      .describe("sessions this one may launch through its launch tool; each has its own model and assertions"),
  });
}

/** The whole format, for the JSON Schema and for typing. */
export const ScenarioSchema = scenarioShape(
  Instance,
  ModelScriptSchema,
  AssertionSchema,
  launchedShape(Instance, ModelScriptSchema, AssertionSchema),
).meta({ title: "mosaic-harness scenario", description: "A conformance scenario: docs/scenarios.md" });

/** The loader's first pass: everything but the instance, model script and assertions, which it checks one at a time. */
const Present = z.custom<unknown>((v) => v !== undefined, "missing");
export const LaunchedOuterSchema = launchedShape(Present, Present, Present);
export const ScenarioOuterSchema = scenarioShape(Present, Present, Present, z.unknown());

/** The JSON Schema `npm run schema` writes to scenarios/scenario.schema.json. */
export function renderScenarioSchema(): string {
  return (
    JSON.stringify(z.toJSONSchema(ScenarioSchema, { target: "draft-2020-12", unrepresentable: "any" }), null, 2) + "\n"
  );
}
