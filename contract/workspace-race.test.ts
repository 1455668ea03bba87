import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { loop, race, untilFooled, watchLoop } from "../src/conformance/worlds/racer.ts";

// Another process of the session's uid may still write the workspace while the host acts on it:
// the workspace is that uid's. Each test races the shipped code thousands of times against a
// process swapping a name the host acts on for a link out of the workspace (or a fifo), and shows
// the outside never changes; its positive control does the same act by path, as the code once
// did, and is fooled, which proves the race is real and the window reachable. The handover's race
// needs root and runs in the live tier (live/handover.test.ts).
describe("the end-of-session check never acts through a name a racer swaps", () => {
  const scratch = makeScratch("ws-race");
  afterAll(() => scratch.remove());

  function world(label: string): { ws: string; outside: string } {
    const ws = join(scratch.root, label, "ws");
    const outside = join(scratch.root, label, "founder-secret");
    mkdirSync(join(ws, "bin"), { recursive: true });
    writeFileSync(outside, "the founder's\n");
    chmodSync(outside, 0o600);
    return { ws, outside };
  }

  it("a setuid file swapped for a link to the founder's file: 3,000 checks clear setuid bits and never change the file beyond the link; a chmod by path is fooled", async () => {
    const { ws, outside } = world("chmod");
    const r = await race("file-link", join(ws, "bin"), "s", outside);
    try {
      const t = loop("check", ws, join(scratch.root, "chmod/q"), 3_000, outside);
      expect(t.changed, "the founder's file beyond the link never changed mode").toBe(0);
      expect(t.cleared, "the check did clear the racer's setuid files, so it did race").toBeGreaterThan(0);
      // Positive control: lstat, then chmod by path, as the check did before.
      const tries = await untilFooled(() => {
        const s = join(ws, "bin/s");
        try {
          const st = lstatSync(s);
          if (st.isFile() && (st.mode & 0o6000) !== 0) chmodSync(s, st.mode & 0o7777 & ~0o6000);
        } catch {}
        return (statSync(outside).mode & 0o7777) !== 0o600;
      });
      expect(tries, "a chmod by path follows the link swapped in: the race is real").toBeGreaterThan(0);
    } finally {
      await r.stop();
    }
  }, 150_000);

  it("a directory holding a nested .git swapped for a link to the founder's repository: 3,000 checks never move the founder's .git; a rename by path is fooled", async () => {
    const { ws } = world("move");
    const founder = join(scratch.root, "move/founder-repo");
    mkdirSync(join(founder, ".git/refs"), { recursive: true });
    writeFileSync(join(founder, ".git/HEAD"), "ref: refs/heads/main\n");
    const r = await race("dir-link", ws, "sub", founder);
    try {
      const t = loop("check", ws, join(scratch.root, "move/q"), 3_000, join(founder, ".git/HEAD"));
      expect(t.changed, "the founder's .git beyond the link never left").toBe(0);
      expect(t.moved, "the check did move the racer's nested .git, so it did race").toBeGreaterThan(0);
      const tries = await untilFooled(() => {
        try {
          if (lstatSync(join(ws, "sub/.git")).isDirectory())
            renameSync(join(ws, "sub/.git"), join(scratch.root, "move/by-path"));
        } catch {}
        const fooled = lstatSync(join(founder, ".git/HEAD"), { throwIfNoEntry: false }) === undefined;
        rmSync(join(scratch.root, "move/by-path"), { recursive: true, force: true });
        return fooled;
      });
      expect(tries, "a rename by path goes through the link swapped in: the race is real").toBeGreaterThan(0);
    } finally {
      await r.stop();
    }
  }, 150_000);

  it("a HEAD git accepts swapped for a fifo: 2,000 checks finish; a plain open of what lstat called a file hangs", async () => {
    const { ws } = world("fifo");
    mkdirSync(join(ws, "sub/objects"), { recursive: true });
    mkdirSync(join(ws, "sub/refs"), { recursive: true });
    const stash = join(scratch.root, "fifo/stash");
    mkdirSync(stash);
    const r = await race("fifo-file", join(ws, "sub"), "HEAD", stash);
    try {
      const check = await watchLoop(["check", ws, join(scratch.root, "fifo/q"), "2000"], 100_000);
      expect(check.inFifoOpen, "no check ever sleeps in the fifo's open").toBe(false);
      expect(check.status, `the check ran to its end: ${check.stderr}`).toBe(0);
      expect(JSON.parse(check.stdout).ran, "all 2,000 checks ran").toBe(2_000);
      // Positive control: the same race against a plain open of what lstat called a file.
      const control = await watchLoop(["blocking-open", ws, join(ws, "sub/HEAD"), "1000000"], 100_000);
      expect(control.inFifoOpen, "a blocking open of the same name sleeps in the fifo's open: the race is real").toBe(
        true,
      );
    } finally {
      await r.stop();
    }
  }, 150_000);
});
