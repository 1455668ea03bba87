// A turn's files (src/host/runner/turn-files.ts) in a run directory the session writes too: each
// record is a new file the runner makes, a name planted there fails that turn with its reason and
// is neither opened nor followed, turns/ keeps the newest records only, and the marker is only
// unlinked and lstat'ed. In process: nothing here opens a FIFO (contract/runner-main-plants.test.ts
// plants one before the real runner, in a process of its own that a blocking open cannot hang).
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { recordRefusal, markerRefusal, staleTurnRecord } from "../src/core/runner/turn-records.ts";
import { openTurnFiles, pinTurnDirs, type TurnDirs } from "../src/host/runner/turn-files.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("turn-files");
afterAll(() => scratch.remove());
let runs = 0;

/** A fresh run directory with turns/, pinned; the marker (if any) is `turn.done` in it. */
function run(marker = false): { dir: string; dirs: TurnDirs } {
  const dir = join(scratch.root, `run-${++runs}`);
  mkdirSync(join(dir, "turns"), { recursive: true });
  const p = pinTurnDirs(dir, marker ? join(dir, "turn.done") : null);
  if (!p.ok) throw new Error(p.why);
  return { dir, dirs: p.dirs };
}

/** The n-th turn's files, its record written and closed as a turn would. */
function turnFiles(dirs: TurnDirs, n: number, keep = 16, text = `turn ${n}\n`) {
  const f = openTurnFiles(dirs, n, keep);
  if (f.ok) {
    writeSync(f.files.stderrFd, text);
    closeSync(f.files.stderrFd);
  }
  return f;
}

const HOST_TEXT = "the host's own file\n";

describe("staleTurnRecord: the record that leaves turns/ as a turn starts", () => {
  it("none while no more than `keep` turns have started; then the one `keep` turns back", () => {
    expect([1, 2, 3].map((n) => staleTurnRecord(n, 3))).toEqual([null, null, null]);
    expect([4, 5, 20].map((n) => staleTurnRecord(n, 3))).toEqual(["0001.stderr", "0002.stderr", "0017.stderr"]);
    expect([1, 2].map((n) => staleTurnRecord(n, 1))).toEqual([null, "0001.stderr"]);
  });
});

describe("a turn's stderr record is a new file the runner makes", () => {
  it("made 0600, a regular file of one link, in turns/ under the turn's number", () => {
    const { dir, dirs } = run();
    expect(turnFiles(dirs, 1).ok).toBe(true);
    const st = lstatSync(join(dir, "turns/0001.stderr"));
    expect([st.isFile(), st.mode & 0o777, st.nlink]).toEqual([true, 0o600, 1]);
    expect(readFileSync(join(dir, "turns/0001.stderr"), "utf8")).toBe("turn 1\n");
  });

  it.each([
    ["a symbolic link to a host file", "link"],
    ["a dangling link", "dangling"],
    ["a directory", "dir"],
    ["a regular file", "file"],
  ] as const)("%s planted at the name: the turn is refused naming it, and nothing is opened or followed", (_, kind) => {
    const { dir, dirs } = run();
    const host = join(dir, "host-file");
    writeFileSync(host, HOST_TEXT);
    const at = join(dir, "turns/0001.stderr");
    if (kind === "link") symlinkSync(host, at);
    if (kind === "dangling") symlinkSync(join(dir, "made-through-the-link"), at);
    if (kind === "dir") mkdirSync(at);
    if (kind === "file") writeFileSync(at, "planted\n");
    const f = turnFiles(dirs, 1);
    expect(f, "the turn fails naming the record and the errno").toEqual({
      ok: false,
      why: recordRefusal("0001.stderr", "EEXIST"),
    });
    expect(readFileSync(host, "utf8"), "the link's target is untouched").toBe(HOST_TEXT);
    expect(existsSync(join(dir, "made-through-the-link")), "nothing is made through a dangling link").toBe(false);
    if (kind === "file") expect(readFileSync(at, "utf8"), "a planted file is not written").toBe("planted\n");
    expect(turnFiles(dirs, 2).ok, "the next turn's record is made").toBe(true);
  });

  it("the refusal says which record, why, and that the turn did not run", () => {
    expect(recordRefusal("0002.stderr", "EEXIST")).toBe(
      "its stderr record turns/0002.stderr could not be made (EEXIST), so the turn did not run: the runner writes a record only into a new file it creates, never into a name it finds there",
    );
  });

  it("turns/ is held from before the first turn: replaced by a link later, the records still go to the directory the runner opened", () => {
    const { dir, dirs } = run();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    renameSync(join(dir, "turns"), join(dir, "turns.moved"));
    symlinkSync(elsewhere, join(dir, "turns"));
    expect(turnFiles(dirs, 1).ok).toBe(true);
    expect(readdirSync(elsewhere), "nothing went through the link").toEqual([]);
    expect(readdirSync(join(dir, "turns.moved")), "the record is in the directory the runner pinned").toEqual([
      "0001.stderr",
    ]);
  });

  it("a turns/ that is a link, or missing, is refused when the runner starts, naming it", () => {
    const dir = join(scratch.root, `run-${++runs}`);
    mkdirSync(join(dir, "real"), { recursive: true });
    expect(pinTurnDirs(dir, null)).toEqual({ ok: false, why: `${dir}/turns: ENOENT` });
    symlinkSync(join(dir, "real"), join(dir, "turns"));
    expect(pinTurnDirs(dir, null), "O_DIRECTORY with O_NOFOLLOW: a link is not a directory").toEqual({
      ok: false,
      why: `${dir}/turns: ENOTDIR`,
    });
    rmLink(join(dir, "turns"));
    mkdirSync(join(dir, "turns"));
    expect(pinTurnDirs(dir, join(dir, "nowhere/turn.done"))).toEqual({
      ok: false,
      why: `${dir}/nowhere: ENOENT`,
    });
  });
});

