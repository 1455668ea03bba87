// Pi's typed tools: each tools.json entry registered through Pi's extension API under its harness
// name, with its JSON Schema as the parameters. A call goes to the runner's tool socket; a refusal
// is thrown, so Pi hands its text to the model verbatim as an error result. The gate's tool_call
// handler still sees every call first (policy.typedTools lists these names).
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { ToolEntry, ToolsFile } from "../core/tools/tools-file.ts";
import { callTool } from "./tool-client.ts";

type Register = Pick<ExtensionAPI, "registerTool">;
type PiSchema = Parameters<ExtensionAPI["registerTool"]>[0]["parameters"];

/** Registers the file's tools; a file that could not be read registers none and says why. */
export function registerTypedTools(
  pi: Register,
  file: ToolsFile,
  socket: string | undefined,
  log: (line: string) => void,
  call = callTool,
): string[] {
  if ("problem" in file) {
    log(`mosaic extension: no typed tools: ${file.problem}`);
    return [];
  }
  for (const t of file.tools) pi.registerTool(typedTool(t, socket, call));
  return file.tools.map((t) => t.harnessName);
}

function typedTool(t: ToolEntry, socket: string | undefined, call: typeof callTool) {
  return {
    name: t.harnessName,
    label: t.name,
    description: t.description,
    // Pi validates plain JSON Schema as well as TypeBox's; the catalog's schema goes as it is.
    parameters: t.inputSchema as unknown as PiSchema,
    async execute(_id: string, params: unknown) {
      const outcome = await call(socket, t.name, params);
      // safety: pi-refusal-not-error
      if (!outcome.ok) throw new Error(outcome.text);
      return { content: [{ type: "text" as const, text: outcome.text }], details: {} };
    },
  };
}
