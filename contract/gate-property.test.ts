import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { WorldDisk, caseArb, checkCase, loadPiPaths } from "../src/conformance/gate/gate-fuzz.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

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
