import { chmodSync, linkSync, lstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { bytesOf } from "../src/core/workspace/bytes.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { chownEntries, handOver, ownedEntries } from "../src/host/handover.ts";

// A root caller's handover through a real tree, as root: a link an earlier session left in the
// workspace hands nothing behind it to the session's uid, neither by the walk going through it
// nor by a chown following it; a name that is not UTF-8 is handed over as any other. Each layer
// is tried alone: the walk's listing, and the chown given a path through a link as if a walk had
// been fooled.
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
