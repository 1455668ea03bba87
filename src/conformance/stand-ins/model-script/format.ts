import { z } from "zod";
import { MosaicError, type MosaicErrorCode } from "../../../core/errors.ts";
import { formatPath } from "../../../core/launch/instance.ts";

/**
 * The scripted model's replies as data a YAML scenario can hold: `{turns: [reply, ...]}`, one
 * reply per model call, in order. A reply is fixed (a tool call, or text that ends the turn) or
 * depends on the tool results the request carried (a template, a branch).
 */
export type Reply =
  | { tool_use: { name: string; input: Record<string, unknown> } }
  | { text: string }
  | { text_from_tool_results: { template: string } }
  | { when_tool_result_contains: string; then: Reply; else: Reply };

export interface ModelScript {
  readonly turns: readonly Reply[];
  /** Where the script came from, for error messages. */
  readonly source: string;
}

/** What each reply kind is for; a reply has exactly one of these keys (a branch adds then/else). */
export const REPLY_KINDS = {
  tool_use: "a tool call; the CLI runs the tool and calls the model again with its result",
  text: "plain text that ends the turn",
  text_from_tool_results: "text made from the tool results of this request, to echo what the session saw",
  when_tool_result_contains:
    "a branch on what a tool result said: then if one of this request's results contains the string, else otherwise",
} as const;

/** Template variables filled per request from its body, only inside text_from_tool_results.template. */
export const REQUEST_TEMPLATE_VARS = {
  last_tool_result: "the text of the last tool result in the request's last message",
  tool_results: "the texts of every tool result in the request's last message, one per line",
} as const;

const TEMPLATE_VAR = /\{\{([^{}]*)\}\}/g;
const TEMPLATE_VAR_NAME = /^[a-z][a-z0-9_]*$/;
// Anthropic's rule for tool names; Claude Code's MCP names (mcp__mosaic__read) fit it.
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

const ToolUse = z.strictObject({
  name: z.string().regex(TOOL_NAME, "a tool name: 1 to 128 letters, digits, _ or -"),
  input: z.record(z.string(), z.unknown(), { error: "the tool's input is an object of its fields" }),
});
const Template = z.strictObject({ template: z.string().min(1) });
const Text = z.string().min(1, "empty text: both CLIs need something to show");
const Needle = z.string().min(1, "an empty string is in every result: a branch that never branches");

function fail(field: string, message: string, source: string, code: MosaicErrorCode = "bad-script"): never {
  throw new MosaicError(code, field, `${message} (${source})`);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const seg of path)
    v = typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[seg] : undefined;
  return v;
}

function check<T>(schema: z.ZodType<T>, value: unknown, at: readonly PropertyKey[], source: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  // A misspelt key also leaves the right one missing; the unknown key is the one to name.
  const issue = r.error.issues.find((i) => i.code === "unrecognized_keys") ?? r.error.issues[0]!;
  const missing = issue.code !== "unrecognized_keys" && valueAt(value, issue.path) === undefined;
  // An unknown key is reported at its parent; name the key itself, where a person would look.
  const path = issue.code === "unrecognized_keys" ? [...at, ...issue.path, issue.keys[0]!] : [...at, ...issue.path];
  const message =
    issue.code === "unrecognized_keys" ? "not a field here (a typo?)" : missing ? "missing" : issue.message;
  return fail(formatPath(path), message, source, missing ? "missing-field" : "bad-script");
}

function parseReply(value: unknown, at: readonly PropertyKey[], source: string): Reply {
  const kinds = Object.keys(REPLY_KINDS).join(", ");
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return fail(formatPath(at), `a reply is an object with one of ${kinds}`, source);
  const keys = Object.keys(value);
  const kind = keys.filter((k) => Object.hasOwn(REPLY_KINDS, k));
  if (kind.length !== 1) {
    const got = keys.length === 0 ? "no key" : `keys ${keys.join(", ")}`;
    return fail(formatPath(at), `a reply has exactly one of ${kinds}; got ${got}`, source);
  }
  const v = value as Record<string, unknown>;
  switch (kind[0] as keyof typeof REPLY_KINDS) {
    case "tool_use":
      return check(z.strictObject({ tool_use: ToolUse }), v, at, source);
    case "text":
      return check(z.strictObject({ text: Text }), v, at, source);
    case "text_from_tool_results":
      return check(z.strictObject({ text_from_tool_results: Template }), v, at, source);
    case "when_tool_result_contains": {
      check(z.strictObject({ when_tool_result_contains: Needle, then: z.unknown(), else: z.unknown() }), v, at, source);
      return {
        when_tool_result_contains: v.when_tool_result_contains as string,
        then: parseReply(v.then, [...at, "then"], source),
        else: parseReply(v.else, [...at, "else"], source),
      };
    }
  }
}

