// Many sessions at once (issue 23): N fake-adapter sessions through the real launcher, sharing one
// host, one launcher state dir, one broker and one seccomp file. Each reads its own canary and
// tries every other session's canary, run directory, tool socket and model socket; all stop; the
// broker saw N claims and N releases, each on its own instance; nothing is left on the host. Then a
// second wave's host process is SIGKILLed and recover() ends each of its sessions once, host-lost.
// The positive control binds one workspace into another sandbox on purpose: exactly that pair's
// row crosses. As root (CI) and as an unprivileged uid. MOSAIC_LOAD_N raises N (default 16).
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { USER_UID, runAsUser, runsAsRoot, userUid } from "./support/as-user.ts";
import { crashWave, runWave, type CrashObserved, type WaveObserved } from "./support/load-wave.ts";

const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));
const N = Number(process.env.MOSAIC_LOAD_N ?? 16);
const CRASH_N = Math.max(2, Math.floor(N / 4));

/** The assertions every wave must meet, whoever ran it. */
function expectCleanWave(o: WaveObserved, n: number): void {
  expect(o.replied, `every session answered its probe; ${o.unanswered.join("; ")}`).toBe(n);
  expect(o.ownCanaryRead, "every session read its own canary: the probe works").toBe(n);
  expect(o.crossings, "no session read another's canary, run directory or sockets").toEqual([]);
  expect(o.foreignCalls, "no capability worked on another run's instance").toEqual([]);
  expect(o.claims, "the broker saw one claim per session").toBe(n);
  expect(o.releases, "and one release per session").toBe(n);
  expect(new Set(Object.values(o.ends)), "every session stopped when asked").toEqual(new Set(["stopped"]));
  expect(o.leftovers, "no process, cgroup, mount stub or socket left on the host").toEqual([]);
}

function expectCleanRecovery(c: CrashObserved, n: number): void {
  expect(c.launched, "the host process launched the whole wave before it was killed").toBe(n);
  expect([...c.recovered].sort(), "recover() ended each session of the wave").toEqual([...c.runs].sort());
  expect(new Set(Object.values(c.ends)), "each ended host-lost").toEqual(new Set(["host-lost"]));
  expect(Object.values(c.endLines), "each ended exactly once in the launch log").toEqual(c.runs.map(() => 1));
  expect(c.again, "a second recover() finds none of them open").toEqual([]);
  expect(c.leftovers, "nothing of the killed wave left on the host").toEqual([]);
}

describe("many sessions at once (MOSAIC_LOAD_N, default 16), as the tests' own uid (root in CI)", () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    w = await makeRuntimeWorld("load");
  });
  afterAll(async () => w?.close());

  it("every session claims, answers and stops; none reaches another's files, sockets or instance; nothing is left", async () => {
    expectCleanWave(await runWave(w, "load", N), N);
  }, 240_000);

  it("the host process killed with a wave running: recover() ends each session once, host-lost, and nothing is left", async () => {
    expectCleanRecovery(await crashWave(w, "crash", CRASH_N), CRASH_N);
  }, 120_000);

  it("positive control: one workspace bound into another sandbox on purpose crosses exactly that pair's row", async () => {
    const o = await runWave(w, "exposed", 3, { reader: 1, owner: 2 });
    expect(o.crossings).toEqual(["exposed-1 reads exposed-2's canary"]);
    expect(o.ownCanaryRead).toBe(3);
    expect(o.leftovers).toEqual([]);
  }, 120_000);
});

// The same waves with the launcher, the broker and the sessions all of an unprivileged uid.
describe(`many sessions at once, as an unprivileged uid (${runsAsRoot ? `${USER_UID} under setpriv` : "the tests' own"})`, () => {
  let got: { wave: WaveObserved; crash: CrashObserved };
  beforeAll(() => {
    const r = runAsUser("live/support/load-as.ts", "mosaic-load", [String(N)], 300_000);
    if (!r.line.startsWith('{"wave":')) throw new Error(`the waves as uid ${userUid} reported nothing: ${r.stderr}`);
    got = JSON.parse(r.line);
  }, 330_000);

  it("every session claims, answers and stops; none reaches another's files, sockets or instance; nothing is left", () => {
    expect(got.wave.uid, "the launcher and the sessions ran as the unprivileged uid").toBe(userUid);
    expectCleanWave(got.wave, N);
  });

  it("the host process killed with a wave running: recover() ends each session once, host-lost, and nothing is left", () => {
    expectCleanRecovery(got.crash, CRASH_N);
  });
});
