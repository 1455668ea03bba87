import type { ToolSocketBounds } from "./bounds.ts";
import { GATE_REPORT_TOOL, readGateReport, type GateReport } from "./tripwire.ts";

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
  // null is the one JSON value whose property access throws; any other reads as no list.
  if (d === null) return { problem: "tools.json has no tools list" };
  const tools = (d as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return { problem: "tools.json has no tools list" };
  const out = new Map<string, ToolRoute>();
  for (const t of tools as Array<{ name?: unknown; via?: { broker?: unknown; launchSocket?: unknown } }>) {
    if (t === null || typeof t.name !== "string" || typeof t.via !== "object" || t.via === null)
      return { problem: "a tools.json entry has no name or route" };
    if (typeof t.via.broker === "string") out.set(t.name, { broker: t.via.broker });
    else if (t.via.launchSocket === true) out.set(t.name, { launchSocket: true });
    else return { problem: `${t.name}: no broker verb or launch socket` };
  }
  return out;
}

export type ToolRequest = { id: string | number | null; tool: unknown; args: unknown };

export type ToolDecision =
  | {
      kind: "forward";
      id: string | number | null;
      socket: "broker" | "launch";
      verb: string;
      args: Record<string, unknown>;
    }
  | { kind: "answer"; id: string | number | null; error: string }
  /** The gate's report of one decision, kept for the turn's tripwire; never forwarded. */
  | { kind: "report"; id: string | number | null; report: GateReport };

/** Parses one tool-socket line (docs/protocols.md, "Tool socket": `{id?, tool, args}`). */
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
export function decideToolCall(
  routes: ReadonlyMap<string, ToolRoute>,
  req: ToolRequest,
  launchSocket: string | null,
): ToolDecision {
  if (typeof req.tool !== "string") return { kind: "answer", id: req.id, error: "bad request: tool is not a string" };
  if (req.tool === GATE_REPORT_TOOL) {
    const report = readGateReport(req.args);
    if ("bad" in report)
      return { kind: "answer", id: req.id, error: `bad request: ${GATE_REPORT_TOOL}: ${report.bad}` };
    return { kind: "report", id: req.id, report };
  }
  const route = routes.get(req.tool); // safety: tool-socket-any-tool
  if (route === undefined)
    return { kind: "answer", id: req.id, error: `refused: ${req.tool} is not one of this session's typed tools` };
  if (typeof req.args !== "object" || req.args === null || Array.isArray(req.args))
    return { kind: "answer", id: req.id, error: "bad request: args is not an object" };
  if ("launchSocket" in route) {
    if (launchSocket === null) return { kind: "answer", id: req.id, error: "refused: this role may not launch" }; // safety: tool-socket-launch-without-socket
    return { kind: "forward", id: req.id, socket: "launch", verb: "launch", args: req.args as Record<string, unknown> };
  }
  return {
    kind: "forward",
    id: req.id,
    socket: "broker",
    verb: route.broker,
    args: req.args as Record<string, unknown>,
  };
}

/** The tool-socket answer for what the broker said. */
export function toolAnswer(
  id: string | number | null,
  a:
    | { kind: "ok"; result: unknown }
    | { kind: "error"; code: string; message: string }
    | { kind: "unreachable"; why: string },
): string {
  if (a.kind === "ok") return JSON.stringify({ id, ok: true, result: a.result });
  if (a.kind === "unreachable")
    return JSON.stringify({
      id,
      ok: false,
      error: `refused: the broker did not answer (${a.why}); the call was not made`,
    });
  return JSON.stringify({ id, ok: false, error: `refused: ${a.message}` });
}

/** The answer for a request past one of the tool socket's bounds: it names the bound and its value. */
export function boundRefusal(bound: keyof ToolSocketBounds, b: ToolSocketBounds): string {
  switch (bound) {
    case "lineBytes":
      return `bad request: a line over ${b.lineBytes} bytes (the tool socket's lineBytes bound); the connection is closed`;
    case "depth":
      return `bad request: JSON nested deeper than ${b.depth} (the tool socket's depth bound)`;
    case "argsBytes":
      return `bad request: args over ${b.argsBytes} bytes (the tool socket's argsBytes bound)`;
    case "connections":
      return `refused: more than ${b.connections} connections at once (the tool socket's connections bound); the connection is closed`;
    case "pending":
      return `refused: more than ${b.pending} requests waiting on one connection (the tool socket's pending bound)`;
  }
}

const OPEN_BRACKET = 0x5b,
  CLOSE_BRACKET = 0x5d,
  OPEN_BRACE = 0x7b,
  CLOSE_BRACE = 0x7d,
  QUOTE = 0x22,
  BACKSLASH = 0x5c;

/**
 * Whether a raw line nests arrays and objects deeper than `max`, by one pass over its bytes with a
 * counter: no recursion, so no input can overflow the stack here. Brackets inside strings do not
 * count. UTF-8 continuation bytes are all >= 0x80, so they never look like brackets or quotes.
 */
export function nestedDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}

const UTF8 = new TextDecoder("utf-8");
const UTF8_OUT = new TextEncoder();

/**
 * One raw tool-socket line (without its `\n`; the socket's framing has held it to lineBytes) to a
 * request, under the bounds: its nesting checked on the bytes before JSON.parse, its args' size
 * after. Nothing here recurses over what the client sent before the depth check has passed.
 */
export function readToolLine(
  bytes: Uint8Array,
  b: ToolSocketBounds,
): ToolRequest | { bad: string; id: string | number | null } {
  if (nestedDeeperThan(bytes, b.depth)) return { bad: boundRefusal("depth", b), id: null }; // safety: tool-socket-depth-unbounded
  const req = parseToolLine(UTF8.decode(bytes));
  if ("bad" in req) return { bad: req.bad, id: null };
  // Depth is bounded above, so this stringify cannot run out of stack.
  const argsBytes = req.args === undefined ? 0 : UTF8_OUT.encode(JSON.stringify(req.args)).length;
  if (argsBytes > b.argsBytes) return { bad: boundRefusal("argsBytes", b), id: req.id }; // safety: tool-socket-args-unbounded
  return req;
}
