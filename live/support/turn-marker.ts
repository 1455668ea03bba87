// The turn-stale-marker effect through the real launcher and runner: a fake-adapter session whose
// session.json ends each turn by Pi's agent_end marker, as a Pi session's does. Turn 1 ends properly
// (its marker written); turn 2 prints the same agent_end stream but never writes the marker, as a
// Pi turn whose gate hung or whose extension was skipped. Used by live/effect-killers.test.ts as
// the tests' own identity and, through turn-marker-as.ts, as an unprivileged uid.
import { join } from "node:path";
import { planRunnerBounds } from "../../src/core/runner/bounds.ts";
import { ask, waitClaimed, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../src/host/launcher.ts";

export type MarkerCase = "blocked" | "control";

/** One line of Pi's JSON stream: agent_end with an assistant message saying `text`. */
const agentEnd = (text: string) =>
  `printf '%s\\n' '${JSON.stringify({ type: "agent_end", messages: [{ role: "assistant", content: [{ type: "text", text }] }] })}'`;

/**
 * The two turns' replies. In the control, turn 2 writes the marker itself on purpose: a marker
 * present when the turn ends counts it, which is what a stale one left by turn 1 would give.
 */
export async function markerTurns(
  w: RuntimeWorld,
  name: string,
  which: MarkerCase,
  hostEnv = w.hostEnv,
): Promise<string[]> {
  const p = prepareLaunch(
    w.request(w.instance("pi-coder", name), {
      hostEnv,
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 20 },
    }),
  );
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  const marker = join(p.prepared.req.runDir, "turn.done");
  const turnEnd = {
    kind: "marker" as const,
    file: marker,
    writtenAt: "agent_end",
    why: "Pi's extension writes it at agent_end (a stand-in turn writes it here)",
  };
  const sessionFile = { ...p.prepared.session.sessionFile, turnEnd, bounds: planRunnerBounds(turnEnd) };
  const s = await start({ ...p.prepared, session: { ...p.prepared.session, sessionFile } });
  try {
    await waitClaimed(w, s, name);
    const one = await ask(w, name, `touch "${marker}"; ${agentEnd("turn one")}`, "pm-marker");
    const two = await ask(
      w,
      name,
      which === "control" ? `touch "${marker}"; ${agentEnd("turn two")}` : agentEnd("turn two"),
      "pm-marker",
    );
    return [one, two];
  } finally {
    await s.stop();
  }
}
