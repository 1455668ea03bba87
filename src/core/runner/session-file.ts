import type { TurnEnd } from "../route/types.ts";
import type { RunnerBounds } from "./bounds.ts";
import type { TripwireSpec } from "./tripwire.ts";

/**
 * session.json: what the host tells the runner about its session. Written once by the launcher,
 * bound read-only, never holding a secret: the capability arrives on stdin, the model credential
 * stays with the host's proxy.
 */
export interface SessionFile {
  version: 1;
  business: string;
  instance: string;
  role: string;
  run: string;
  runDir: string;
  workspace: string;
  brokerSocket: string;
  /** Only for a role that may launch: the launch tool's socket. */
  launchSocket: string | null;
  /** One turn: argv (the message is appended), its environment and working directory. */
  adapter: { argv: string[]; env: Record<string, string>; cwd: string };
  /** How the runner tells a finished turn from a failed one. */
  turnEnd: TurnEnd | { kind: "exit"; why: string };
  /** What the tripwire reads after each turn; null for the fake adapter, which has no gate. */
  tripwire: TripwireSpec | null;
  turnTimeoutSeconds: number;
  /** Failed polls in a row before the runner gives up on the broker (exit 23). */
  brokerRetries: number;
  pollMs: number;
  /** Seconds the broker gets to answer one call. */
  brokerTimeoutSeconds: number;
  /** The model API inside the sandbox: the runner listens on 127.0.0.1:port and forwards to the host's socket; null: no model. */
  model: { port: number; socket: string } | null;
  /**
   * The tool socket the typed tools call: the host makes it in the read-only sock/ directory and the
   * runner serves it from the inherited listening descriptor `fd`.
   */
  toolSocket: { path: string; fd: number };
  /** What one tool-socket client and one turn may cost the runner (bounds.ts, planRunnerBounds()). */
  bounds: RunnerBounds;
}

export const SESSION_FILE_VERSION = 1;

/** The runner's defaults (seed 000): a 900 s turn, 30 failed polls. */
export const RUNNER_DEFAULTS = {
  turnTimeoutSeconds: 900,
  brokerRetries: 30,
  pollMs: 1000,
  brokerTimeoutSeconds: 10,
} as const;

export type Parsed<T> = { ok: true; value: T } | { ok: false; field: string; why: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === "string" && v !== "";
const isAbs = (v: unknown): v is string => isStr(v) && v.startsWith("/");
const isPosInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;

/** Checks session.json's shape field by field; the runner exits 2 naming the first bad one. The runner loads no package, so no zod here. */
export function parseSessionFile(text: string): Parsed<SessionFile> {
  let d: unknown;
  try {
    d = JSON.parse(text);
  } catch (e) {
    return { ok: false, field: "(file)", why: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!isObj(d)) return { ok: false, field: "(file)", why: "not a JSON object" };
  const bad = (field: string, why: string): Parsed<SessionFile> => ({ ok: false, field, why });
  if (d.version !== SESSION_FILE_VERSION) return bad("version", `expected ${SESSION_FILE_VERSION}`);
  for (const f of ["business", "instance", "role", "run"] as const)
    if (!isStr(d[f])) return bad(f, "a non-empty string");
  for (const f of ["runDir", "workspace", "brokerSocket"] as const) if (!isAbs(d[f])) return bad(f, "an absolute path");
  if (d.launchSocket !== null && !isAbs(d.launchSocket)) return bad("launchSocket", "an absolute path or null");
  const a = d.adapter;
  if (!isObj(a)) return bad("adapter", "an object");
  if (!Array.isArray(a.argv) || !isAbs(a.argv[0]) || !a.argv.every((t) => typeof t === "string"))
    return bad("adapter.argv", "a list of strings whose first is an absolute path");
  if (!isObj(a.env) || !Object.values(a.env).every((v) => typeof v === "string"))
    return bad("adapter.env", "an object of strings");
  if (!isAbs(a.cwd)) return bad("adapter.cwd", "an absolute path");
  const t = d.turnEnd;
  if (!isObj(t) || !["marker", "result-line", "exit"].includes(t.kind as string))
    return bad("turnEnd.kind", "marker, result-line or exit");
  if (t.kind === "marker" && !isAbs(t.file)) return bad("turnEnd.file", "an absolute path");
  const w = d.tripwire;
  if (
    w !== null &&
    (!isObj(w) ||
      (w.stream !== "claude-stream-json" && w.stream !== "pi-json") ||
      !Array.isArray(w.typedTools) ||
      !w.typedTools.every(isStr))
  )
    return bad("tripwire", "null, or {stream: claude-stream-json or pi-json, typedTools: a list of names}");
  for (const f of ["turnTimeoutSeconds", "brokerRetries", "pollMs", "brokerTimeoutSeconds"] as const)
    if (!isPosInt(d[f])) return bad(f, "a positive integer");
  if (d.model !== null) {
    const m = d.model;
    if (!isObj(m) || !isPosInt(m.port) || (m.port as number) > 65535 || !isAbs(m.socket))
      return bad("model", "null, or {port: 1..65535, socket: an absolute path}");
  }
  const ts = d.toolSocket;
  if (!isObj(ts) || !isAbs(ts.path) || typeof ts.fd !== "number" || !Number.isInteger(ts.fd) || ts.fd < 3)
    return bad("toolSocket", "{path: an absolute path, fd: a descriptor number of 3 or more}");
  const b = d.bounds;
  if (!isObj(b) || !isObj(b.toolSocket) || !isObj(b.turn)) return bad("bounds", "{toolSocket: {...}, turn: {...}}");
  for (const f of ["lineBytes", "depth", "argsBytes", "connections", "pending"] as const)
    if (!isPosInt(b.toolSocket[f])) return bad(`bounds.toolSocket.${f}`, "a positive integer");
  for (const f of ["stdoutBytes", "stderrBytes", "stderrFiles"] as const)
    if (!isPosInt(b.turn[f])) return bad(`bounds.turn.${f}`, "a positive integer");
  if (typeof b.turn.killNamespace !== "boolean") return bad("bounds.turn.killNamespace", "true or false");
  return { ok: true, value: d as unknown as SessionFile };
}

/** The capability line on stdin: `{"cap": "..."}`. */
export function parseCapabilityLine(line: string): Parsed<string> {
  let d: unknown;
  try {
    d = JSON.parse(line);
  } catch {
    return { ok: false, field: "stdin", why: "the first line is not JSON" };
  }
  if (!isObj(d) || !isStr(d.cap)) return { ok: false, field: "stdin.cap", why: "a non-empty string" };
  return { ok: true, value: d.cap };
}
