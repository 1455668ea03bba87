// A root caller's session is bounded by the pids cgroup the launcher itself makes and joins it to
// (docs/hardening.md). The attack table's fork bomb runs under cgroups the attack runner makes; this
// one goes through the real launcher, with prlimit's --nproc dropped on purpose so that only the
// launcher's cgroup stands between the bomb and the host's pid table.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { withoutPrefixed } from "../src/conformance/controls/argv.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { ask, makeRuntimeWorld, waitClaimed, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { SESSION_LIMITS } from "../src/core/sandbox/limits.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { prepareLaunch, start } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { childrenOf } from "../src/host/session-procs.ts";

const facts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap, as root with a pids cgroup",
  checkoutProblem(REPO_ROOT) ??
    sandboxProblem(facts) ??
    (facts.uid !== 0 || facts.cgroups.pids === null
      ? "the tests do not run as root with a pids cgroup: only a root caller's sessions get the launcher's cgroups"
      : null),
);

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("launcher-cgroup");
});
afterAll(async () => w?.close());

/** The host path of a process's pids cgroup, in the hierarchy the launcher makes session cgroups in. */
function pidsCgroupOf(pid: number): string {
  const mount = dirname(facts.cgroups.pids!.dir);
  const v2 = facts.cgroups.pids!.version === 2;
  for (const line of readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n")) {
    const [, ctrls, path] = line.split(":");
    if (ctrls === undefined || path === undefined) continue;
    if (v2 ? ctrls === "" : ctrls.split(",").includes("pids")) return join(mount, path);
  }
  throw new Error(`process ${pid} is in no pids cgroup`);
}

const BOMB = 700;

describe("a root caller's session, bounded by the launcher's own pids cgroup", () => {
  it(`with --nproc dropped, a fork bomb of ${BOMB} sleepers stops at pids.max (${SESSION_LIMITS.tasks.value}) of the launcher's cgroup`, async () => {
    expect(BOMB, "the bomb asks for more than the bound").toBeGreaterThan(SESSION_LIMITS.tasks.value);
    const p = prepareLaunch(w.request(w.instance("pi-coder", "cgroup-bomb")));
    if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
    // Broken on purpose: RLIMIT_NPROC gone, so the only bound left on the session's tasks is the cgroup.
    const argv = withoutPrefixed("--nproc=")(p.prepared.session.argv);
    expect(argv.length, "--nproc was there to drop").toBe(p.prepared.session.argv.length - 1);
    const s = await start({ ...p.prepared, session: { ...p.prepared.session, argv } });
    try {
      await waitClaimed(w, s, "cgroup-bomb");
      // The bomb runs in a shell of its own: dash exits when a fork fails. Each spawn is counted with
      // builtins only; then kill -1 (a builtin, sparing pid 1, the runner) frees the slots to read it.
      const bomb = `i=0; while [ $i -lt ${BOMB} ]; do sleep 30 & i=$((i+1)); echo $i > /tmp/spawned; done`;
      const reply = await ask(
        w,
        "cgroup-bomb",
        `/bin/sh -c '${bomb}' 2>/dev/null; kill -9 -1 2>/dev/null; sleep 1; cat /tmp/spawned`,
        "pm-test",
        60_000,
      );
      const spawned = Number(reply.trim());
      expect(spawned, `sleepers spawned (reply: ${reply.slice(0, 200)})`).toBeLessThan(SESSION_LIMITS.tasks.value);
      // The bomb itself ran far: what stopped it is the bound (less the runner's threads), not a shell that gave up.
      expect(spawned, "the bomb reached the bound").toBeGreaterThan(SESSION_LIMITS.tasks.value - 100);
      const [runner] = childrenOf(s.pid);
      const dir = pidsCgroupOf(runner!);
      expect(dir, "the runner is in the launcher's session cgroup").toMatch(/mosaic-sessions\//);
      expect(readFileSync(join(dir, "pids.max"), "utf8").trim()).toBe(String(SESSION_LIMITS.tasks.value));
      const refused = /max (\d+)/.exec(readFileSync(join(dir, "pids.events"), "utf8"));
      expect(Number(refused?.[1]), "the cgroup refused forks").toBeGreaterThan(0);
    } finally {
      await s.stop();
    }
  }, 90_000);
});
