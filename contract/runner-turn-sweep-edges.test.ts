// One harness turn (src/host/runner/turn.ts), what the generated sweep found untested: the
// namespace kill asked for (as pid 1, and refused when not pid 1), the wall clock after the turn is
// over, a read error on a pipe, the capped stream closed at once, stderr after stdout's cap, a stderr
// write that fails once, and the grace that closes pipes a leftover holds.
//
// process.kill is replaced for each test (a -1 is recorded, never sent: outside a PID namespace it
// would signal every process the test's user may signal); process.pid is made 1 where the runner is
// to be pid 1. The turn's ChildProcess and its writeSync are reached through node's builtin
// modules (syncBuiltinESMExports), and its timers are faked where a test decides when they fire.
import * as childProcess from "node:child_process";
import type { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { startTurn, type TurnOptions } from "../src/host/runner/turn.ts";

const scratch = makeScratch("turn-sweep-edges");
afterAll(() => scratch.remove());
let n = 0;

const require = createRequire(import.meta.url);
const cjsChildProcess = require("node:child_process") as typeof childProcess;
const cjsFs = require("node:fs") as typeof fs;
const realSpawn = cjsChildProcess.spawn;
const realWriteSync = cjsFs.writeSync;
const realKill = process.kill;
const realPid = Object.getOwnPropertyDescriptor(process, "pid")!;

/** Every process.kill the code under test makes; -1 is recorded and never sent. */
let kills: Array<[number, string | number | undefined]> = [];
let spawned: ChildProcess[] = [];

function watch(opts: { pid1?: boolean; failKillAll?: boolean } = {}) {
  kills = [];
  spawned = [];
  process.kill = ((pid: number, signal?: string | number) => {
    kills.push([pid, signal]);
    if (pid === -1) {
      if (opts.failKillAll) throw Object.assign(new Error("kill EPERM"), { code: "EPERM" });
      return true;
    }
    return realKill.call(process, pid, signal);
  }) as typeof process.kill;
  cjsChildProcess.spawn = ((...a: Parameters<typeof realSpawn>) => {
    const c = realSpawn(...a);
    spawned.push(c);
    return c;
  }) as typeof realSpawn;
  syncBuiltinESMExports();
  if (opts.pid1) Object.defineProperty(process, "pid", { ...realPid, value: 1 });
}

afterEach(() => {
  vi.useRealTimers();
  process.kill = realKill;
  Object.defineProperty(process, "pid", realPid);
  cjsChildProcess.spawn = realSpawn;
  cjsFs.writeSync = realWriteSync;
  syncBuiltinESMExports();
});

function turn(script: string, opts: Partial<TurnOptions> = {}) {
  const stderrFile = join(scratch.root, `${++n}.stderr`);
  const t = startTurn(
    { argv: ["/bin/sh", "-c", script, "sh"], env: { PATH: "/usr/bin:/bin" }, cwd: scratch.root },
    "m",
    {
      timeoutMs: 10_000,
      stderrFd: openSync(stderrFile, "w", 0o600),
      markerWritten: () => false,
      stdoutBytes: 1024,
      stderrBytes: 1024,
      killNamespace: false,
      ...opts,
    },
  );
  return { ...t, stderrFile, child: spawned.at(-1)! };
}

const exited = (c: ChildProcess) => new Promise<void>((r) => c.once("exit", () => r()));

/**
 * Shell text that starts `script` (sh, with the turn's pid as $1) in a session of its own, outside
 * the turn's group, and goes on only once it is there, its pid in pidFile: a cap or an exit that
 * kills the turn's group cannot catch it half-started.
 */
function leftover(pidFile: string, script: string, redirect: string) {
  const file = `${pidFile}.sh`;
  writeFileSync(file, `echo $$ > ${pidFile}\n${script}\n`);
  return `setsid sh ${file} $$ ${redirect} & while [ ! -s ${pidFile} ]; do sleep 0.01; done;`;
}

function killLater(pidFile: string) {
  try {
    realKill.call(process, Number(readFileSync(pidFile, "utf8")), "SIGKILL");
  } catch {
    // already gone
  }
}

describe("the namespace kill at a turn's end", () => {
  it("asked for, a runner that is pid 1 kills every process of its namespace (kill -1) after the turn's group", async () => {
    watch({ pid1: true });
    const t = turn("exit 3", { killNamespace: true });
    const r = await t.done;
    expect(r.code).toBe(3);
    expect(kills).toEqual([
      [-t.child.pid!, "SIGKILL"],
      [-1, "SIGKILL"],
    ]);
  });

  it("not asked for, pid 1 kills the turn's group only", async () => {
    watch({ pid1: true });
    const t = turn("exit 0", { killNamespace: false });
    await t.done;
    expect(kills).toEqual([[-t.child.pid!, "SIGKILL"]]);
  });

  it("asked for, a runner that is not pid 1 signals nothing it does not head", async () => {
    watch();
    const t = turn("exit 0", { killNamespace: true });
    await t.done;
    expect(kills).toEqual([[-t.child.pid!, "SIGKILL"]]);
  });

  it("a namespace kill that fails (nothing else left) still ends the turn with its result", async () => {
    watch({ pid1: true, failKillAll: true });
    const t = turn("printf ok; exit 4", { killNamespace: true });
    const r = await t.done;
    expect([r.code, r.stdout]).toEqual([4, "ok"]);
    expect(kills.at(-1)).toEqual([-1, "SIGKILL"]);
  });
});

describe("the wall clock of a turn that is over kills nothing", () => {
  it("a turn that exited: its timer is cleared, even while a leftover holds its pipes past the exit", async () => {
    watch();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const pidFile = join(scratch.root, "clock.pid");
    const t = turn(`${leftover(pidFile, "exec sleep 30", "")} exit 0`, { timeoutMs: 500 });
    try {
      await exited(t.child);
      kills = [];
      // the wall clock (500) falls due inside the close grace (1000)
      vi.advanceTimersByTime(1000);
      const r = await t.done;
      expect([r.code, r.timedOut], "the turn exited 0 before its wall clock").toEqual([0, false]);
      vi.advanceTimersByTime(20_000);
      expect(kills, "nothing is signalled after the turn's end").toEqual([]);
    } finally {
      killLater(pidFile);
    }
  });

  it("a command that cannot start: its timer is cleared with the error, before the pipes close", async () => {
    watch({ pid1: true });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const t = startTurn({ argv: ["/no/such/harness"], env: {}, cwd: scratch.root }, "m", {
      timeoutMs: 500,
      stderrFd: openSync(join(scratch.root, `${++n}.stderr`), "w", 0o600),
      markerWritten: () => false,
      stdoutBytes: 1024,
      stderrBytes: 1024,
      killNamespace: true,
    });
    const r = await t.done;
    vi.advanceTimersByTime(20_000);
    expect(r.code).toBe(127);
    expect(kills, "neither the group nor the namespace is signalled for a turn that never ran").toEqual([]);
  });
});

describe("a turn's pipes", () => {
  it("a read error on stdout or stderr is the pipe's, not the runner's (pid 1): it is not thrown, and the turn ends with its output", async () => {
    watch();
    const t = turn("printf out; echo err >&2");
    const thrown: unknown[] = [];
    for (const s of [t.child.stdout!, t.child.stderr!])
      try {
        s.emit("error", Object.assign(new Error("read EIO"), { code: "EIO" }));
      } catch (e) {
        thrown.push(e);
      }
    expect(thrown).toEqual([]);
    const r = await t.done;
    expect([r.code, r.stdout]).toEqual([0, "out"]);
    expect(readFileSync(t.stderrFile, "utf8")).toBe("err\n");
  });

  it("past stdout's cap stdout is closed at once, even while a leftover outside the group holds it", async () => {
    watch();
    const pidFile = join(scratch.root, "capped.pid");
    const t = turn(`${leftover(pidFile, "exec sleep 30", "2>/dev/null")} printf 0123456789A; sleep 5`, {
      stdoutBytes: 10,
    });
    try {
      await exited(t.child);
      // the exit's grace is a second away: only the cap can have closed it
      expect(t.child.stdout!.destroyed).toBe(true);
      expect((await t.done).overCap).toEqual({ stream: "stdout", cap: 10 });
    } finally {
      killLater(pidFile);
    }
  });

  it("after stdout's cap, what a leftover writes to stderr is not recorded", async () => {
    watch();
    const pidFile = join(scratch.root, "late-err.pid");
    // the leftover writes once the turn's process is gone (killed at the cap), inside the grace
    const late = 'while kill -0 "$1" 2>/dev/null; do sleep 0.01; done; printf late >&2; exec sleep 30';
    const t = turn(`${leftover(pidFile, late, ">/dev/null")} printf 0123456789A; sleep 5`, { stdoutBytes: 10 });
    try {
      const r = await t.done;
      expect(r.overCap).toEqual({ stream: "stdout", cap: 10 });
      expect(readFileSync(t.stderrFile, "utf8")).toBe("");
    } finally {
      killLater(pidFile);
    }
  });

  it("after stderr's cap, what a leftover writes to stdout is not read", async () => {
    watch();
    const pidFile = join(scratch.root, "late-out.pid");
    // the leftover writes once the turn's process is gone (killed at the cap), inside the grace
    const late = 'while kill -0 "$1" 2>/dev/null; do sleep 0.01; done; printf late; exec sleep 30';
    const t = turn(`${leftover(pidFile, late, "2>/dev/null")} printf 0123456789A >&2; sleep 5`, { stderrBytes: 10 });
    try {
      const r = await t.done;
      expect(r.overCap).toEqual({ stream: "stderr", cap: 10 });
      expect(r.stdout).toBe("");
    } finally {
      killLater(pidFile);
    }
  });

  it("a stderr write that fails ends the record there: a later chunk, once the disk has room, is not written after the gap", async () => {
    watch();
    const failedOnce = join(scratch.root, "enospc.done");
    let failed = 0;
    cjsFs.writeSync = ((...a: Parameters<typeof realWriteSync>) => {
      if (failed === 0) {
        failed++;
        writeFileSync(failedOnce, "");
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      return (realWriteSync as (...b: unknown[]) => number)(...a);
    }) as typeof realWriteSync;
    syncBuiltinESMExports();
    // the second chunk is written only once the first has failed: two reads, never one
    const t = turn(`printf a >&2; while [ ! -e ${failedOnce} ]; do sleep 0.01; done; printf b >&2; printf out`);
    const r = await t.done;
    expect([r.code, r.stdout, failed]).toEqual([0, "out", 1]);
    expect(readFileSync(t.stderrFile, "utf8")).toBe("");
  });

  it("the grace after the exit closes both pipes a leftover outside the group holds, stderr too", async () => {
    watch();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const pidFile = join(scratch.root, "grace.pid");
    const t = turn(`${leftover(pidFile, "exec sleep 30", ">/dev/null")} echo done`);
    try {
      await exited(t.child);
      expect(t.child.stderr!.destroyed, "control: the leftover holds stderr at the exit").toBe(false);
      vi.advanceTimersByTime(1000);
      expect([t.child.stdout!.destroyed, t.child.stderr!.destroyed]).toEqual([true, true]);
      const r = await t.done;
      expect([r.code, r.stdout]).toEqual([0, "done\n"]);
    } finally {
      killLater(pidFile);
    }
  });
});
