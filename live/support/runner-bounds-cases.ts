// What live/runner-bounds.test.ts and its second identity (runner-bounds-as.ts) share: the turns of
// each attack, and how the host finds the runner and reads its peak memory.
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { RUNNER_ENTRY } from "../../src/core/session/plan-session.ts";
import { childrenOf, cmdlineOf } from "../../src/host/session-procs.ts";

export const MiB = 1024 * 1024;
/** Far past any cap: what a control sets to lift one. */
export const LIFTED = 2 ** 40;
/** The long line the tool-socket attack sends, with no newline. */
export const LONG_LINE_BYTES = 64 * MiB;
/** 640 MiB, the finding's stdout. */
export const STDOUT_FLOOD = "head -c 671088640 /dev/zero; echo done";

/** Turn 1 leaves a setsid sleep (waiting until it is in a session of its own) and a setsid writer of a marker. */
export const LEFTOVERS_TURN = [
  "setsid sleep 3600 </dev/null >/dev/null 2>&1 &",
  `setsid sh -c 'sleep 2; echo survived > "$MOSAIC_WORKSPACE/survivor"' </dev/null >/dev/null 2>&1 &`,
  "for i in $(seq 50); do n=$(ps -eo sid=,stat=,args= | awk -v me=$$ '$1 != me && $2 !~ /^Z/ && /[s]leep 3600/' | wc -l); [ \"$n\" = 1 ] && break; sleep 0.1; done",
  'echo "started, $n in a session of its own"',
].join("\n");
/** Turn 2: how many of turn 1's sleeps are alive (zombies, killed and not reaped, run nothing). */
export const LEFTOVERS_COUNT = "ps -eo stat=,args= | grep -v '^Z' | grep -c '[s]leep 3600' || true";
/** Where turn 1's setsid writer would put its marker, two seconds on. */
export const survivorMarker = (workspace: string) => join(workspace, "survivor");

/** The tool-socket attack as a turn: the script copied into the workspace, run by the session's node. */
export function attackTurn(node: string, workspace: string, toolSocket: string): string {
  copyFileSync(join(REPO_ROOT, "live/support/tool-socket-attack.cjs"), join(workspace, "attack.cjs"));
  return `"${node}" "${workspace}/attack.cjs" "${toolSocket}" ${LONG_LINE_BYTES}`;
}

export type Attack = { deep20000: string; deep1000: string; long: string; refused: number; garbage: string };

/** The error an answer line carries, or the line itself when it is not an answer. */
export function refusal(line: string): string {
  try {
    return (JSON.parse(line) as { error?: string }).error ?? line;
  } catch {
    return line;
  }
}

/** The runner's pid on the host: the process under bwrap that runs the runner's entry (bwrap's own command line names it too). */
export function runnerPid(bwrapPid: number): number {
  for (const todo = childrenOf(bwrapPid); todo.length > 0; ) {
    const pid = todo.pop()!;
    const argv = cmdlineOf(pid) ?? [];
    if (argv[1]?.endsWith(RUNNER_ENTRY) === true && !/(^|\/)(bwrap|setpriv|prlimit)$/.test(argv[0] ?? "")) return pid;
    todo.push(...childrenOf(pid));
  }
  throw new Error(`no runner under bwrap ${bwrapPid}`);
}

/** The peak resident memory of a host process, from /proc/<pid>/status, in MiB. */
export function peakMiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m === null) throw new Error(`no VmHWM for ${pid}`);
  return Number(m[1]) / 1024;
}
