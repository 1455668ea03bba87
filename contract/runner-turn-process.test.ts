// One harness turn (src/host/runner/turn.ts) as a real process (sh), outside any sandbox: how it is
// started, what is read back, each cap, the wall clock, and what is killed when it ends. The
// namespace kill (pid 1 only) is never asked for here: outside a PID namespace it would signal
// every process the test's user may signal.
import { existsSync, openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTurn, type TurnOptions } from "../src/host/runner/turn.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("turn-process");
afterAll(() => scratch.remove());
let n = 0;

function turn(script: string, opts: Partial<TurnOptions> = {}, env: Record<string, string> = {}) {
  const stderrFile = join(scratch.root, `${++n}.stderr`);
  const t = startTurn(
    { argv: ["/bin/sh", "-c", script, "sh"], env: { PATH: "/usr/bin:/bin", ...env }, cwd: scratch.root },
    "the message",
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
  return { ...t, stderrFile };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  return !alive(pid);
}

describe("one harness turn as a process", () => {
  it("runs the argv with the message appended, in its cwd and env, stdin closed, in a process group of its own", async () => {
    const t = turn(
      'printf "%s|%s|%s|" "$1" "$PWD" "$FOO"; cat; printf "|%s" "$(($(cut -d" " -f5 /proc/$$/stat) - $$))"',
      {},
      {
        FOO: "bar",
      },
    );
    const r = await t.done;
    expect(r).toEqual({
      code: 0,
      signal: null,
      timedOut: false,
      stdout: `the message|${scratch.root}|bar||0`,
      marker: false,
      overCap: null,
    });
  });

  it("writes stderr through to its record and reads stdout, multi-byte characters split over writes included", async () => {
    const t = turn("printf 'caf\\303'; sleep 0.02; printf '\\251 ok'; echo oops >&2; exit 5");
    const r = await t.done;
    expect([r.code, r.stdout, r.overCap]).toEqual([5, "café ok", null]);
    expect(readFileSync(t.stderrFile, "utf8")).toBe("oops\n");
  });

  it("leaves no descriptor open on its stderr file once the turn is done", async () => {
    const t = turn("echo x >&2");
    await t.done;
    const open = readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === t.stderrFile;
      } catch {
        return false;
      }
    });
    expect(open).toEqual([]);
  });

  it("stdout up to its cap is read; one byte past it fails the turn naming the cap, and the turn is killed", async () => {
    const at = await turn("printf 0123456789", { stdoutBytes: 10 }).done;
    expect([at.stdout, at.overCap]).toEqual(["0123456789", null]);
    const t = turn("printf 0123456789A; sleep 5", { stdoutBytes: 10 });
    const over = await t.done;
    expect(over.overCap).toEqual({ stream: "stdout", cap: 10 });
    expect(over.signal).toBe("SIGKILL");
    expect(over.stdout).toBe("");
  });

  it("stderr up to its cap is kept in the file, counted over writes; past it the file stops at the cap and the turn fails", async () => {
    const at = turn("printf 01234 >&2; sleep 0.02; printf 56789 >&2", { stderrBytes: 10 });
    const atRun = await at.done;
    expect([atRun.code, atRun.overCap]).toEqual([0, null]);
    expect(readFileSync(at.stderrFile, "utf8")).toBe("0123456789");
    const over = turn("printf 0123456 >&2; sleep 0.02; printf 789ABCDEF >&2; sleep 5", { stderrBytes: 10 });
    const overRun = await over.done;
    expect(overRun.overCap).toEqual({ stream: "stderr", cap: 10 });
    expect(overRun.signal).toBe("SIGKILL");
    expect(readFileSync(over.stderrFile, "utf8")).toBe("0123456789");
  });

  it("a stderr file that cannot be written (a full disk) ends the record, not the turn", async () => {
    const r = await startTurn(
      { argv: ["/bin/sh", "-c", "echo a >&2; sleep 0.02; echo b >&2; echo out", "sh"], env: {}, cwd: "/" },
      "m",
      {
        timeoutMs: 10_000,
        stderrFd: openSync("/dev/full", "w", 0o600),
        markerWritten: () => false,
        stdoutBytes: 1024,
        stderrBytes: 1024,
        killNamespace: false,
      },
    ).done;
    expect([r.code, r.stdout, r.overCap]).toEqual([0, "out\n", null]);
  });

  it("a turn past its wall clock is killed and says it timed out", async () => {
    const r = await turn("sleep 5", { timeoutMs: 50 }).done;
    expect([r.timedOut, r.signal, r.code]).toEqual([true, "SIGKILL", null]);
  });

  it("what the turn left running in its group is killed when its process exits", async () => {
    const pidFile = join(scratch.root, "left.pid");
    const r = await turn(`sleep 30 & echo $! > ${pidFile}; exit 0`).done;
    expect(r.code).toBe(0);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await gone(pid), "the background sleep went with the turn").toBe(true);
  });

  it("kill() ends a running turn's whole group", async () => {
    const pidFile = join(scratch.root, "kill.pid");
    const t = turn(`sleep 30 & echo $! > ${pidFile}; wait`);
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8") === "") await new Promise((r) => setTimeout(r, 5));
    const pid = Number(readFileSync(pidFile, "utf8"));
    t.kill();
    const r = await t.done;
    expect(r.signal).toBe("SIGKILL");
    expect(await gone(pid)).toBe(true);
  });

  it("a leftover outside the group that holds the pipes open does not hold the turn past its grace", async () => {
    const pidFile = join(scratch.root, "setsid.pid");
    const started = Date.now();
    // The turn exits only once the leftover is in its own session (its pid written from there).
    const r = await turn(
      `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 30' & while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo done`,
    ).done;
    const pid = Number(readFileSync(pidFile, "utf8"));
    try {
      expect([r.code, r.stdout]).toEqual([0, "done\n"]);
      expect(alive(pid), "the leftover outlived the turn's group, so it held the pipes").toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
});
