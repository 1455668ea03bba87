import { MosaicError } from "../errors.ts";
import { sessionEnv } from "../session/env.ts";
import type { Route } from "../route/choose-route.ts";
import type { RunPaths } from "../route/types.ts";
import { bundleDir } from "../bundle/plan-bundle.ts";
import { MODEL_URL } from "../network/egress.ts";
import { placeholderEnv } from "../network/placeholder.ts";
import { runSockets } from "../runner/run-paths.ts";

/** One harness turn's command, minus the message, which the runner appends after the final "--". */
export interface AdapterCommand {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** A CLI started with stdin open waits on it (Pi until EOF, Claude Code 3 s); the host closes it. */
  stdin: "closed";
}

export interface AdapterInput {
  route: Route;
  paths: RunPaths;
  workspace: string;
  /** Neutral tool-limit names from the instance. */
  toolLimit: readonly string[];
  /** Typed tool names as the harness sees them. */
  typedTools: readonly string[];
  /** The host environment; only ENV_ALLOW reaches the session. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The launch's credential set: the session gets its placeholder, never its value. */
  credentialSet: string | null;
}

/** The MOSAIC_* variables every adapter sets (the adapter contract, seed 003). */
function sharedEnv(inp: AdapterInput, builtIns: readonly string[]): Record<string, string> {
  const b = bundleDir(inp.paths.runDir);
  const env: Record<string, string> = {
    MOSAIC_WORKSPACE: inp.workspace,
    MOSAIC_SESSION_DIR: `${inp.paths.runDir}/session`,
    MOSAIC_SYSTEM_PROMPT_FILE: `${b}/prompt.md`,
    MOSAIC_PROVIDER: inp.route.provider,
    MOSAIC_MODEL: inp.route.model,
    MOSAIC_TOOLS: builtIns.join(","),
    MOSAIC_POLICY_FILE: `${b}/policy.json`,
    MOSAIC_TOOLS_FILE: `${b}/tools.json`,
    MOSAIC_TOOL_SOCKET: runSockets(inp.paths.runDir).tools,
  };
  if (inp.route.thinking !== null) env.MOSAIC_THINKING = inp.route.thinking;
  return env;
}

/** Only ENV_ALLOW from the host, then the adapter's own variables; never the host's whole environment. */
function adapterEnvironment(inp: AdapterInput, builtIns: readonly string[]): Record<string, string> {
  const fromHost = sessionEnv(inp.hostEnv); // safety: adapter-env-unfiltered
  return { ...fromHost, ...sharedEnv(inp, builtIns), ...inp.route.module.adapterEnv(inp.paths) };
}

/** Pi: print mode, no session file, no network at startup, no ambient context, skills or extensions but the gate's. */
export function piCommand(inp: AdapterInput, piBinary: string): AdapterCommand {
  const { route, paths } = inp;
  const builtIns = route.module.builtInTools(inp.toolLimit);
  const thinking = route.thinking !== null ? ["--thinking", route.thinking] : [];
  const argv = [
    // The node the preflight checked (Pi needs 22.19 or newer), not whatever node the pi script's
    // `#!/usr/bin/env node` would find on the session's PATH.
    paths.node,
    piBinary,
    "-p",
    // Its event stream, which the runner's tripwire reads; the reply is agent_end's last message.
    "--mode",
    "json", // safety: pi-no-event-stream
    "--provider",
    route.provider,
    "--model",
    route.model,
    ...thinking,
    "--no-session",
    "--offline",
    // safety: pi-ambient-context
    "-nc",
    "-ns",
    "-ne", // no AGENTS.md/CLAUDE.md, skills or discovered extensions
    "-np",
    "-na", // safety: pi-project-files (no prompt templates, no project-local .pi files from the workspace)
    "-e",
    `${paths.repo}/src/host/pi-extension.ts`, // safety: pi-no-gate
    // Pi's allowlist covers extension tools too, so the typed tools must be on it.
    "--tools",
    [...builtIns, ...inp.typedTools].join(","), // safety: pi-tools-unlimited
    "--append-system-prompt",
    `${bundleDir(paths.runDir)}/prompt.md`,
    "--",
  ];
  return {
    argv,
    env: { ...adapterEnvironment(inp, builtIns), ...placeholderEnv(inp.credentialSet, MODEL_URL) },
    cwd: inp.workspace,
    stdin: "closed",
  }; // safety: pi-real-credential
}

/** MOSAIC_CLAUDE_BIN when set and non-empty, else claude from PATH; the preflight already refused a relative one. */
export function claudeBinary(hostEnv: Readonly<Record<string, string | undefined>>): string {
  const pinned = hostEnv.MOSAIC_CLAUDE_BIN ?? "";
  return pinned === "" ? "claude" : pinned;
}

/**
 * Claude Code: the bundle's settings (the gate hook) and MCP server only, nothing from user,
 * project or local settings, the built-in tools of the limit, and a permission mode that leaves
 * every decision to the hook. Never --bare: it silently skips hooks.
 */
export function claudeCommand(inp: AdapterInput): AdapterCommand {
  const { route, paths } = inp;
  if (route.thinking === null)
    throw new MosaicError("no-effort", "vars.thinking", "Claude Code needs a thinking level for --effort");
  const b = bundleDir(paths.runDir);
  const builtIns = route.module.builtInTools(inp.toolLimit);
  const argv = [
    claudeBinary(inp.hostEnv),
    "-p", // safety: bare-passed
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    route.model,
    "--effort",
    route.thinking,
    "--settings",
    `${b}/settings.json`,
    "--setting-sources",
    "", // safety: setting-sources-dropped
    // No CLAUDE.md file (user, parent, workspace) or auto-memory in the prompt; file tools kept to the working directory.
    "--restricted", // safety: restricted-dropped
    "--mcp-config",
    `${b}/mcp.json`,
    "--strict-mcp-config", // safety: strict-mcp-dropped
    "--tools",
    builtIns.join(","), // safety: claude-tools-unlimited
    // dontAsk denies whatever is not listed; the PreToolUse hook still runs first and can block.
    "--permission-mode",
    "dontAsk", // safety: claude-bypass-permissions
    "--allowedTools",
    [...builtIns, ...inp.typedTools].join(","),
    "--append-system-prompt-file",
    `${b}/prompt.md`,
    "--",
  ];
  return {
    argv,
    env: { ...adapterEnvironment(inp, builtIns), ...placeholderEnv(inp.credentialSet, MODEL_URL) },
    cwd: inp.workspace,
    stdin: "closed",
  }; // safety: claude-real-credential
}
