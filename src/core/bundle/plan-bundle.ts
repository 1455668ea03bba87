import type { Policy } from "../policy.ts";
import { MODEL_URL } from "../network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../network/placeholder.ts";
import type { ResolvedInstance } from "../launch/instance.ts";
import type { Route, RouteWhich } from "../route/choose-route.ts";
import type { RunPaths } from "../route/types.ts";
import { actionsWithoutTool, describeVia, heldActions, renderTools, selectTools } from "../tools/catalog.ts";
import { canonicalJson, sha256 } from "./digest.ts";
import { runSockets } from "../runner/run-paths.ts";
import { HOOK_TIMEOUT_SECONDS, gateCompileCacheDir, gateHookCommand } from "./hook.ts";

export const BUNDLE_VERSION = 1;

/** sha256 of the sources a session's confinement runs from, read by the host and passed in. */
export interface SourceDigests {
  gate: string;
  extension: string;
  mcpServer: string;
  tools: string;
}

export interface BundleInput {
  instance: ResolvedInstance;
  route: Route;
  which: RouteWhich;
  reason: string;
  harnessVersion: string;
  paths: RunPaths;
  /** Which SESSION_CREDENTIALS set the host saw, or null: metadata, never a value. */
  credentialSet: string | null;
  digests: SourceDigests;
}

/** File name → content, in the order the files are written (manifest last: it digests the rest). */
export type BundleFiles = Record<string, string>;

export function bundleDir(runDir: string): string {
  return `${runDir}/bundle`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

function renderPrompt(inp: BundleInput, toolLines: string[]): string {
  const i = inp.instance;
  return [
    i.contract.trimEnd(),
    "",
    "## This session",
    "",
    `- Business: ${i.business}`,
    `- Instance: ${i.instance} (role ${i.role})`,
    `- Run: ${i.run}`,
    `- Launched by: ${i.launchedBy}`,
    `- Workspace: ${i.workspace}`,
    "",
    "### Typed tools",
    "",
    "You act on the bus only through these tools. Having a tool is not permission: the bus decides every call.",
    "",
    ...toolLines,
    "",
  ].join("\n");
}

/** The bundle's files for one launch (seed 000, "The bundle"). Pure: the host writes them with writeBundle. */
export function planBundle(inp: BundleInput): BundleFiles {
  const { instance, route } = inp;
  const mod = route.module;
  const actions = heldActions(instance.actions);
  const tools = selectTools(actions);
  const typedTools = tools.map((t) => mod.typedToolName(t.name));
  const builtInTools = mod.builtInTools(instance.limits.tools);

  const files: BundleFiles = {
    "prompt.md": renderPrompt(
      inp,
      tools.map((t) => `- \`${mod.typedToolName(t.name)}\` (${describeVia(t.via)}): ${t.description}`),
    ),
    "policy.json": json(bundlePolicy(inp, builtInTools, typedTools)),
    "tools.json": json({ version: BUNDLE_VERSION, tools: renderTools(tools, mod.typedToolName) }),
    ...harnessFiles(inp),
  };
  files["manifest.json"] = json(bundleManifest(inp, files, { builtInTools, typedTools, actions }));
  return files;
}

/** policy.json: what the gate reads. */
function bundlePolicy(inp: BundleInput, builtInTools: Policy["builtInTools"], typedTools: string[]): Policy {
  const { instance, route, paths } = inp;
  return {
    harness: route.harness,
    workspace: instance.workspace,
    home: `${paths.runDir}/home`,
    builtInTools,
    typedTools,
    network: instance.network,
    services: [...instance.services],
    credentials: { set: inp.credentialSet },
  };
}

/** The files only one harness reads, in the order they are written. */
function harnessFiles(inp: BundleInput): BundleFiles {
  const { route } = inp;
  if (route.harness === "pi") {
    // Pi ignores ANTHROPIC_BASE_URL: its models.json routes the built-in provider to the in-sandbox
    // model port, with the placeholder for a key. The launcher puts a copy in Pi's agent dir.
    return {
      "models.json": json({
        providers: { [route.provider]: { baseUrl: MODEL_URL, apiKey: CREDENTIAL_PLACEHOLDER } },
      }),
    };
  }
  // Claude Code, the one other harness.
  return claudeFiles(inp.paths);
}

/** Claude Code's settings.json (the gate's hook on every tool) and mcp.json (the typed tools' server). */
function claudeFiles(paths: RunPaths): BundleFiles {
  const bundle = bundleDir(paths.runDir);
  return {
    "settings.json": json({
      hooks: {
        PreToolUse: [
          {
            matcher: "*", // safety: hook-matcher-narrowed
            hooks: [
              {
                type: "command",
                command: gateHookCommand(paths.node, paths.repo, `${bundle}/policy.json`, gateCompileCacheDir(bundle)),
                timeout: HOOK_TIMEOUT_SECONDS,
              },
            ],
          },
        ],
      },
    }),
    "mcp.json": json({
      mcpServers: {
        mosaic: {
          type: "stdio",
          command: paths.node,
          args: [`${paths.repo}/src/host/mcp-server.ts`],
          env: { MOSAIC_TOOLS_FILE: `${bundle}/tools.json`, MOSAIC_TOOL_SOCKET: runSockets(paths.runDir).tools },
        },
      },
    }),
  };
}

/** manifest.json: what the bundle is and what it was made from, with a digest of every other file. */
function bundleManifest(
  inp: BundleInput,
  files: BundleFiles,
  held: { builtInTools: Policy["builtInTools"]; typedTools: string[]; actions: ReturnType<typeof heldActions> },
): Record<string, unknown> {
  const { instance, route } = inp;
  const mod = route.module;
  return {
    bundleVersion: BUNDLE_VERSION,
    instance: instance.instance,
    run: instance.run,
    resolvedDigest: sha256(canonicalJson(instance)),
    harness: route.harness,
    provider: route.provider,
    model: route.model,
    thinking: route.thinking,
    harnessVersion: inp.harnessVersion,
    route: inp.which,
    routeReason: inp.reason,
    builtInTools: held.builtInTools,
    typedTools: held.typedTools,
    actionsWithoutTool: actionsWithoutTool(held.actions),
    reliesOn: [...mod.reliesOn],
    gateTimeout: mod.gate,
    files: Object.fromEntries(Object.entries(files).map(([name, body]) => [name, sha256(body)])),
    sources: {
      gate: inp.digests.gate,
      extension: inp.digests.extension,
      mcpServer: inp.digests.mcpServer,
      tools: inp.digests.tools,
    },
  };
}