const rmLink = (p: string) => execFileSync("rm", [p]);

describe("turns/ keeps the newest records only (bounds.turn.stderrFiles)", () => {
  it("with keep 2, after four turns only the third's and the fourth's records are left", () => {
    const { dir, dirs } = run();
    for (const n of [1, 2, 3, 4]) expect(turnFiles(dirs, n, 2).ok).toBe(true);
    expect(readdirSync(join(dir, "turns")).sort(), "turns/ holds the newest two").toEqual([
      "0003.stderr",
      "0004.stderr",
    ]);
  });

  it("a link or a directory at a stale name: the link goes and its target stays; the directory stays and the turn runs", () => {
    const { dir, dirs } = run();
    const host = join(dir, "host-file");
    writeFileSync(host, HOST_TEXT);
    symlinkSync(host, join(dir, "turns/0001.stderr"));
    mkdirSync(join(dir, "turns/0002.stderr"));
    expect([3, 4].map((n) => turnFiles(dirs, n, 2).ok)).toEqual([true, true]);
    expect(readdirSync(join(dir, "turns")).sort()).toEqual(["0002.stderr", "0003.stderr", "0004.stderr"]);
    expect(readFileSync(host, "utf8"), "the link's target is untouched").toBe(HOST_TEXT);
  });
});

describe("the turn-end marker is only unlinked and lstat'ed", () => {
  it("a file, a link or a FIFO left at the marker is removed, never opened; the turn goes on", () => {
    const { dir, dirs } = run(true);
    const marker = join(dir, "turn.done");
    const host = join(dir, "host-file");
    writeFileSync(host, HOST_TEXT);
    for (const [n, plant] of [
      [1, () => writeFileSync(marker, "agent_end\n")],
      [2, () => symlinkSync(host, marker)],
      [3, () => execFileSync("mkfifo", [marker])],
    ] as const) {
      plant();
      const f = turnFiles(dirs, n);
      expect(f.ok, `turn ${n}`).toBe(true);
      expect(existsSync(marker) || lstatExists(marker), `turn ${n}: the marker's name is free`).toBe(false);
    }
    expect(readFileSync(host, "utf8"), "the link's target is untouched").toBe(HOST_TEXT);
  });

  it("a directory at the marker: the turn is refused naming it, and the runner goes on", () => {
    const { dir, dirs } = run(true);
    const marker = join(dir, "turn.done");
    mkdirSync(join(marker, "inside"), { recursive: true });
    expect(turnFiles(dirs, 1)).toEqual({ ok: false, why: markerRefusal(marker, "EISDIR") });
    expect(markerRefusal(marker, "EISDIR")).toBe(
      `its turn-end marker ${marker} could not be cleared (EISDIR), so the turn did not run: a marker left from before would count a turn that never reached agent_end`,
    );
  });

  it("written means a regular file at the name: a link to one, a directory or a FIFO is not", () => {
    const { dir, dirs } = run(true);
    const marker = join(dir, "turn.done");
    const host = join(dir, "host-file");
    writeFileSync(host, HOST_TEXT);
    const f = openTurnFiles(dirs, 1, 16);
    if (!f.ok) throw new Error(f.why);
    closeSync(f.files.stderrFd);
    expect(f.files.markerWritten(), "nothing there").toBe(false);
    writeFileSync(marker, "agent_end\n");
    expect(f.files.markerWritten(), "a file").toBe(true);
    rmLink(marker);
    symlinkSync(host, marker);
    expect(f.files.markerWritten(), "a link to a file").toBe(false);
    rmLink(marker);
    execFileSync("mkfifo", [marker]);
    expect(f.files.markerWritten(), "a FIFO").toBe(false);
  });

  it("without a marker (no marker turn end) nothing is written", () => {
    const { dirs } = run(false);
    const f = openTurnFiles(dirs, 1, 16);
    if (!f.ok) throw new Error(f.why);
    closeSync(f.files.stderrFd);
    expect(f.files.markerWritten()).toBe(false);
  });
});

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
