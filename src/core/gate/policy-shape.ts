import type { Policy } from "../policy.ts";
import { isAbsolute } from "../paths.ts";
import { normaliseAbsolute } from "./pi-paths.ts";

/** The fields of policy.json the gate reads; the rest of Policy is the launch plan's record. */
export type GatePolicy = Pick<Policy, "workspace" | "home" | "builtInTools" | "typedTools">;

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** The policy the gate can use, or why not: a malformed policy blocks every call. */
export function readGatePolicy(policy: unknown): GatePolicy | { malformed: string } {
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) return { malformed: "not a JSON object" };
  const p = policy as Record<string, unknown>;
  for (const f of ["workspace", "home"] as const) {
    const v = p[f];
    if (typeof v !== "string" || !isAbsolute(v) || v.includes("\0"))
      return { malformed: `${f} is not an absolute path` };
  }
  for (const f of ["builtInTools", "typedTools"] as const) {
    if (!isStringArray(p[f])) return { malformed: `${f} is not a list of names` };
  }
  return {
    workspace: normaliseAbsolute(p.workspace as string),
    home: normaliseAbsolute(p.home as string),
    builtInTools: p.builtInTools as string[],
    typedTools: p.typedTools as string[],
  };
}
