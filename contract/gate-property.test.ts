import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { realpathSync } from "node:fs";
import { decide } from "../src/core/gate/decide.ts";
import { realFsView } from "../src/host/fs-view.ts";
import {
  GLOB_TAILS,
  WorldDisk,
  caseArb,
  checkCase,
  globEscape,
  loadPiPaths,
  policyOf,
  rootCall,
} from "../src/conformance/gate/gate-fuzz.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { layOutTree } from "../src/conformance/worlds/tree.ts";

// Fixed seed, so the contract tier is repeatable; `npm run fuzz:gate -- <count>` runs fresh seeds.
const SEED = 20261202;
const RUNS = 150;

const scratch = makeScratch("gate-property");
afterAll(() => scratch.remove());

describe("gate properties (fixed seed)", () => {
  it("memory and disk decide alike, and nothing allowed resolves outside or through a dangling link by the kernel", async () => {
    const pi = await loadPiPaths();
    let cases = 0;
    let allowed = 0;
    let n = 0;
    const disk = new WorldDisk(scratch.root);
    fc.assert(
      fc.property(caseArb({ min: 12, max: 18 }), (c) => {
        const r = checkCase(c, disk, pi);
        n++;
        cases += c.calls.length;
        allowed += r.allowed;
        expect(r.failure).toBeNull();
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Enough cases, and both outcomes well represented, or the property proves little.
    expect(cases).toBeGreaterThanOrEqual(2000);
    expect(n).toBe(RUNS);
    console.log(`gate property: ${cases} cases, ${allowed} allowed`);
    expect(allowed / cases, `${allowed} of ${cases} allowed`).toBeGreaterThan(0.2);
    expect(allowed / cases, `${allowed} of ${cases} allowed`).toBeLessThan(0.8);
  });
});

describe("the glob oracle (positive control)", () => {
  // Each tail the pattern rules refuse, as node's fs.glob expands it in a world with files outside:
  // those marked escape do list a path outside, so the property above would see one the gate let
  // through; the near misses list only paths inside. A tail no glob here expands outside is
  // refused by the rules all the same (fail closed).
  const ESCAPES = [
    "{<root>/out,sub}/*",
    "{<root>/data/other,a}/*",
    "{x,\\.\\./\\.\\.}/*",
    "{x,../..}/*",
    "{x,[.][.]/[.][.]}/*",
    "\\.\\./*",
    "\\.\\./\\.\\./*",
    "[.][.]/*",
    "{.,}{.,}/*",
    ".{,x}./*",
    "{..,x}/*",
    "\\*",
    "sub\\..\\..\\*",
    "<root>\\out\\*",
  ];
  const FAIL_CLOSED = ["*/..", "@(<root>/out|sub)/*", "{~,sub}/*"];
  const ALLOWED = ["*", "**/*.txt", "{a,sub}/*", "*.{txt,png}", "[.]*", ".[!.]*", "@(a|sub)/*", "{.,x}y/*"];
  it("every tail is one of the three kinds", () => {
    expect([...ESCAPES, ...FAIL_CLOSED, ...ALLOWED].sort()).toEqual([...GLOB_TAILS].sort());
  });
  it("node's fs.glob lists a path outside for each refused tail that escapes, the gate refuses every refused tail, and allows the near misses", () => {
    const root = `${scratch.root}/oracle`;
    const world = {
      layout: 0,
      tree: {
        "/data/ws/sub/in.txt": "file",
        "/data/ws/a/in.txt": "file",
        "/data/ws/.dot": "file",
        "/data/other/secret.txt": "file",
        "/out/marker.txt": "file",
        "/home/s": "dir",
      },
      workspace: "/data/ws",
      home: "/home/s",
    } as const;
    layOutTree(world.tree, root);
    const policy = policyOf(world, root);
    const ws = realpathSync(policy.workspace);
    const decideTail = (tail: string) => {
      const call = rootCall({ tool: "Glob", input: { pattern: tail } }, root);
      return { pattern: call.input.pattern as string, d: decide(policy, call.tool, call.input, realFsView()) };
    };
    for (const tail of ESCAPES) {
      const { pattern, d } = decideTail(tail);
      expect(globEscape(pattern, ws, [ws]), `${tail}: node's fs.glob lists a path outside`).not.toBeNull();
      expect(d.allow, `${tail}: the gate refuses it`).toBe(false);
    }
    for (const tail of FAIL_CLOSED) {
      const { pattern, d } = decideTail(tail);
      expect(globEscape(pattern, ws, [ws]), `${tail}: nothing outside here`).toBeNull();
      expect(d.allow, `${tail}: refused all the same`).toBe(false);
    }
    for (const tail of ALLOWED) {
      const { pattern, d } = decideTail(tail);
      expect(globEscape(pattern, ws, [ws]), `${tail}: only paths inside`).toBeNull();
      expect(d, `${tail}: allowed`).toEqual({ allow: true });
    }
  });
});
