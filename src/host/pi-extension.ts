// The Pi extension (pi -e src/host/pi-extension.ts): every tool call goes through the same
// decide() as Claude Code's hook. The policy file is named by MOSAIC_POLICY_FILE. A missing or
// unreadable policy does not stop Pi from loading the extension; it blocks every call instead.
// At agent_end it writes the turn marker (MOSAIC_TURN_MARKER): the runner counts a Pi turn only
// when the marker proves the gated turn reached its end. It also registers the typed tools of
// MOSAIC_TOOLS_FILE, which call the runner's tool socket (src/host/pi-typed-tools.ts).
import { readFileSync, writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { decide } from "../core/gate/decide.ts";
import { realFsView } from "./fs-view.ts";
import type { FsView } from "../core/gate/fs-view.ts";
import { readToolsFile } from "./read-tools-file.ts";
import { TOOL_SOCKET_ENV } from "./tool-client.ts";
import { registerTypedTools } from "./pi-typed-tools.ts";
import { reportDecision } from "./gate-report.ts";

export const POLICY_ENV = "MOSAIC_POLICY_FILE";
export const MARKER_ENV = "MOSAIC_TURN_MARKER";

export type PolicySource = { policy: unknown } | { unreadable: string };

export function readPolicyFile(env: NodeJS.ProcessEnv): PolicySource {
  const file = env[POLICY_ENV];
  if (file === undefined || file === "") return { unreadable: `${POLICY_ENV} is not set` };
  // Relative, it would name a file in Pi's working directory: the workspace, which the session writes.
  if (!file.startsWith("/")) return { unreadable: `${POLICY_ENV} ${JSON.stringify(file)} is not an absolute path` }; // safety: gate-pi-relative-policy
  try {
    return { policy: JSON.parse(readFileSync(file, "utf8")) };
  } catch (e) {
    return { unreadable: `${file}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The tool_call handler's answer: undefined lets the call run, {block, reason} stops it. */
export function toolCallVerdict(
  source: PolicySource,
  toolName: unknown,
  input: unknown,
  fs: FsView,
): { block: true; reason: string } | undefined {
  // safety: gate-pi-no-policy-allows
  if ("unreadable" in source)
    return { block: true, reason: `mosaic gate: the policy could not be read (${source.unreadable})` };
  const d = decide(source.policy, toolName, input, fs);
  return d.allow ? undefined : { block: true, reason: `mosaic gate: ${d.reason}` };
}

export default function mosaicGate(pi: ExtensionAPI): void {
  const source = readPolicyFile(process.env);
  const fs = realFsView();
  pi.on("tool_call", async (event) => {
    const verdict = toolCallVerdict(source, event.toolName, event.input, fs);
    // The tripwire's evidence that the gate saw this call; the verdict stands whether it arrives or not.
    await reportDecision(process.env[TOOL_SOCKET_ENV], {
      call: event.toolCallId,
      tool: event.toolName,
      input: event.input,
      allow: verdict === undefined,
    });
    return verdict;
  });
  registerTypedTools(pi, readToolsFile(process.env), process.env[TOOL_SOCKET_ENV], (line) =>
    process.stderr.write(line + "\n"),
  );
  const marker = process.env[MARKER_ENV];
  // Without a marker path there is nothing to prove to; the runner then counts no Pi turn.
  if (marker !== undefined && marker !== "")
    pi.on("agent_end", () => writeFileSync(marker, `agent_end ${new Date().toISOString()}\n`));
}
