import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, linkSync, lstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { bytesOf } from "../src/core/workspace/bytes.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { WALK_BOUNDS } from "../src/core/workspace/inspect.ts";
import type { WorkspaceCheck } from "../src/core/workspace/remedy.ts";
import { chownEntries, handOver, ownedEntries } from "../src/host/handover.ts";
import { CHECK_AS, loop, makeDeep, race, untilFooled } from "../src/conformance/worlds/racer.ts";

// A root caller's handover through a real tree, as root: a link an earlier session left in the
// workspace hands nothing behind it to the session's uid, neither by the walk going through it
// nor by a chown following it; a name that is not UTF-8 is handed over as any other. Each layer
// is tried alone: the walk's listing, and the chown given a path through a link as if a walk had
// been fooled. Then the handover raced by a process swapping names, and a tree past PATH_MAX.
// Not through start(): it tests handOver itself on disk, as root; no session runs.
const it = liveIt("root", process.getuid?.() === 0 ? null : "handing a tree to another uid needs root");
const ID = { uid: 65534, gid: 65534 };
const raw = (bytes: string) => Buffer.from(bytes, "latin1");

describe("the handover of a workspace to the session's uid", () => {
  const scratch = makeScratch("handover");
  afterAll(() => scratch.remove());

  /** A workspace with links to a directory and a file of the host's beyond it, and a name that is not UTF-8. */
  function world(label: string): { ws: string; host: string } {
    const ws = join(scratch.root, label, "ws");
    const host = join(scratch.root, label, "host");
    mkdirSync(join(host, "etc"), { recursive: true });
    writeFileSync(join(host, "etc/shadow"), "root's\n");
    writeFileSync(join(host, "secret"), "root's\n");
    chmodSync(join(host, "secret"), 0o600);
    mkdirSync(join(ws, "src"), { recursive: true });
    writeFileSync(join(ws, "src/main.ts"), "x\n");
    symlinkSync(host, join(ws, "src/host-dir"));
    symlinkSync(join(host, "secret"), join(ws, "secret-link"));
    writeFileSync(raw(`${ws}/bad\xff`), "x\n");
    return { ws, host };
  }

  const owners = (host: string) =>
    [host, join(host, "etc"), join(host, "etc/shadow"), join(host, "secret")].map((p) => statSync(p).uid);

  it("a link in the workspace hands nothing behind it over: the host's directory and file stay root's; every entry of the workspace, a name that is not UTF-8 among them, is the session's", () => {
    const { ws, host } = world("links");
    let n = 0;
    expect(() => (n = handOver(ws, ID)), "the handover goes through").not.toThrow();
    expect(n, "the root, src, main.ts, both links and bad\\xff").toBe(6);
    expect(owners(host), "nothing beyond a link changed hands").toEqual([0, 0, 0, 0]);
    for (const p of [ws, join(ws, "src/main.ts"), join(ws, "src/host-dir"), join(ws, "secret-link")])
      expect(lstatSync(p).uid, `${p} is the session's (a link itself, not what it names)`).toBe(ID.uid);
    expect(lstatSync(raw(`${ws}/bad\xff`)).uid, "the name that is not UTF-8 is the session's").toBe(ID.uid);
  });

  it("the walk lists each link as a link and nothing beyond it", () => {
    const { ws } = world("walk");
    const entries = ownedEntries(ws);
    const root = bytesOf(ws);
    expect(entries.map((e) => [e.path.slice(root.length) || "/", e.kind])).toEqual([
      ["/", "dir"],
      ["/bad\xff", "file"],
      ["/secret-link", "link"],
      ["/src", "dir"],
      ["/src/host-dir", "link"],
      ["/src/main.ts", "file"],
    ]);
  });

  it("a chown given paths through and at links, as a fooled walk would give them, changes nothing beyond a link", () => {
    const { ws, host } = world("chown");
    const root = bytesOf(ws);
    let outcome = "";
    try {
      chownEntries(ws, [`${root}/secret-link`], ID);
      chownEntries(ws, [`${root}/src/host-dir/secret`], ID);
      outcome = "chowned through the link";
    } catch (e) {
      outcome = `refused: ${(e as NodeJS.ErrnoException).code}`;
    }
    expect(owners(host), "the host's file and directory stay root's").toEqual([0, 0, 0, 0]);
    expect(outcome, "a path through a link is not reached").toMatch(/^refused: (ELOOP|ENOTDIR)$/);
    expect(lstatSync(join(ws, "secret-link")).uid, "the link itself may be the session's").toBe(ID.uid);
  });

  it("a hard link to a file the session does not own is refused, naming it as bytes, and nothing changes hands", () => {
    const { ws, host } = world("hardlink");
    linkSync(join(host, "secret"), raw(`${ws}/src/also\xfe`));
    let code = "";
    try {
      handOver(ws, ID);
    } catch (e) {
      code = isMosaicError(e) ? `${e.code}: ${e.field}` : String(e);
    }
    expect(code).toBe(`handover-hardlink: ${ws}/src/also\\xfe`);
    expect(lstatSync(ws).uid, "nothing was handed over").toBe(0);
    expect(owners(host)).toEqual([0, 0, 0, 0]);
  });
});

describe("the handover never chowns through a name a racer swaps", () => {
  const scratch = makeScratch("handover-race");
  afterAll(() => scratch.remove());

  it("a file swapped for a link to a root file: 1,000 handovers never give the root file away; a chown by path is fooled", async () => {
    const ws = join(scratch.root, "ws");
    const outside = join(scratch.root, "root-file");
    mkdirSync(join(ws, "bin"), { recursive: true });
    writeFileSync(outside, "root's\n");
    const id = { uid: 65534, gid: 65534 };
    const r = await race("file-link", join(ws, "bin"), "s", outside);
    try {
      const t = loop("handover", ws, "-", 1_000, outside);
      expect(t.changed, "the root file beyond the link stays root's").toBe(0);
      expect(t.handed, "the handover did chown the racer's files, so it did race").toBeGreaterThan(0);
      const tries = await untilFooled(() => {
        const s = join(ws, "bin/s");
        try {
          if (lstatSync(s).isFile()) chownSync(s, id.uid, id.gid);
        } catch {}
        return statSync(outside).uid !== 0;
      });
      expect(tries, "a chown by path follows the link swapped in: the race is real").toBeGreaterThan(0);
    } finally {
      await r.stop();
    }
  }, 150_000);
});

describe("the handover of a tree past PATH_MAX", () => {
  const scratch = makeScratch("handover-deep");
  // rm -rf walks by descriptor: a tree past PATH_MAX cannot be removed by path.
  afterAll(() => {
    spawnSync("rm", ["-rf", scratch.root]);
    scratch.remove();
  });

  it("a tree 2,100 levels deep (past PATH_MAX): handing it to the session's uid works before the end-of-session check and after it", () => {
    const ws = join(scratch.root, "ws");
    mkdirSync(ws, { recursive: true });
    makeDeep(ws, 2_100);
    // The handover and the check each in a process of their own, as the launcher runs them.
    const handover = () => loop("handover", ws, "-", 1, ws);
    expect(handover().handed, "the handover copes: it walks to its depth bound, by descriptor").toBeGreaterThan(
      WALK_BOUNDS.depth,
    );
    const run = spawnSync(process.execPath, [CHECK_AS, ws, join(scratch.root, "q")], {
      encoding: "utf8",
      timeout: 110_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as WorkspaceCheck).verdict).toBe("quarantined");
    expect(handover().ran, "the handover after the check").toBe(1);
  }, 120_000);
});
