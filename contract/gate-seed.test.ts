import { describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import {
  SEED_CASES,
  SEED_POLICY,
  SEED_TREE,
  SEED_TWIN_CASES,
  SEED_TWIN_TREE,
  type SeedCase,
} from "./oracles/gate-seed.ts";

// The oracle's decisions are hand-written from the seed; only allow/block is compared (the
// reason's wording is the goldens' business), and every block must say why.
function check(k: SeedCase, tree: typeof SEED_TREE, policy: typeof SEED_POLICY): void {
  const d = decide(policy, k.tool, k.input, memoryView(tree));
  expect(
    d.allow ? "allow" : "block",
    `${k.tool} ${JSON.stringify(k.input)}${d.allow ? "" : ` (${d.reason})`}: the seed says "${k.says}"`,
  ).toBe(k.want);
  if (!d.allow) expect(d.reason, "a block says why").not.toBe("");
}

describe("seed 000, The gate", () => {
  it("every sentence that states a case has an allowed and a blocked example", () => {
    const bySentence = new Map<string, Set<string>>();
    for (const k of SEED_CASES) bySentence.set(k.says, (bySentence.get(k.says) ?? new Set()).add(k.want));
    const oneSided = [...bySentence].filter(([, wants]) => wants.size < 2).map(([s]) => s);
    // Two sentences only allow: a missing spelling is ignored, and write/edit/ls take the name as given.
    expect(oneSided.sort()).toEqual(
      [
        SEED_CASES.find((k) => k.id === "no spelling exists")!.says,
        SEED_CASES.find((k) => k.id === "write takes the name as given")!.says,
        SEED_CASES.find((k) => k.id === "bash passes on its name")!.says,
      ].sort(),
    );
  });
  for (const k of SEED_CASES) it(k.id, () => check(k, SEED_TREE, SEED_POLICY));
});

describe("seed 000, Limits", () => {
  const policy = { ...SEED_POLICY, workspace: "/data/jo's/ws" };
  for (const k of SEED_TWIN_CASES) it(k.id, () => check(k, SEED_TWIN_TREE, policy));
});
