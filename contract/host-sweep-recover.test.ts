// recover() in-process (seed 002): a host that died hard left open launches behind, and the next
// host ends each one. The "bwrap" here is a plain shell started under the name bwrap with a
// session's command line tail (`--chdir <run> <run>`), which is all recover() looks for; its child
// stands in for the runner. No sandbox is started; every process killed is one this file started.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LaunchRegistry, type LaunchRecord } from "../src/host/launch-registry.ts";
import { recover } from "../src/host/recover.ts";
import { childrenOf, isAlive } from "../src/host/session-procs.ts";

const root = mkdtempSync(join(tmpdir(), "host-sweep-recover-"));
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
/** A fresh state dir with a registry, and a run directory holding both of the run's sockets. */
function world() {
  const dir = join(root, `w${n++}`);
  const runDir = join(dir, "run");
  mkdirSync(join(runDir, "sock"), { recursive: true });
  for (const s of ["tools.sock", "model.sock"]) writeFileSync(join(runDir, "sock", s), "");
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const registry = new LaunchRegistry(join(dir, "launches"));
  const ended: string[] = [];
  const bus = { endRun: (run: string) => void ended.push(run) };
  const record = (run: string, extra: Partial<LaunchRecord> = {}): LaunchRecord => {
    const r: LaunchRecord = {
      run,
      instance: `acme-${run}`,
      runDir,
      pid: 0,
      startedAt: "2026-01-01T00:00:00.000Z",
      mountStubs: [],
      cgroups: [],
      end: null,
      ...extra,
    };
    registry.record(r);
    return r;
  };
  return { dir, runDir, ws, registry, ended, bus, record };
}

const comm = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

/** Once the runner runs sleep: setpriv has set its parent-death signal by then. */
const runsSleep = (child: number) => comm(child) === "sleep";

/**
 * A process named bwrap whose command line ends `--chdir <runDir> <runDir>`, with one child running
 * `runner`; resolves once `ready` holds for that child.
 */
