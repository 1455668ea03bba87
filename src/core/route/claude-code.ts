import { isAbsolute } from "../paths.ts";
import type { HarnessModule, PreflightFacts, Preflight, RunPaths } from "./types.ts";

/**
 * Neutral tool-limit names to Claude Code 2.1.332 built-ins. Its default set has no Grep, Glob or
 * LS tool (baselines/README.md), so grep, find and ls grant nothing here; Bash covers them where
 * the limit grants bash.
 */
const CLAUDE_BUILTINS: Readonly<Record<string, string | null>> = {
  read: "Read",
  edit: "Edit",
  write: "Write",
  bash: "Bash",
  grep: null,
  find: null,
  ls: null, // safety: claude-bash-ungranted
};

function preflightClaude(f: PreflightFacts): Preflight {
  const pinned = f.claudeBinEnv ?? "";
  // safety: claude-bin-relative-accepted
  if (pinned !== "" && !isAbsolute(pinned))
    return { ok: false, why: `claude-code: MOSAIC_CLAUDE_BIN ${JSON.stringify(pinned)} is not an absolute path` };
  if (!f.binary.exists) return { ok: false, why: `claude-code: ${f.binary.path} does not exist` }; // safety: claude-preflight-missing-ignored
  if (!f.binary.executable) return { ok: false, why: `claude-code: ${f.binary.path} is not executable` };
  if (!f.binary.runs) return { ok: false, why: `claude-code: ${f.binary.path} --version did not run` };
  return { ok: true };
}

export const CLAUDE_MCP_PREFIX = "mcp__mosaic__";

export const claudeCode: HarnessModule = {
  name: "claude-code",
  thinkingLevels: ["low", "medium", "high", "xhigh", "max"],
  thinkingRequired: true,
  providers: ["anthropic"],
  preflight: preflightClaude,
  versionProbe: (binary) => [binary, "--version"],
  sandboxMounts: ["claude-bin"],
  builtInTools: (limit) => [
    ...new Set(limit.map((t) => CLAUDE_BUILTINS[t]).filter((t): t is string => typeof t === "string")),
  ],
  typedToolName: (tool) => `${CLAUDE_MCP_PREFIX}${tool}`,
  gate: {
    timeoutSeconds: 10,
    how: "timeout -k 2 10 around the hook command, || exit 2, and the hook's own timeout of 20 s",
  },
  bundleFiles: ["settings.json", "mcp.json"],
  adapterEnv: (p: RunPaths) => ({
    MOSAIC_CLAUDE_SETTINGS: `${p.runDir}/bundle/settings.json`,
    MOSAIC_CLAUDE_MCP_CONFIG: `${p.runDir}/bundle/mcp.json`,
    MCP_CONNECTION_NONBLOCKING: "0",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  }),
  turnEnd: () => ({
    kind: "result-line",
    emptyOutputFails: true,
    why: "without a writable TMPDIR Claude Code exits 0 with empty output; only a final result line is a turn",
  }),
  eventStream: "claude-stream-json",
  sessionFiles: (p) => `${p.runDir}/home/.claude/projects`,
  reliesOn: [
    "1. block a tool: PreToolUse command hook exits 2; --bare is never passed",
    "2. gate crash: the hook runs as || exit 2",
    "3. gate missing: the wrapper blocks",
    "4. gate hang: timeout -k 2 10 || exit 2, hook timeout 20",
    "5. bash: limited only by the tool limit",
  ],
};
