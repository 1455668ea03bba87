// npm run fuzz:gate -- [cases] [--workers N] [--seed S]
// Generated worlds and tool calls (src/conformance/gate/gate-fuzz.ts), each world laid out on disk:
// memory and disk must decide alike, and nothing allowed may resolve, by Pi's own path code and
// the kernel, outside the workspace or through a dangling link. Child processes, not worker
// threads: Pi reads HOME through libuv, which a worker's process.env does not reach.
import { fork } from "node:child_process";
import { rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { WorldDisk, caseArb, checkCase, loadPiPaths, type FuzzCase } from "../src/conformance/gate/gate-fuzz.ts";

type Progress =
  | { kind: "progress"; cases: number; allowed: number; worlds: number }
  | { kind: "failure"; seed: number; index: number; failure: unknown; world: FuzzCase };

const BATCH = 50;
// Many calls per world: laying a tree out costs more than deciding forty calls in it.
const CALLS = { min: 40, max: 60 };

async function child(seed: number, target: number, root: string): Promise<void> {
  const pi = await loadPiPaths();
  // One skeleton per layout for the whole run; each world writes and removes only its own entries.
  const disk = new WorldDisk(root);
  let cases = 0,
    allowed = 0,
    worlds = 0;
  for (let batch = 0; cases < target; batch++) {
    const batchSeed = seed + batch;
    const sample = fc.sample(caseArb(CALLS), { seed: batchSeed, numRuns: BATCH });
    for (const [index, c] of sample.entries()) {
      if (cases >= target) break;
      const r = checkCase(c, disk, pi);
      worlds++;
      cases += c.calls.length;
      allowed += r.allowed;
      if (r.failure !== null) {
        process.send!({ kind: "failure", seed: batchSeed, index, failure: r.failure, world: c } satisfies Progress);
        process.exit(1);
      }
    }
    process.send!({ kind: "progress", cases, allowed, worlds } satisfies Progress);
  }
  process.exit(0);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, dflt: number) => {
    const i = args.indexOf(name);
    return i === -1 ? dflt : Number(args.splice(i, 2)[1]);
  };
  // One worker per core: the cases are independent, so the run scales with them.
  const workers = flag("--workers", availableParallelism());
  const seed = flag("--seed", Date.now() % 1_000_000_000);
  const total = Number(args[0] ?? 10_000);
  if (!Number.isInteger(total) || total <= 0 || !Number.isInteger(workers) || workers <= 0) {
    console.error("usage: npm run fuzz:gate -- [cases] [--workers N] [--seed S]");
    process.exit(2);
  }
  // Short on purpose: the gate resolves every name from "/", so each level of the scratch path is
  // one more lstat per name; under /var/tmp (never /tmp) the run is about half again as fast as
  // under the checkout's .scratch/. Removed at the end.
  const root = `/var/tmp/mosaic-fuzz-gate-${process.pid}`;
  rmSync(root, { recursive: true, force: true });
  console.log(`fuzz:gate: ${total.toLocaleString("en")} cases, ${workers} workers, seed ${seed}`);
  const t0 = performance.now();
  const state = Array.from({ length: workers }, () => ({ cases: 0, allowed: 0, worlds: 0 }));
  let failed = false;
  const timer = setInterval(() => {
    const cases = state.reduce((a, s) => a + s.cases, 0);
    const secs = (performance.now() - t0) / 1000;
    console.log(
      `  ${cases.toLocaleString("en")} cases (${((100 * cases) / total).toFixed(1)}%), ${Math.round(cases / secs).toLocaleString("en")}/s`,
    );
  }, 5000);
  await Promise.all(
    state.map(
      (s, w) =>
        new Promise<void>((done) => {
          const share = Math.floor(total / workers) + (w < total % workers ? 1 : 0);
          // Worker seeds far apart, so their batches never overlap.
          const c = fork(
            import.meta.filename,
            ["--child", String(seed + w * 1_000_000), String(share), join(root, `w${w}`)],
            { stdio: "inherit" },
          );
          c.on("message", (m: Progress) => {
            if (m.kind === "progress") Object.assign(s, m);
            else {
              failed = true;
              console.error(
                `FAILURE (worker ${w}, batch seed ${m.seed}, index ${m.index}; reproduce with fc.sample(caseArb(${JSON.stringify(CALLS)}), {seed: ${m.seed}, numRuns: ${BATCH}})[${m.index}]):`,
              );
              console.error(JSON.stringify(m.failure, null, 2));
              console.error(JSON.stringify(m.world, null, 2));
            }
          });
          c.on("exit", (code) => {
            if (code !== 0) failed = true;
            done();
          });
        }),
    ),
  );
  clearInterval(timer);
  const cases = state.reduce((a, s) => a + s.cases, 0);
  const allowed = state.reduce((a, s) => a + s.allowed, 0);
  const worlds = state.reduce((a, s) => a + s.worlds, 0);
  const secs = (performance.now() - t0) / 1000;
  rmSync(root, { recursive: true, force: true });
  console.log(
    `fuzz:gate: ${cases.toLocaleString("en")} cases (${allowed.toLocaleString("en")} allowed, ${(cases - allowed).toLocaleString("en")} blocked) over ${worlds.toLocaleString("en")} worlds in ${secs.toFixed(1)} s, seed ${seed}: ` +
      (failed ? "FAILED" : "no false allow, memory and disk agreed on every decision"),
  );
  process.exit(failed ? 1 : 0);
}

if (process.argv[2] === "--child") await child(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!);
else await main();
