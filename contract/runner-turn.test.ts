import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTurn } from "../src/host/runner/turn.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

// One turn of the runner, as a real process (sh): what it reads back after the turn.
const scratch = makeScratch("runner-turn");
afterAll(() => scratch.remove());

function turn(script: string, marker: string, n: number) {
  return startTurn({ argv: ["/bin/sh", "-c", script, "sh"], env: { PATH: "/usr/bin:/bin" }, cwd: scratch.root }, "m", {
    timeoutMs: 10_000,
    stderrFile: join(scratch.root, `${n}.stderr`),
    marker,
    stdoutBytes: 1024 * 1024,
    stderrBytes: 1024 * 1024,
    killNamespace: false,
  }).done;
}

describe("the turn-end marker (Pi's agent_end) is the turn's own", () => {
  it("a marker left by an earlier turn is removed before the next starts: a turn that never reached agent_end does not count", async () => {
    const marker = join(scratch.root, "turn.done");
    const first = await turn(`echo "agent_end" > "${marker}"`, marker, 1);
    expect(first.marker, "control: a turn that writes the marker counts").toBe(true);
    expect(existsSync(marker)).toBe(true);
    const second = await turn("exit 0", marker, 2);
    expect(second.code).toBe(0);
    expect(second.marker, "turn 2 exited 0 without reaching agent_end").toBe(false);
  });
  it("a stale marker is gone even when the turn's command cannot start", async () => {
    const marker = join(scratch.root, "turn2.done");
    writeFileSync(marker, "agent_end from an earlier turn\n");
    const r = await startTurn({ argv: ["/no/such/harness"], env: {}, cwd: scratch.root }, "m", {
      timeoutMs: 10_000,
      stderrFile: join(scratch.root, "3.stderr"),
      marker,
      stdoutBytes: 1024,
      stderrBytes: 1024,
      killNamespace: false,
    }).done;
    expect(r.code).toBe(127);
    expect(r.marker).toBe(false);
    expect(existsSync(marker), readFileSync(join(scratch.root, "3.stderr"), "utf8")).toBe(false);
  });
});
