// recover() in-process, the edges contract/host-sweep-recover.test.ts leaves: a runner that dies
// on its own a moment after its bwrap is waited for (no survivor, never killed), and a record
// without cgroups removes no directory. The "bwrap" is a shell started under the name bwrap with a
// session's command line tail, as there; every process killed is one this file started.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LaunchRegistry, type LaunchRecord } from "../src/host/launch-registry.ts";
import { recover } from "../src/host/recover.ts";
import { childrenOf, isAlive } from "../src/host/session-procs.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-more-recover-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

let n = 0;
function world() {
  const dir = join(root, `w${n++}`);
  const runDir = join(dir, "run");
  mkdirSync(join(runDir, "sock"), { recursive: true });
  const registry = new LaunchRegistry(join(dir, "launches"));
  const bus = { endRun: (_run: string) => {} };
  const record = (run: string, extra: Partial<LaunchRecord> = {}) =>
    registry.record({
      run,
      instance: `acme-${run}`,
      runDir,
      pid: 0,
      startedAt: "2026-01-01T00:00:00.000Z",
      mountStubs: [],
      cgroups: [],
      end: null,
      ...extra,
    });
  return { dir, runDir, registry, bus, record };
}

const comm = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

/**
 * A process named bwrap (ignoring SIGTERM) whose one child, the runner, gets SIGHUP when it dies and
 * exits 300 ms after that, by itself. Resolves once the runner has set its trap (it runs its loop's sleep).
 */
async function slowDyingRunner(runDir: string): Promise<{ bwrap: ChildProcess; runner: number }> {
  const runner = `setpriv --pdeathsig HUP sh -c 'trap "sleep 0.3; exit 0" HUP; while :; do sleep 0.05; done'`;
  const bwrap = spawn("/bin/sh", ["-c", `trap "" TERM; ${runner} & wait`, "--chdir", runDir, runDir], {
    argv0: "bwrap",
    stdio: "ignore",
  });
  started.push(bwrap.pid!);
  for (let i = 0; i < 2500; i++) {
    const [child] = childrenOf(bwrap.pid!);
    if (child !== undefined && comm(child) === "sh" && childrenOf(child).some((g) => comm(g) === "sleep")) {
      started.push(child);
      return { bwrap, runner: child };
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error("the stand-in bwrap started no runner");
}

describe("recover(), more edges", () => {
  it("a runner still dying after its bwrap is waited for: it ends by itself and is no survivor", async () => {
    const w = world();
    w.record("r-slow");
    const { bwrap, runner } = await slowDyingRunner(w.runDir);

    const out = await recover(w.registry, w.bus);

    expect(out).toEqual([{ run: "r-slow", killed: [bwrap.pid], survivors: [], workspace: null }]);
    expect(isAlive(runner), "the runner ended").toBe(false);
  });

  it("a record without cgroups removes no directory: not even one named by a relative path in the host's cwd", async () => {
    const w = world();
    w.record("r-nocg", { cgroups: undefined as unknown as string[] });
    // The one directory a stray entry would name: relative, so under the cwd. Made here, removed here.
    const stray = join(process.cwd(), "Stryker was here");
    mkdirSync(stray);
    try {
      const out = await recover(w.registry, w.bus);
      expect(out.map((r) => r.run)).toEqual(["r-nocg"]);
      expect(existsSync(stray), "nothing was removed").toBe(true);
    } finally {
      if (existsSync(stray)) rmdirSync(stray);
    }
  });
});
