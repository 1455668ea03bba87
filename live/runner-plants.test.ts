// A turn plants a name where the runner (pid 1) keeps its turn files, in the run directory the
// session writes: a FIFO, a directory or a link to a host file at the next turn's stderr record, a
// directory at Pi's turn-end marker, or turns/ itself swapped for a link. Through the real launcher,
// bwrap and runner, as the tests' own uid (root in CI) and as an unprivileged uid: the next message
// still gets a reply (that turn fails naming the name it could not make, or runs with its record in
// the turns/ the runner holds), stop() ends within a bound, the broker records role.release, and the
// link's target is untouched. The control runs the runner's old call on the same planted name in a
// child process: it blocks on the FIFO (killed at a bound), throws on the directories, and writes
// through the links.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { markerRefusal, recordRefusal } from "../src/core/runner/turn-records.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { ask, makeRuntimeWorld, waitClaimed, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../src/host/launcher.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { runAsUser, userUid } from "./support/as-user.ts";
import { HOST_TEXT, STOP_BOUND_MS, plantCase, type Plant, type PlantObserved } from "./support/runner-plants-cases.ts";

const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("runner-plants");
});
afterAll(async () => w?.close());

/** The session ended by the stop, within its bound, with the role released. */
function expectStopped(got: PlantObserved, who: string): void {
  expect(
    got.stopMs,
    `${who}: stop() ends within ${STOP_BOUND_MS} ms (null: it did not, and was killed)`,
  ).not.toBeNull();
  expect([got.end, got.released], `${who}: stopped, and the broker recorded role.release`).toEqual(["stopped", true]);
}

const refused = (why: string) => `The turn failed: ${why}`;
const RECORD_REFUSED = refused(recordRefusal("0002.stderr", "EEXIST"));

/** Each plant's assertions, for either identity. */
const CHECKS: Record<Plant, (got: PlantObserved, who: string) => void> = {
  fifo: (got, who) => {
    expect(got.replies, `${who}: turn 2 fails naming the FIFO's name, turn 3 is answered`).toEqual([
      "planted",
      RECORD_REFUSED,
      "three",
    ]);
    expectStopped(got, who);
    expect(got.control, `${who}: control: the runner's old open of the FIFO blocks until it is killed`).toBe("blocked");
  },
  directory: (got, who) => {
    expect(got.replies, `${who}: turn 2 fails naming the directory's name, turn 3 is answered`).toEqual([
      "planted",
      RECORD_REFUSED,
      "three",
    ]);
    expectStopped(got, who);
    expect(got.control, `${who}: control: the runner's old open throws, which ended pid 1`).toBe("EISDIR");
  },
  link: (got, who) => {
    expect(got.replies, `${who}: turn 2 fails naming the link's name, turn 3 is answered`).toEqual([
      "planted",
      RECORD_REFUSED,
      "three",
    ]);
    expectStopped(got, who);
    expect(got.hostFile, `${who}: the link's target is untouched`).toBe(HOST_TEXT);
    expect(
      [got.control, got.hostFileAfterControl],
      `${who}: control: the runner's old open writes through the link into the host file`,
    ).toEqual(["done", "the old open wrote this\n"]);
  },
  "marker-directory": (got, who) => {
    expect(got.replies.slice(1), `${who}: turns 2 and 3 fail naming the marker; the runner answers each`).toEqual([
      refused(markerRefusal(`${got.run}/turn.done`, "EISDIR")),
      refused(markerRefusal(`${got.run}/turn.done`, "EISDIR")),
    ]);
    expectStopped(got, who);
    expect(got.control, `${who}: control: the runner's old rmSync of the marker throws, which ended pid 1`).toBe(
      "ERR_FS_EISDIR",
    );
  },
  "turns-link": (got, who) => {
    expect(got.replies, `${who}: turn 2 runs`).toEqual(["planted", "two"]);
    expectStopped(got, who);
    expect(
      [got.workspaceHasRecord, got.movedRecord],
      `${who}: turn 2's record is in the turns/ the runner held from its start, and none went through the link`,
    ).toEqual([false, "two\n"]);
    expect(got.controlThroughLink, `${who}: control: the runner's old open by path goes through the link`).toBe(true);
  },
};

describe("a name a turn plants where pid 1 keeps its turn files fails that turn at most (as the tests' own uid)", () => {
  for (const [plant, what] of [
    ["fifo", "a FIFO at the next turn's stderr record"],
    ["directory", "a directory at the next turn's stderr record"],
    ["link", "a link to a host file at the next turn's stderr record"],
    ["marker-directory", "a directory at Pi's turn-end marker"],
    ["turns-link", "turns/ swapped for a link to the workspace"],
  ] as const)
    it(`${what}: the next message is answered, stop() ends in time and releases the role; control: the runner's old call on it`, async () => {
      const got = await plantCase(w, plant, plant);
      CHECKS[plant](got, "own uid");
    }, 90_000);
});

describe("as an unprivileged uid (65534 under setpriv when the tests run as root, else the tests' own): the same plants", () => {
  it("each plant fails that turn at most, stop() ends in time and releases the role; control: the runner's old call on it", () => {
    const r = runAsUser("live/support/runner-plants-as.ts", "mosaic-runner-plants", [], 280_000);
    expect(r.line, `the cases report as uid ${userUid}: ${r.stderr.slice(-800)}`).toMatch(/^\{"uid":/);
    const got = JSON.parse(r.line) as { uid: number; cases: Record<Plant, PlantObserved> };
    expect(got.uid, "the launcher and the session ran as the unprivileged uid").toBe(userUid);
    for (const plant of Object.keys(CHECKS) as Plant[]) CHECKS[plant](got.cases[plant], `uid ${userUid}`);
  }, 300_000);
});

describe("turns/ keeps the newest records (session.json bounds.turn.stderrFiles)", () => {
  /** Five turns, each writing its number to stderr, with `keep` records kept: turns/ as the host sees it after. */
  async function recordsAfterFive(name: string, keep: number | null): Promise<string[]> {
    const p = prepareLaunch(w.request(w.instance("pi-coder", name)));
    if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
    const sf = p.prepared.session.sessionFile;
    const bounds = { ...sf.bounds, turn: { ...sf.bounds.turn, stderrFiles: keep ?? sf.bounds.turn.stderrFiles } };
    const s = await start({ ...p.prepared, session: { ...p.prepared.session, sessionFile: { ...sf, bounds } } });
    try {
      await waitClaimed(w, s, name);
      for (const n of [1, 2, 3, 4, 5])
        expect(await ask(w, name, `echo ${n} >&2; echo ${n}`, "pm-records")).toBe(`${n}`);
      return readdirSync(join(s.runDir, "turns")).sort();
    } finally {
      await s.stop();
    }
  }

  it("blocked: with 2 kept, five turns leave the newest two records on the host's disk", async () => {
    expect(await recordsAfterFive("records-2", 2), "the runner removed each record as it fell out").toEqual([
      "0004.stderr",
      "0005.stderr",
    ]);
  }, 60_000);

  it("control: with the plan's 16 kept, all five records are there", async () => {
    expect(await recordsAfterFive("records-16", null)).toEqual([1, 2, 3, 4, 5].map((n) => `000${n}.stderr`));
  }, 60_000);
});
