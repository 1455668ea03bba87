import { makeRuntimeWorld, waitClaimed } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start, type Session } from "../../src/host/launcher.ts";

const N = Number(process.env.MOSAIC_BENCH_STARTS ?? 16);

/**
 * N fake-adapter sessions started at once against N started one after another, in one world:
 * starts per second over the whole wave, and the p95 of each session's spawn to claim.
 */
export async function run(): Promise<void> {
  const w = await makeRuntimeWorld("bench-starts");
  const results: Record<string, { seconds: number; claims: number[] }> = {};
  try {
    for (const mode of ["sequential", "concurrent", "sequential again", "concurrent again"] as const) {
      const names = Array.from({ length: N }, (_, i) => `bs-${mode.replace(/ /g, "-")}-${i}`);
      const prepared = names.map((name) => {
        const p = prepareLaunch(w.request(w.instance("pi-coder", name, { instance: name })));
        if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
        return p.prepared;
      });
      const claims: number[] = [];
      const sessions: Session[] = [];
      const t0 = performance.now();
      const one = async (i: number) => {
        const t = performance.now();
        const s = await start(prepared[i]!);
        sessions.push(s);
        await waitClaimed(w, s, names[i]!, 60_000);
        claims.push(performance.now() - t);
      };
      if (mode.startsWith("sequential")) for (let i = 0; i < N; i++) await one(i);
      else await Promise.all(names.map((_, i) => one(i)));
      const seconds = (performance.now() - t0) / 1000;
      await Promise.all(sessions.map((s) => s.stop()));
      results[mode] = { seconds, claims };
    }
  } finally {
    await w.close();
  }
  const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;
  for (const [mode, r] of Object.entries(results))
    console.log(
      `${N} starts, ${mode}: ${(N / r.seconds).toFixed(1)} starts/s (${r.seconds.toFixed(2)} s), spawn to claim p95 ${p95(r.claims).toFixed(0)} ms`,
    );
  const rate = (m: string) => N / results[m]!.seconds;
  console.log(
    `concurrent against sequential: ${(rate("concurrent") / rate("sequential")).toFixed(2)}x and ${(rate("concurrent again") / rate("sequential again")).toFixed(2)}x the starts per second`,
  );
}
