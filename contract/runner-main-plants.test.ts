// The session runner (src/host/runner/main.ts) as a real process, against names a turn plants where
// the runner keeps its turn files: a FIFO, a directory or a link at the next turn's stderr record,
// turns/ swapped for a link, a directory at Pi's marker. Each fails only the turn it meets, with
// its reason; the runner answers the next and stops on SIGTERM. A runner that blocks (its open of
// the FIFO, the attack) is killed with SIGKILL after a bound, so the test ends by its assertions.
// Also turns/ keeping only the newest records (bounds.turn.stderrFiles). Set-up: runner-main-child.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planRunnerBounds } from "../src/core/runner/bounds.ts";
import { markerRefusal, recordRefusal } from "../src/core/runner/turn-records.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import {
  type Msg,
  type Run,
  count,
  rewrite,
  runDir,
  sends,
  session,
  verbs,
  withMessages,
} from "./support/runner-main-child.ts";

// StrykerJS picks a mutated file's tests by the import graph, and this file only spawns main.ts:
// an import that never runs (main.ts would start a runner in the test's worker) puts it in the graph.
if (process.env.MOSAIC_NEVER_SET_IN_TESTS === "load the runner") await import("../src/host/runner/main.ts");
const scratch = makeScratch("runner-main-plants");
afterAll(() => scratch.remove());
const ENV = { PATH: "/usr/bin:/bin", NODE_COMPILE_CACHE: join(scratch.root, "compile-cache") };
/** How long a runner may take for its turns before it is taken as stuck and killed. */
const STUCK_MS = 8000;
const HOST_TEXT = "the host's own file\n";

/** A run whose harness runs each message's body in sh, in the run directory. */
function shellRun(over: Record<string, unknown> = {}): Run {
  const r = runDir(scratch.root, over);
  rewrite(r, { adapter: { argv: ["/bin/sh", "-c", 'exec /bin/sh -c "$1"', "sh"], env: ENV, cwd: r.dir } });
  return r;
}

/** The bodies as messages, all at the first read; SIGTERM once every one has its reply; SIGKILL when stuck. */
async function turns(r: Run, bodies: string[]) {
  const msgs: Msg[] = bodies.map((body, i) => ({ id: `m${i + 1}`, from: "pm", kind: "message", body }));
  let killed = false;
  const out = await session(
    r,
    ENV,
    withMessages(msgs),
    (seen, child) => {
      if (count(seen, "message.send") >= bodies.length && seen.at(-1)?.verb === "message.read") child.kill("SIGTERM");
    },
    {
      onSpawn: (child) => {
        const t = setTimeout(() => ((killed = true), child.kill("SIGKILL")), STUCK_MS);
        child.on("exit", () => clearTimeout(t));
      },
    },
  );
  return { ...out, killed, replies: sends(out.seen).map((a) => (a as { body: string }).body) };
}

describe("a name planted at the next turn's record fails that turn, never the runner", () => {
  for (const [what, plant] of [
    ["a FIFO", 'mkfifo "$PWD/turns/0002.stderr"'],
    ["a directory", 'mkdir "$PWD/turns/0002.stderr"'],
    ["a link to a host file", 'ln -s "$PWD/host-file" "$PWD/turns/0002.stderr"'],
  ] as const)
    it(`${what}: turn 2 fails naming its record, turn 3 is answered, SIGTERM releases the role`, async () => {
      const r = shellRun();
      writeFileSync(join(r.dir, "host-file"), HOST_TEXT);
      const out = await turns(r, [`${plant}; echo planted`, "echo two", "echo three"]);
      expect(out.killed, `the runner was stuck and killed: ${out.stderr}`).toBe(false);
      expect(out.replies, "turn 2 fails naming the planted record; turn 3 runs").toEqual([
        "planted",
        `The turn failed: ${recordRefusal("0002.stderr", "EEXIST")}`,
        "three",
      ]);
      expect([out.code, verbs(out.seen).at(-1)], "stopped by SIGTERM, the role released").toEqual([0, "role.release"]);
      expect(readFileSync(join(r.dir, "host-file"), "utf8"), "the link's target is untouched").toBe(HOST_TEXT);
      expect(readFileSync(join(r.dir, "turns/0003.stderr"), "utf8"), "turn 3 has its record").toBe("");
    });

  it("turns/ swapped for a link to the workspace after the start: the records still go to the turns/ the runner opened", async () => {
    const r = shellRun();
    const ws = join(r.dir, "ws");
    const out = await turns(r, [
      `mkdir "${ws}"; mv turns turns.moved; ln -s "${ws}" turns; echo swapped`,
      "echo two >&2",
    ]);
    expect(out.replies).toEqual(["swapped", ""]);
    expect(readdirSync(ws), "nothing went through the link").toEqual([]);
    expect(readFileSync(join(r.dir, "turns.moved/0002.stderr"), "utf8"), "turn 2's record").toBe("two\n");
  });

  it("a directory at Pi's turn-end marker: the next turn fails naming it, and the runner goes on", async () => {
    const r = shellRun();
    const marker = join(r.dir, "turn.done");
    const turnEnd = { kind: "marker", file: marker, writtenAt: "agent_end", why: "a stand-in" };
    rewrite(r, { turnEnd, bounds: planRunnerBounds({ kind: "marker" }) });
    const out = await turns(r, [`mkdir -p "${marker}/inside"`, "echo two", "echo three"]);
    expect(out.killed, `the runner was stuck and killed: ${out.stderr}`).toBe(false);
    expect(out.replies.slice(1), "each later turn fails naming the marker; none ends the runner").toEqual([
      `The turn failed: ${markerRefusal(marker, "EISDIR")}`,
      `The turn failed: ${markerRefusal(marker, "EISDIR")}`,
    ]);
    expect([out.code, verbs(out.seen).at(-1)]).toEqual([0, "role.release"]);
  });

  it("a turns/ that is not a directory when the runner starts: exit 2 before the claim, naming it", async () => {
    const r = shellRun();
    rmdirSync(join(r.dir, "turns"));
    mkdirSync(join(r.dir, "elsewhere"));
    symlinkSync(join(r.dir, "elsewhere"), join(r.dir, "turns"));
    const out = await turns(r, ["echo one"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`mosaic runner: exit 2: ${r.dir}/turns: ENOTDIR`);
    expect(out.seen, "nothing was asked of the broker").toEqual([]);
  });
});

describe("turns/ keeps the newest records (bounds.turn.stderrFiles)", () => {
  const bodies = ["echo 1 >&2", "echo 2 >&2", "echo 3 >&2", "echo 4 >&2"];
  it("kept 2: after four turns only the third's and the fourth's records are left, each whole", async () => {
    const b = planRunnerBounds({ kind: "exit" });
    const r = shellRun({ bounds: { ...b, turn: { ...b.turn, stderrFiles: 2 } } });
    const out = await turns(r, bodies);
    expect(out.replies).toEqual(["", "", "", ""]);
    expect(readdirSync(join(r.dir, "turns")).sort(), "turns/ holds the newest two records").toEqual([
      "0003.stderr",
      "0004.stderr",
    ]);
    expect(readFileSync(join(r.dir, "turns/0004.stderr"), "utf8")).toBe("4\n");
  });

  it("control: kept 16 (the plan's), all four are left", async () => {
    const r = shellRun();
    await turns(r, bodies);
    expect(readdirSync(join(r.dir, "turns")).sort()).toEqual([
      "0001.stderr",
      "0002.stderr",
      "0003.stderr",
      "0004.stderr",
    ]);
    expect(existsSync(join(r.dir, "turns/0005.stderr"))).toBe(false);
  });
});