/** Every string a reply holds, with its path: where template variables may stand. */
function* stringsOf(value: unknown, at: readonly PropertyKey[]): Generator<[string, readonly PropertyKey[]]> {
  if (typeof value === "string") yield [value, at];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* stringsOf(v, [...at, i]);
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) yield* stringsOf(v, [...at, k]);
}

const isTemplate = (at: readonly PropertyKey[]) => at.at(-1) === "template" && at.at(-2) === "text_from_tool_results";

/** Rejects a `{{` that is not a well-formed template variable, and a request template variable outside a template. */
function checkTemplateVars(turns: readonly Reply[], source: string): void {
  for (const [s, at] of stringsOf(turns, ["turns"])) {
    for (const m of s.matchAll(TEMPLATE_VAR)) {
      const name = m[1]!;
      if (!TEMPLATE_VAR_NAME.test(name))
        fail(
          formatPath(at),
          `{{${name}}} is not a template variable: lower-case letters, digits and _ between {{ and }}`,
          source,
          "bad-template-var",
        );
      if (Object.hasOwn(REQUEST_TEMPLATE_VARS, name) && !isTemplate(at))
        fail(
          formatPath(at),
          `{{${name}}} is filled per request, so only text_from_tool_results.template may hold it`,
          source,
          "bad-template-var",
        );
    }
    if (s.replace(TEMPLATE_VAR, "").includes("{{")) fail(formatPath(at), "an unclosed {{", source, "bad-template-var");
  }
}

/**
 * Validates a script document, `{turns: [...]}`, and returns it typed. A malformed script throws a
 * MosaicError whose field names the turn, e.g. `turns[2].tool_use.input`.
 */
export function loadModelScript(doc: unknown, opts: { source: string }): ModelScript {
  const { source } = opts;
  const top = check(
    z.strictObject(
      { turns: z.array(z.unknown(), { error: "a list of replies" }).min(1, "a script needs at least one turn") },
      { error: "a script is an object {turns: [...]}" },
    ),
    doc,
    [],
    source,
  );
  const turns = top.turns.map((t, i) => parseReply(t, ["turns", i], source));
  checkTemplateVars(turns, source);
  return { turns, source };
}

/**
 * Fills the run's template variables (`{{workspace}}`, `{{run}}`, ...) from an explicit map. A
 * template variable the map lacks is an error naming it and its field; request template variables inside
 * templates are left for the request.
 */
export function fillTemplateVars(script: ModelScript, values: Readonly<Record<string, string>>): ModelScript {
  for (const name of Object.keys(values)) {
    if (Object.hasOwn(REQUEST_TEMPLATE_VARS, name))
      fail("(values)", `{{${name}}} is filled per request; a run cannot set it`, script.source, "bad-template-var");
  }
  const known = Object.keys(values).sort().join(", ") || "none";
  const fill = (value: unknown, at: readonly PropertyKey[]): unknown => {
    if (typeof value === "string") {
      return value.replace(TEMPLATE_VAR, (whole, name: string) => {
        if (Object.hasOwn(values, name)) return values[name]!;
        if (Object.hasOwn(REQUEST_TEMPLATE_VARS, name) && isTemplate(at)) return whole;
        return fail(
          formatPath(at),
          `{{${name}}} is not a template variable this run fills (${known})`,
          script.source,
          "unknown-template-var",
        );
      });
    }
    if (Array.isArray(value)) return value.map((v, i) => fill(v, [...at, i]));
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, [...at, k])]));
    return value;
  };
  return { source: script.source, turns: script.turns.map((t, i) => fill(t, ["turns", i]) as Reply) };
}

/** The run template variables still in a script, with their fields: a script served with one left would send `{{workspace}}` to a tool. */
export function unfilledTemplateVars(script: ModelScript): Array<{ field: string; name: string }> {
  const out: Array<{ field: string; name: string }> = [];
  for (const [s, at] of stringsOf(script.turns, ["turns"])) {
    for (const m of s.matchAll(TEMPLATE_VAR))
      if (!(Object.hasOwn(REQUEST_TEMPLATE_VARS, m[1]!) && isTemplate(at)))
        out.push({ field: formatPath(at), name: m[1]! });
  }
  return out;
}

/** A script written inline by a test: its turns, loaded and checked like any other. */
export function scriptOf(turns: readonly Reply[], source = "an inline test script"): ModelScript {
  return loadModelScript({ turns }, { source });
}
