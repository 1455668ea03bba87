// tools.json as the typed-tool clients read it. A file they cannot vouch for entry by entry serves
// no tool at all: a client lists nothing rather than a guess.

/** tools.json's version, the bundle's (planBundle writes BUNDLE_VERSION; a contract test ties them). */
export const TOOLS_FILE_VERSION = 1;

/** One typed tool as a client serves it. `name` is the catalog name the tool socket takes. */
export interface ToolEntry {
  name: string;
  harnessName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type ToolsFile = { tools: ToolEntry[] } | { problem: string };

const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Parses tools.json's text; any entry out of shape makes the whole file a problem. */
export function parseToolsFile(text: string): ToolsFile {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { problem: `not JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  if (!isObject(doc)) return { problem: "not a JSON object" };
  if (doc.version !== TOOLS_FILE_VERSION)
    return { problem: `version ${JSON.stringify(doc.version ?? null)} is not ${TOOLS_FILE_VERSION}` };
  if (!Array.isArray(doc.tools)) return { problem: "tools is not a list" };
  const tools: ToolEntry[] = [];
  const seen = new Set<string>();
  for (const [i, t] of doc.tools.entries()) {
    const why = entryProblem(t, seen);
    if (why !== null) return { problem: `tools[${i}]: ${why}` };
    const e = t as ToolEntry;
    seen.add(e.name);
    tools.push({ name: e.name, harnessName: e.harnessName, description: e.description, inputSchema: e.inputSchema });
  }
  return { tools };
}

function entryProblem(t: unknown, seen: ReadonlySet<string>): string | null {
  if (!isObject(t)) return "not an object";
  if (typeof t.name !== "string" || !NAME.test(t.name))
    return `name ${JSON.stringify(t.name ?? null)} is not a catalog name`;
  if (seen.has(t.name)) return `${t.name} is listed twice`;
  if (typeof t.harnessName !== "string" || t.harnessName === "") return "harnessName is not a name";
  if (typeof t.description !== "string") return "description is not a text";
  if (!isObject(t.inputSchema) || t.inputSchema.type !== "object")
    return "inputSchema is not a JSON Schema of an object";
  return null;
}

/** The entry a call names, or null: a tool not in tools.json is refused before any socket call. */
export function findTool(tools: readonly ToolEntry[], name: unknown): ToolEntry | null {
  return tools.find((t) => t.name === name) ?? null;
}

/** The refusal for a tool not in tools.json, word for word the runner's (docs/protocols.md, "Tool socket"). */
export function notATypedTool(name: unknown): string {
  return `refused: ${typeof name === "string" ? name : JSON.stringify(name)} is not one of this session's typed tools`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
