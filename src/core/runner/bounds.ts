// The runner's bounds: what one tool-socket client and one turn may cost pid 1. Each is data in
// session.json (planned here, by planRunnerBounds()), so the live tier's positive controls can lift
// one on purpose by editing a prepared plan, and a launch never does.
const KiB = 1024;
const MiB = 1024 * KiB;

/** The broker's line (docs/protocols.md, "Broker": one request per line): a longer request is refused unread. */
export const BROKER_LINE_BYTES = 1 * MiB;

export interface ToolSocketBounds {
  lineBytes: number;
  depth: number;
  argsBytes: number;
  connections: number;
  pending: number;
}

export interface TurnBounds {
  stdoutBytes: number;
  stderrBytes: number;
  /** turns/ keeps the stderr records of this many newest turns: each turn's start removes the one that falls out. */
  stderrFiles: number;
  /** At every turn's end the runner, as pid 1 of its PID namespace, kills every other process in it. */
  killNamespace: boolean;
}

export interface RunnerBounds {
  toolSocket: ToolSocketBounds;
  turn: TurnBounds;
}

type Row = { value: number; why: string };

/** The tool socket's bounds, each applied before anything recurses over what a client sent. */
export const TOOL_SOCKET_BOUNDS = {
  lineBytes: {
    value: BROKER_LINE_BYTES,
    why: "a request the runner forwards becomes one broker line, which holds 1 MiB; a longer line is answered and the connection closed, unbuffered past the bound",
  },
  depth: {
    value: 32,
    why: "typed tools take flat objects (2 levels); 32 leaves room for nested fields and stays far below the thousands that overflow JSON.stringify's recursion in the broker call",
  },
  argsBytes: {
    value: BROKER_LINE_BYTES - 4 * KiB,
    why: "the args plus the envelope the runner adds ({id, cap, verb}: under 200 bytes) must fit the broker's 1 MiB line, or the call cannot be made",
  },
  connections: {
    value: 32,
    why: "a turn's tools open one connection per call, a handful at once; each open connection may hold up to lineBytes, so 32 bound the socket's memory to 32 MiB",
  },
  pending: {
    value: 16,
    why: "requests read and not yet answered on one connection; past it the runner stops reading that connection until it catches up, so a client that never reads cannot queue answers without end",
  },
} as const satisfies Record<keyof ToolSocketBounds, Row>;

/** A turn's output, read by the runner. Past a cap it stops reading, kills the turn, and fails it. */
export const TURN_BOUNDS = {
  stdoutReply: {
    value: BROKER_LINE_BYTES - 4 * KiB,
    why: "the fake adapter: stdout is the reply, sent to the broker as one message body in its 1 MiB line with an envelope of under 4 KiB; a longer reply could never be delivered",
  },
  stdoutStream: {
    value: 64 * MiB,
    why: "Claude Code's stream-json and Pi's JSON mode: every message and tool result of the turn, read by the tripwire, of which only the result (agent_end) is the reply; 64 MiB holds hundreds of large file reads while keeping pid 1 far from V8's 512 MiB string limit",
  },
  stderr: {
    value: 8 * MiB,
    why: "turns/NNNN.stderr is for reading after a failure; the CLIs write kilobytes there, and the run directory's disk is the host's",
  },
  stderrFiles: {
    value: 16,
    why: "a turn's record is read soon after the turn that failed; the newest 16 keep that, and bound what the runner leaves in turns/ to 16 × the stderr cap (128 MiB) however many turns a session takes",
  },
} as const satisfies Record<string, Row>;

/** The bounds session.json carries, for a turn that ends the way `turnEnd` says. */
export function planRunnerBounds(turnEnd: { kind: "marker" | "result-line" | "exit" }): RunnerBounds {
  const stdoutBytes = turnEnd.kind === "exit" ? TURN_BOUNDS.stdoutReply.value : TURN_BOUNDS.stdoutStream.value;
  return {
    toolSocket: {
      lineBytes: TOOL_SOCKET_BOUNDS.lineBytes.value,
      depth: TOOL_SOCKET_BOUNDS.depth.value,
      argsBytes: TOOL_SOCKET_BOUNDS.argsBytes.value,
      connections: TOOL_SOCKET_BOUNDS.connections.value,
      pending: TOOL_SOCKET_BOUNDS.pending.value,
    },
    turn: {
      stdoutBytes,
      stderrBytes: TURN_BOUNDS.stderr.value,
      stderrFiles: TURN_BOUNDS.stderrFiles.value,
      killNamespace: true, // safety: turn-leftovers-planned-off
    },
  };
}

/**
 * How a turn's end kills what it started: the whole PID namespace (kill(-1)) only when the runner
 * is pid 1 of its own, so a runner started anywhere else never signals processes it does not head.
 */
export function turnEndKill(pid: number, killNamespace: boolean): "namespace" | "group" {
  return pid === 1 && killNamespace ? "namespace" : "group"; // safety: turn-kill-outside-namespace
}
