// One harness turn (src/host/runner/turn.ts), the edges: a command that cannot start, stderr
// counted chunk by chunk, and a leftover outside the turn's group (setsid) that keeps its pipes
// open and writes after the turn failed.
import { openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTurn, type TurnOptions } from "../src/host/runner/turn.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const scratch = makeScratch("turn-edges");
afterAll(() => scratch.remove());
let n = 0;

function turn(argv: string[], opts: Partial<TurnOptions> = {}) {
  const stderrFile = join(scratch.root, `${++n}.stderr`);
  const t = startTurn({ argv, env: { PATH: "/usr/bin:/bin" }, cwd: scratch.root }, "m", {
    timeoutMs: 10_000,
    stderrFd: openSync(stderrFile, "w", 0o600),
    markerWritten: () => false,
    stdoutBytes: 1024,
    stderrBytes: 1024,
    killNamespace: false,
    ...opts,
  });
  return { ...t, stderrFile };
}

const openOn = (file: string) =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  });

describe("one harness turn, the edges", () => {
  it("a command that cannot start is exit 127 with the spawn error as its output, and its stderr file is closed", async () => {
    const t = turn(["/no/such/harness"]);
    const r = await t.done;
    expect(r).toEqual({
      code: 127,
      signal: null,
      timedOut: false,
      stdout: "spawn /no/such/harness ENOENT\n",
      marker: false,
      overCap: null,
    });
    expect(openOn(t.stderrFile)).toEqual([]);
  });

  it("stderr's room is what is left of the cap after the chunks before", async () => {
    const t = turn(["/bin/sh", "-c", "printf 0123456 >&2; sleep 0.3; printf 789ABCDEF >&2; sleep 5"], {
      stderrBytes: 10,
    });
    const r = await t.done;
    expect(r.overCap).toEqual({ stream: "stderr", cap: 10 });
    expect(readFileSync(t.stderrFile, "utf8")).toBe("0123456789");
  });

  it("after a cap, what a leftover outside the group still writes is not read, and its pipes are closed after the grace", async () => {
    const pidFile = join(scratch.root, "late.pid");
    const started = Date.now();
    const t = turn(
      [
        "/bin/sh",
        "-c",
        // The leftover writes its own pid once in its session, and the turn goes on only then: a cap
        // that kills the group before setsid ran would leave no leftover and prove nothing.
        `setsid sh -c 'echo $$ > ${pidFile}; sleep 0.2; printf late; sleep 30' & while [ ! -s ${pidFile} ]; do sleep 0.01; done; printf 0123456789AB >&2; sleep 5`,
      ],
      { stderrBytes: 10 },
    );
    const r = await t.done;
    const pid = Number(readFileSync(pidFile, "utf8"));
    try {
      expect(r.overCap).toEqual({ stream: "stderr", cap: 10 });
      expect(alive(pid), "the leftover outlived the turn's group, so it held the pipes").toBe(true);
      expect(r.stdout, "nothing is read past the cap").toBe("");
      expect(Date.now() - started, "the grace closes the pipes the leftover holds").toBeLessThan(8000);
    } finally {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
});
