import { z } from "zod";
import { NETWORK_MODES, type NetworkMode } from "../network/egress.ts";
import { MODEL_GRANTS, type ModelGrant } from "../network/grants.ts";
import { MosaicError } from "../errors.ts";
import { hasControlChar, isNormalAbsolute } from "../paths.ts";

/** Neutral names of the built-in tool limit; each harness module maps them to its own tools. */
export const TOOL_LIMIT_NAMES = ["read", "edit", "write", "bash", "grep", "find", "ls"] as const;

/**
 * Paths end up in argv, in a shell hook command and in Pi's unquoted -e list, so only characters
 * that need no quoting anywhere are accepted.
 */
const SAFE_PATH = /^[A-Za-z0-9._/@+-]+$/;

// safety: unsafe-path-accepted
const absolutePath = z.string().refine((p) => isNormalAbsolute(p) && !hasControlChar(p) && SAFE_PATH.test(p), {
  message: "must be a normal absolute path of letters, digits and . _ / @ + -",
});
const name = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, . _ -");
const varValue = z.string().min(1).optional();

const RouteVars = { harness: varValue, model: varValue, thinking: varValue };

export const InstanceSchema = z.strictObject({
  business: name,
  instance: name,
  role: name,
  run: name,
  launchedBy: z.string().min(1),
  workspace: absolutePath,
  vars: z.strictObject({ ...RouteVars, fallback: z.strictObject(RouteVars).optional() }),
  actions: z.strictObject({ withinRole: z.array(z.string().min(1)), crossRole: z.array(z.string().min(1)) }),
  limits: z.strictObject({ tools: z.array(z.enum(TOOL_LIMIT_NAMES)) }),
  services: z.array(name),
  /** What the session may reach (core/network/egress.ts): the model API only, or nothing. */
  network: z.enum(NETWORK_MODES.map((m) => m.mode) as [NetworkMode, ...NetworkMode[]]),
  /** Server-side model features the role is granted (core/network/grants.ts); none unless named. */
  modelGrants: z.array(z.enum(MODEL_GRANTS.map((g) => g.grant) as [ModelGrant, ...ModelGrant[]])).default([]),
  contract: z.string().min(1),
});

export type ResolvedInstance = z.infer<typeof InstanceSchema>;
export type RouteVarsValue = {
  harness?: string | undefined;
  model?: string | undefined;
  thinking?: string | undefined;
};

const SettingsSchema = z.strictObject({
  launch: z.strictObject({ models: z.array(z.string().min(1)) }),
  /** The switched-on harness modules (seed 003: plugins "harness"). */
  plugins: z.strictObject({ harness: z.array(z.string().min(1)) }),
});

export type LaunchSettings = z.infer<typeof SettingsSchema>;

/** "vars.fallback.model", "limits.tools[2]": the path as a person finds it in the document. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) out += typeof seg === "number" ? `[${seg}]` : `${out === "" ? "" : "."}${String(seg)}`;
  return out === "" ? "(document)" : out;
}

function parseWith<T>(schema: z.ZodType<T>, doc: unknown): T {
  const r = schema.safeParse(doc);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const missing = issue.code === "invalid_type" && issue.message.includes("undefined");
  // An unknown key is reported at its parent; name the key itself, where a person would look.
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  const message = issue.code === "unrecognized_keys" ? "not a field of the resolved instance (a typo?)" : issue.message;
  throw new MosaicError(missing ? "missing-field" : "bad-field", formatPath(path), message);
}

/**
 * Checks the shape of a resolved instance. Route values (a harness's name, its thinking levels,
 * the allowed models) are judged by the route check instead, so a launch and a route write refuse
 * with the same code and message.
 */
export function parseInstance(doc: unknown): ResolvedInstance {
  return parseWith(InstanceSchema, doc);
}

export function parseSettings(doc: unknown): LaunchSettings {
  return parseWith(SettingsSchema, doc);
}
