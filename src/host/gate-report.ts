// The gate's report of each decision to the runner's tool socket, which the runner's tripwire
// matches against the calls the harness's event stream says completed. A report that does not
// arrive changes no decision: an allowed call without its report trips the turn (fail closed).
import { createHash } from "node:crypto";
import { GATE_REPORT_TOOL } from "../core/runner/tripwire.ts";
import { callTool, type ToolOutcome } from "./tool-client.ts";

/** Short beside the hook's 10 s: the runner answers a report without a broker round trip. */
const REPORT_TIMEOUT_MS = 2000;

/** sha256 of the input's JSON: the record names what was decided without holding it. */
export function inputDigest(input: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(input) ?? "undefined")
    .digest("hex");
}

export function reportDecision(
  socket: string | undefined,
  d: { call: unknown; tool: unknown; input: unknown; allow: boolean },
): Promise<ToolOutcome> {
  return callTool(
    socket,
    GATE_REPORT_TOOL,
    { call: d.call, tool: d.tool, allow: d.allow, digest: inputDigest(d.input) },
    { timeoutMs: REPORT_TIMEOUT_MS },
  );
}
