import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openTurnFiles, pinTurnDirs, type TurnDirs } from "../src/host/runner/turn-files.ts";
import { startTurn } from "../src/host/runner/turn.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

// One turn of the runner, as a real process (sh), its files made as the runner makes them: what it reads back after the turn.
const scratch = makeScratch("runner-turn");
afterAll(() => scratch.remove());

/** A run directory with turns/, and its turn directories pinned with the marker at `marker`. */
function pinned(name: string, marker: string): { run: string; dirs: TurnDirs } {
  const run = join(scratch.root, name);
  mkdirSync(join(run, "turns"), { recursive: true });
  const p = pinTurnDirs(run, join(run, marker));
  if (!p.ok) throw new Error(p.why);
  return { run, dirs: p.dirs };
}

function turn(argv: string[], dirs: TurnDirs, n: number) {
  const files = openTurnFiles(dirs, n, 16);
  if (!files.ok) throw new Error(files.why);
  return startTurn({ argv, env: { PATH: "/usr/bin:/bin" }, cwd: scratch.root }, "m", {
    timeoutMs: 10_000,
    ...files.files,
    stdoutBytes: 1024 * 1024,
    stderrBytes: 1024 * 1024,
    killNamespace: false,
  }).done;
}

describe("the turn-end marker (Pi's agent_end) is the turn's own", () => {
  it("a marker left by an earlier turn is removed before the next starts: a turn that never reached agent_end does not count", async () => {
    const { run, dirs } = pinned("earlier", "turn.done");
    const marker = join(run, "turn.done");
    const first = await turn(["/bin/sh", "-c", `echo "agent_end" > "${marker}"`, "sh"], dirs, 1);
    expect(first.marker, "control: a turn that writes the marker counts").toBe(true);
    expect(existsSync(marker)).toBe(true);
    const second = await turn(["/bin/sh", "-c", "exit 0", "sh"], dirs, 2);
    expect(second.code).toBe(0);
    expect(second.marker, "turn 2 exited 0 without reaching agent_end").toBe(false);
  });
  it("a stale marker is gone even when the turn's command cannot start", async () => {
    const { run, dirs } = pinned("cannot-start", "turn2.done");
    const marker = join(run, "turn2.done");
    writeFileSync(marker, "agent_end from an earlier turn\n");
    const r = await turn(["/no/such/harness"], dirs, 3);
    expect(r.code).toBe(127);
    expect(r.marker).toBe(false);
    expect(existsSync(marker), readFileSync(join(run, "turns/0003.stderr"), "utf8")).toBe(false);
  });
});
