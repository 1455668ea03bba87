import { ask, makeRuntimeWorld, waitClaimed } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../src/host/launcher.ts";
import type { PreparedLaunch } from "../../src/host/launcher.ts";

/**
 * A confined session's start (spawn to claim) against the same runner started unconfined, and one
 * fake-adapter turn's round trip through the broker in each, interleaved so drift hits both alike.
 */
export async function run(): Promise<void> {
  const w = await makeRuntimeWorld("bench-runtime");
  const rounds = 7;
  const t = {
    confinedStart: [] as number[],
    plainStart: [] as number[],
    confinedTurn: [] as number[],
    plainTurn: [] as number[],
  };
  try {
    for (let i = 0; i < rounds; i++) {
      for (const confined of [true, false]) {
        const name = `bench-${confined ? "c" : "u"}-${i}`;
        const p = prepareLaunch(w.request(w.instance("pi-coder", name, { instance: name })));
        if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
        const prepared: PreparedLaunch = confined ? p.prepared : unconfined(p.prepared);
        const t0 = performance.now();
        const s = await start(prepared);
        await waitClaimed(w, s, name);
        const t1 = performance.now();
        const reply = await ask(w, name, "echo turn-done");
        const t2 = performance.now();
        if (reply.trim() !== "turn-done") throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
        // Unconfined, the spawned process is the runner itself, not a bwrap whose child it is.
        if (confined) await s.stop();
        else {
          process.kill(s.pid, "SIGTERM");
          await s.exited;
        }
        (confined ? t.confinedStart : t.plainStart).push(t1 - t0);
        (confined ? t.confinedTurn : t.plainTurn).push(t2 - t1);
      }
    }
  } finally {
    await w.close();
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const line = (what: string, c: number[], u: number[]) =>
    console.log(
      `${what}: confined ${med(c).toFixed(0)} ms, unconfined ${med(u).toFixed(0)} ms (${(med(c) / med(u)).toFixed(2)}x), medians of ${rounds}`,
    );
  line("session start, spawn to claim", t.confinedStart, t.plainStart);
  line("one fake-adapter turn through the broker", t.confinedTurn, t.plainTurn);
}

/** The same launch with bwrap left out: the runner's own command, run on the host. */
function unconfined(p: PreparedLaunch): PreparedLaunch {
  const argv = p.session.argv;
  return { ...p, session: { ...p.session, argv: argv.slice(argv.lastIndexOf("--") + 1) } };
}
