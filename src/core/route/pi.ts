import type { HarnessModule, PreflightFacts, Preflight, RunPaths } from "./types.ts";
import { isVersionAtLeast } from "./versions.ts";

/** Pi 0.85.1 needs this node or newer (DESIGN.md, "Driving the real CLIs"). */
export const PI_MIN_NODE = "22.19";

const PI_BUILTINS: Readonly<Record<string, string>> = {
  read: "read",
  edit: "edit",
  write: "write",
  bash: "bash",
  grep: "grep",
  find: "find",
  ls: "ls",
};

function preflightPi(f: PreflightFacts): Preflight {
  if (!f.binary.exists) return { ok: false, why: `pi: ${f.binary.path} does not exist` }; // safety: pi-preflight-missing-ignored
  if (!f.binary.runs) return { ok: false, why: `pi: ${f.binary.path} --version did not run` };
  if (!isVersionAtLeast(f.nodeVersion, PI_MIN_NODE))
    return { ok: false, why: `pi: node ${f.nodeVersion} is older than ${PI_MIN_NODE}` };
  return { ok: true };
}

export function piAgentDir(p: RunPaths): string {
  return `${p.runDir}/session/pi-agent`;
}

export const pi: HarnessModule = {
  name: "pi",
  thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh", "max"],
  thinkingRequired: false,
  providers: ["anthropic"],
  preflight: preflightPi,
  versionProbe: (binary) => [binary, "--version"],
  sandboxMounts: ["node-modules"],
  builtInTools: (limit) => limit.map((t) => PI_BUILTINS[t]).filter((t): t is string => t !== undefined), // safety: pi-bash-ungranted
  typedToolName: (tool) => tool,
  gate: {
    timeoutSeconds: 900,
    how: "the gate runs in Pi's process; a hang is cut by the runner's turn wall clock, and without the agent_end marker the turn failed",
  },
  bundleFiles: [],
  adapterEnv: (p) => ({
    PI_CODING_AGENT_DIR: piAgentDir(p),
    PI_OFFLINE: "1",
    MOSAIC_TURN_MARKER: `${p.runDir}/turn.done`,
    MOSAIC_EXTENSIONS: `${p.repo}/src/host/pi-extension.ts`,
  }),
  turnEnd: (p) => ({
    kind: "marker",
    file: `${p.runDir}/turn.done`,
    writtenAt: "agent_end",
    why: "Pi exits 0 even when the extension never saw the turn end; only the marker proves the gated turn finished",
  }),
  eventStream: "pi-json",
  sessionFiles: (p) => `${piAgentDir(p)}/sessions`,
  reliesOn: [
    "1. block a tool: tool_call handler returns a block",
    "2. gate crash: a throw in the handler blocks",
    "3. gate missing: a missing -e file refuses to start",
    "4. gate hang: the runner's wall clock plus the agent_end marker",
    "5. bash: limited only by the tool limit",
  ],
};
