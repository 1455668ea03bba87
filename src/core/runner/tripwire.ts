// The run-end tripwire (seed 004): a tool call that completed with no allow from the gate fails
// the turn. It guards against version skew, a harness that adds or renames a tool or stops
// calling its gate for one, not against the session's own shell, which can reach the tool socket
// and forge a report (docs/protocols.md, "Gate reports").
import { FILE_TOOLS } from "../gate/file-tools.ts";

/** The tool-socket name the gate reports on; never a typed tool's name (those come from the catalog). */
export const GATE_REPORT_TOOL = "mosaic.gate-report";

/** Where the tripwire reads a turn's completed calls: the harness's own event stream on stdout. */
export type EventStream = "claude-stream-json" | "pi-json";

/** session.json's tripwire: the stream to read and the typed tool names this session holds. */
export type TripwireSpec = { stream: EventStream; typedTools: string[] };

export type ToolKind = "file" | "shell";

/**
 * Every built-in tool each harness may run, by the name its event stream carries. A name not here
 * (and not one of the session's typed tools) trips the wire even when the gate allowed it: a tool
 * a new harness version adds fails closed until someone reviews what it reaches.
 */
export const HARNESS_TOOLS: Readonly<Record<EventStream, Readonly<Record<string, { kind: ToolKind; why: string }>>>> = {
  "pi-json": {
    // safety: tripwire-table-drops-file-tool
    read: { kind: "file", why: "opens a path (FILE_TOOLS.read)" },
    write: { kind: "file", why: "creates a path (FILE_TOOLS.write)" },
    edit: { kind: "file", why: "rewrites a path (FILE_TOOLS.edit)" },
    grep: { kind: "file", why: "searches under a path (FILE_TOOLS.grep)" },
    find: { kind: "file", why: "globs under a path (FILE_TOOLS.find)" },
    ls: { kind: "file", why: "lists a path (FILE_TOOLS.ls)" },
    bash: { kind: "shell", why: "runs in the sandbox; the gate still sees it and allows it by name" },
  },
  "claude-stream-json": {
    Read: { kind: "file", why: "opens file_path (FILE_TOOLS.Read)" },
    Write: { kind: "file", why: "creates file_path (FILE_TOOLS.Write)" },
    Edit: { kind: "file", why: "rewrites file_path (FILE_TOOLS.Edit)" },
    MultiEdit: { kind: "file", why: "rewrites file_path (FILE_TOOLS.MultiEdit)" },
    NotebookEdit: { kind: "file", why: "rewrites notebook_path (FILE_TOOLS.NotebookEdit)" },
    Glob: { kind: "file", why: "globs under path (FILE_TOOLS.Glob)" },
    Grep: { kind: "file", why: "searches under path (FILE_TOOLS.Grep)" },
    Bash: { kind: "shell", why: "runs in the sandbox; the gate still sees it and allows it by name" },
  },
};

/** The gate's file tools that no harness's table watches as a file tool: empty, or a tool the gate checks paths for is one the wire does not review. */
export function fileToolsUnwatched(
  tables: typeof HARNESS_TOOLS = HARNESS_TOOLS,
  fileTools: Readonly<Record<string, unknown>> = FILE_TOOLS,
): string[] {
  const watched = new Set(
    Object.values(tables).flatMap((t) =>
      Object.entries(t)
        .filter(([, v]) => v.kind === "file")
        .map(([n]) => n),
    ),
  );
  return Object.keys(fileTools).filter((n) => !watched.has(n));
}

/** One gate decision as the gate reports it: the harness's call id, the tool, allow or block, and a digest of its input. */
export type GateReport = { call: string; tool: string; allow: boolean; digest: string };

/** A report's args off the tool socket, or what is wrong with them. */
export function readGateReport(args: unknown): GateReport | { bad: string } {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { bad: "args is not an object" };
  const a = args as Record<string, unknown>;
  if (typeof a.call !== "string" || a.call === "") return { bad: "call is not a non-empty string" };
  if (typeof a.tool !== "string" || a.tool === "") return { bad: "tool is not a non-empty string" };
  if (typeof a.allow !== "boolean") return { bad: "allow is not true or false" };
  if (typeof a.digest !== "string" || !/^[0-9a-f]{64}$/.test(a.digest)) return { bad: "digest is not 64 hex digits" };
  return { call: a.call, tool: a.tool, allow: a.allow, digest: a.digest };
}

