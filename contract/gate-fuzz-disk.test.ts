// The fuzz's reused world disk: each world on it is exactly the tree a fresh layout would give,
// one after another on the same skeletons, and a leftover entry is caught, not decided over.
import { lstatSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { WorldDisk, worldArb } from "../src/conformance/gate/gate-fuzz.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { layOutTree } from "../src/conformance/worlds/tree.ts";

const scratch = makeScratch("world-disk");
afterAll(() => scratch.remove());

/** Every name under dir with what it is (a link with its target), root-relative, sorted. */
function listing(dir: string, root = dir): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      const st = lstatSync(p);
      const rel = p.slice(root.length);
      if (st.isSymbolicLink()) return [`${rel} -> ${readlinkSync(p).split(root).join("<root>")}`];
      if (st.isDirectory()) return [`${rel}/`, ...listing(p, root)];
      return [rel];
    });
}

describe("the fuzz's world disk", () => {
  it("lays out each world exactly as a fresh layout would, world after world on the same skeletons", () => {
    const disk = new WorldDisk(join(scratch.root, "reused"));
    const worlds = fc.sample(worldArb, { seed: 7, numRuns: 60 });
    expect(new Set(worlds.map((w) => w.layout)).size, "every layout is reused").toBe(3);
    for (const [i, w] of worlds.entries()) {
      const fresh = join(scratch.root, "fresh", String(i));
      layOutTree(w.tree, fresh);
      const { root, clear } = disk.place(w);
      try {
        expect(listing(root), `world ${i}`).toEqual(listing(fresh));
      } finally {
        clear();
      }
    }
  });
  it("a leftover entry in a directory the world touched fails the clear (positive control)", () => {
    const disk = new WorldDisk(join(scratch.root, "leftover"));
    const w = {
      layout: 0,
      tree: { "/data/ws/sub": "dir", "/data/other": "dir", "/out": "dir", "/home/s": "dir", "/data/ws/a": "file" },
      workspace: "/data/ws",
      home: "/home/s",
    } as const;
    const { root, clear } = disk.place(w);
    writeFileSync(join(root, "data/ws/stray"), "x");
    expect(() => clear()).toThrow(/still holds stray/);
  });
});
