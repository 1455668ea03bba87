import { z } from "zod";
import { MosaicError } from "../errors.ts";
import type { SandboxSpec } from "./types.ts";

const SpecSchema = z.strictObject({
  harness: z.string(),
  repo: z.string(),
  runnerFiles: z.array(z.string()).min(1),
  runner: z.string(),
  adapter: z.string(),
  brokerSocket: z.string(),
  launchSocket: z.string(),
  mayLaunch: z.boolean(),
  workspace: z.string(),
  runDir: z.string(),
  packages: z.array(z.string()).optional(),
});

/** Parses an untrusted document into a SandboxSpec; a bad one throws naming the first bad field. */
export function parseSandboxSpec(doc: unknown): SandboxSpec {
  const r = SpecSchema.safeParse(doc);
  if (r.success) return r.data as SandboxSpec;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(spec)";
  const code = issue.code === "invalid_type" && issue.message.includes("undefined") ? "missing-field" : "bad-field";
  throw new MosaicError(code, field, issue.message);
}