/** Reports one turn keeps: past this, more are dropped, and a call they would have matched trips (fail closed). */
export const GATE_REPORTS_PER_TURN = {
  value: 4096,
  why: "a turn makes tens of calls; a shell that floods the socket cannot grow pid 1's memory, only trip its own turn",
} as const;

/** Keeps one more report for the turn, up to the bound; past it the report is dropped. */
export function keepReport(reports: GateReport[], r: GateReport): void {
  if (reports.length >= GATE_REPORTS_PER_TURN.value) return; // safety: tripwire-reports-unbounded
  reports.push(r);
}

/** A call the harness says completed: it has a result that is not an error. */
export type CompletedCall = { call: string; tool: string };

const parse = (line: string): unknown => {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
};
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Claude Code's stream-json: tool_use blocks in assistant messages name each call; tool_result
 * blocks in user messages end them. A call completed when its result is not an error (a hook
 * block comes back as an error result).
 */
// Every line is parsed: a text prefilter would pass over an event whose type a harness writes with a
// JSON escape, and the tripwire would fail open on it.
function claudeCalls(stdout: string): CompletedCall[] {
  const names = new Map<string, string>();
  const ok: string[] = [];
  for (const line of stdout.split("\n")) {
    const m = parse(line);
    if (!isObj(m) || !isObj(m.message) || !Array.isArray(m.message.content)) continue;
    for (const b of m.message.content as unknown[]) {
      if (!isObj(b)) continue;
      if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string") names.set(b.id, b.name);
      if (b.type === "tool_result" && typeof b.tool_use_id === "string" && b.is_error !== true) ok.push(b.tool_use_id);
    }
  }
  // A result whose call the stream never named still counts, under an unknown name: it trips.
  return ok.map((call) => ({ call, tool: names.get(call) ?? "(a call the stream never named)" }));
}

/** Pi's JSON mode: one tool_execution_end per call, isError false when it completed. */
function piCalls(stdout: string): CompletedCall[] {
  const out: CompletedCall[] = [];
  for (const line of stdout.split("\n")) {
    const e = parse(line);
    if (!isObj(e) || e.type !== "tool_execution_end" || e.isError === true) continue;
    out.push({
      call: typeof e.toolCallId === "string" ? e.toolCallId : "",
      tool: typeof e.toolName === "string" ? e.toolName : "(a call the stream never named)",
    });
  }
  return out;
}

export function completedCalls(stream: EventStream, stdout: string): CompletedCall[] {
  return stream === "pi-json" ? piCalls(stdout) : claudeCalls(stdout);
}

export type TripwireVerdict =
  | { kind: "ok"; calls: number }
  | { kind: "tripped"; tool: string; call: string; why: string; reply: string };

/** Each completed call needs a known tool and an allow from the gate for the same call id and tool. */
export function checkTripwire(
  spec: TripwireSpec,
  calls: readonly CompletedCall[],
  reports: readonly GateReport[],
): TripwireVerdict {
  const known = HARNESS_TOOLS[spec.stream];
  for (const c of calls) {
    // safety: tripwire-unknown-tool-passes
    if (!Object.hasOwn(known, c.tool) && !spec.typedTools.includes(c.tool))
      return {
        kind: "tripped",
        ...c,
        why: `${c.tool} is not in the tripwire's tool table (HARNESS_TOOLS), so it fails closed until it is reviewed`,
        reply: `${c.tool} ran without the gate`,
      };
    // safety: tripwire-any-report-matches
    const seen = reports.some((r) => r.allow && r.call === c.call && r.tool === c.tool);
    if (!seen)
      return {
        kind: "tripped",
        ...c,
        why: `the gate reported no allow for call ${JSON.stringify(c.call)}`,
        reply: `${c.tool} ran without the gate`,
      };
  }
  return { kind: "ok", calls: calls.length };
}

/** The runner's record line for a turn's tripwire verdict (scenario assertion gate_saw_every_call reads it). */
export function tripwireLine(turn: number, v: TripwireVerdict): string {
  return v.kind === "ok"
    ? `turn ${turn}: tripwire: the gate allowed each of ${v.calls} completed tool calls`
    : `turn ${turn}: tripwire: ${v.tool} (call ${JSON.stringify(v.call)}) ran without the gate: ${v.why}`;
}
