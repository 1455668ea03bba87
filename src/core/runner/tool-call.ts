/** How a typed tool reaches the bus, as tools.json records it. */
export type ToolRoute = { broker: string } | { launchSocket: true };

/** Each tools.json entry's name and route; a file that is not what planBundle writes routes nothing. */
export function parseToolRoutes(text: string): Map<string, ToolRoute> | { problem: string } {
  let d: unknown;
  try {
    d = JSON.parse(text);
  } catch {
    return { problem: "tools.json is not JSON" };
  }
  const tools = (d as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return { problem: "tools.json has no tools list" };
  const out = new Map<string, ToolRoute>();
  for (const t of tools as Array<{ name?: unknown; via?: { broker?: unknown; launchSocket?: unknown } }>) {
    if (typeof t.name !== "string" || typeof t.via !== "object" || t.via === null) return { problem: "a tools.json entry has no name or route" };
    if (typeof t.via.broker === "string") out.set(t.name, { broker: t.via.broker });
    else if (t.via.launchSocket === true) out.set(t.name, { launchSocket: true });
    else return { problem: `${t.name}: no broker verb or launch socket` };
  }
  return out;
}

export type ToolRequest = { id: string | number | null; tool: unknown; args: unknown };

export type ToolDecision =
  | { kind: "forward"; id: string | number | null; socket: "broker" | "launch"; verb: string; args: Record<string, unknown> }
  | { kind: "answer"; id: string | number | null; error: string };

/** Parses one tool-socket line (PROTOCOLS: `{id?, tool, args}`). */
export function parseToolLine(line: string): ToolRequest | { bad: string } {
  let d: unknown;
  try {
    d = JSON.parse(line);
  } catch {
    return { bad: "bad request: not JSON" };
  }
  if (typeof d !== "object" || d === null || Array.isArray(d)) return { bad: "bad request: not a JSON object" };
  const o = d as Record<string, unknown>;
  const id = typeof o.id === "string" || typeof o.id === "number" ? o.id : null;
  return { id, tool: o.tool, args: o.args };
}

/**
 * One typed tool call: checked against tools.json, then forwarded with the runner's own capability
 * to the broker verb (or the launch socket) it maps to. The caller never names a verb or a cap.
 */
export function decideToolCall(routes: ReadonlyMap<string, ToolRoute>, req: ToolRequest, launchSocket: string | null): ToolDecision {
  if (typeof req.tool !== "string") return { kind: "answer", id: req.id, error: "bad request: tool is not a string" };
  const route = routes.get(req.tool); // safety: tool-socket-any-tool
  if (route === undefined) return { kind: "answer", id: req.id, error: `refused: ${req.tool} is not one of this session's typed tools` };
  if (typeof req.args !== "object" || req.args === null || Array.isArray(req.args)) return { kind: "answer", id: req.id, error: "bad request: args is not an object" };
  if ("launchSocket" in route) {
    if (launchSocket === null) return { kind: "answer", id: req.id, error: "refused: this role may not launch" }; // safety: tool-socket-launch-without-socket
    return { kind: "forward", id: req.id, socket: "launch", verb: "launch", args: req.args as Record<string, unknown> };
  }
  return { kind: "forward", id: req.id, socket: "broker", verb: route.broker, args: req.args as Record<string, unknown> };
}

/** The tool-socket answer for what the broker said. */
export function toolAnswer(id: string | number | null, a: { kind: "ok"; result: unknown } | { kind: "error"; code: string; message: string } | { kind: "unreachable"; why: string }): string {
  if (a.kind === "ok") return JSON.stringify({ id, ok: true, result: a.result });
  if (a.kind === "unreachable") return JSON.stringify({ id, ok: false, error: `refused: the broker did not answer (${a.why}); the call was not made` });
  return JSON.stringify({ id, ok: false, error: `refused: ${a.message}` });
}