async function fakeBwrap(
  runDir: string,
  runner: string,
  ready: (child: number) => boolean = runsSleep,
): Promise<{ bwrap: ChildProcess; runner: number }> {
  const bwrap = spawn("/bin/sh", ["-c", `trap "" TERM; ${runner} & wait`, "--chdir", runDir, runDir], {
    argv0: "bwrap",
    stdio: "ignore",
  });
  started.push(bwrap.pid!);
  for (let i = 0; i < 2500; i++) {
    const [child] = childrenOf(bwrap.pid!);
    if (child !== undefined && ready(child)) {
      started.push(child);
      return { bwrap, runner: child };
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error("the stand-in bwrap started no runner");
}

/**
 * A bwrap (ignoring SIGTERM) whose runner gets SIGHUP when it dies and exits 300 ms after that, by
 * itself. Ready once the runner has set its trap (it runs its loop's sleep).
 */
const slowDyingRunner = (runDir: string) =>
  fakeBwrap(
    runDir,
    `setpriv --pdeathsig HUP sh -c 'trap "sleep 0.3; exit 0" HUP; while :; do sleep 0.05; done'`,
    (child) => comm(child) === "sh" && childrenOf(child).some(runsSleep),
  );

describe("recover() ends what a dead host left", () => {
  it("an open launch with no process left ends host-lost: its run voided, sockets and mount stubs removed, workspace checked", async () => {
    const w = world();
    const stub = join(w.ws, ".gitmodules");
    writeFileSync(stub, "");
    w.record("r-open", { workspace: w.ws, quarantine: join(w.dir, "q"), mountStubs: [{ path: stub, kind: "file" }] });
    w.record("r-done", { end: { reason: "exit", at: "2026-01-01T00:00:01.000Z", detail: "exit 0" } });

    const out = await recover(w.registry, w.bus);

    expect(out).toEqual([
      { run: "r-open", killed: [], survivors: [], workspace: { verdict: "clean", workspace: w.ws } },
    ]);
    expect(w.ended).toEqual(["r-open"]);
    const rec = w.registry.get("r-open")!;
    expect(rec.end).toEqual({ reason: "host-lost", at: expect.any(String), detail: "no process left" });
    expect(rec.check).toEqual({ verdict: "clean", workspace: w.ws });
    expect(existsSync(join(w.runDir, "sock", "tools.sock")), "the tools socket").toBe(false);
    expect(existsSync(join(w.runDir, "sock", "model.sock")), "the model socket").toBe(false);
    expect(existsSync(stub), "the mount stub").toBe(false);
    expect(w.registry.get("r-done")!.end!.reason, "an ended launch is left alone").toBe("exit");
  });

  it("a launch recorded without a workspace or without a quarantine is not checked: its workspace is null", async () => {
    const w = world();
    w.record("r-none");
    w.record("r-noq", { workspace: w.ws });
    w.record("r-nows", { quarantine: join(w.dir, "q") });
    // A record from before cgroups were recorded has no cgroups field: nothing to remove.
    w.record("r-nocg", { cgroups: undefined as unknown as string[] });
    const out = await recover(w.registry, w.bus);
    expect(out.map((r) => [r.run, r.workspace]).sort()).toEqual([
      ["r-nocg", null],
      ["r-none", null],
      ["r-noq", null],
      ["r-nows", null],
    ]);
    for (const run of ["r-none", "r-noq", "r-nows", "r-nocg"]) expect(w.registry.get(run)!.check).toBe(null);
    expect(existsSync(join(w.dir, "q")), "no quarantine made").toBe(false);
  });

  it("a session's bwrap is found by its command line and killed, and a runner that dies with it is no survivor", async () => {
    const w = world();
    w.record("r-live");
    const other = world();
    // A bwrap of another run: not this launch's to kill.
    const bystander = await fakeBwrap(other.runDir, "sleep 30");
    const { bwrap, runner } = await fakeBwrap(w.runDir, "setpriv --pdeathsig KILL sleep 30");
    // A second bwrap of the same run: both are killed, both named.
    const second = await fakeBwrap(w.runDir, "setpriv --pdeathsig KILL sleep 30");

    const out = await recover(w.registry, w.bus);

    const both = [bwrap.pid!, second.bwrap.pid!].sort((a, b) => a - b);
    expect(out).toEqual([{ run: "r-live", killed: both, survivors: [], workspace: null }]);
    expect(isAlive(bwrap.pid!), "bwrap").toBe(false);
    expect(isAlive(runner), "the runner").toBe(false);
    expect(isAlive(bystander.bwrap.pid!), "another run's bwrap").toBe(true);
    expect(w.registry.get("r-live")!.end!.detail).toBe(
      `found by its command line and killed (bwrap ${both[0]}, ${both[1]})`,
    );
  });

  it("a runner that outlives its bwrap is found before the kill, killed after it, and reported", async () => {
    const w = world();
    w.record("r-outlived");
    const { bwrap, runner } = await fakeBwrap(w.runDir, "sleep 30");

    const out = await recover(w.registry, w.bus);

    expect(out).toEqual([{ run: "r-outlived", killed: [bwrap.pid], survivors: [runner], workspace: null }]);
    expect(isAlive(bwrap.pid!), "bwrap").toBe(false);
    for (let i = 0; i < 100 && isAlive(runner); i++) await new Promise((r) => setTimeout(r, 2));
    expect(isAlive(runner), "the runner").toBe(false);
  });
});

describe("recover(), the edges around a runner and a record", () => {
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

describe("recover() frees what an ended launch held", () => {
  it("a root caller's launch: its uid lock is released and its identity files removed, another run's lock stays", async () => {
    const w = world();
    const uids = join(w.dir, "uids");
    mkdirSync(uids);
    const holder = (run: string) =>
      JSON.stringify({ run, workspace: w.ws, hostPid: 1, at: "2026-01-01T00:00:00.000Z" });
    const uidLock = join(uids, "70001.lock");
    writeFileSync(uidLock, holder("r-uid"));
    // A lock of the same name another run holds now: not this launch's to release.
    const otherLock = join(uids, "70002.lock");
    writeFileSync(otherLock, holder("r-other"));
    const identityDir = join(w.dir, "identity", "r-uid");
    mkdirSync(identityDir, { recursive: true });
    for (const f of ["passwd", "group"]) writeFileSync(join(identityDir, f), "session:x:70001:70001::/:/bin/sh\n");
    w.record("r-uid", { uidLock, identityDir });
    w.record("r-stale", { uidLock: otherLock });

    const out = await recover(w.registry, w.bus);

    expect(out.map((r) => r.run).sort()).toEqual(["r-stale", "r-uid"]);
    expect(existsSync(uidLock), "the uid is free for the next session").toBe(false);
    expect(existsSync(otherLock), "another run's uid lock").toBe(true);
    expect(existsSync(identityDir), "the session's passwd and group").toBe(false);
  });

  it("a launch whose identity files are already gone ends all the same", async () => {
    const w = world();
    w.record("r-gone", { identityDir: join(w.dir, "identity", "r-gone") });
    const out = await recover(w.registry, w.bus);
    expect(out.map((r) => r.run)).toEqual(["r-gone"]);
    expect(w.registry.get("r-gone")!.end!.reason).toBe("host-lost");
  });
});
