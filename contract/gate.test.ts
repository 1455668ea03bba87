import { afterAll, describe, expect, it } from "vitest";
import { decide, type Decision } from "../src/core/gate/decide.ts";
import type { GatePolicy } from "../src/core/gate/policy-shape.ts";
import { realFsView } from "../src/host/fs-view.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { GATE_SCENES, renderTree, visible } from "./support/gate-scenes.ts";
import { layOutTree, memoryView } from "../src/conformance/worlds/tree.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("gate-goldens");
afterAll(() => scratch.remove());

const line = (tool: unknown, input: unknown, d: Decision) =>
  `${typeof tool === "string" && /^[A-Za-z_]\w*$/.test(tool) ? tool : visible(JSON.stringify(tool))} ${visible(JSON.stringify(input) ?? "undefined")} → ${d.allow ? "allow" : `block: ${visible(d.reason)}`}`;

const rooted = (p: GatePolicy, root: string): GatePolicy => ({
  ...p,
  workspace: root + p.workspace,
  home: root + p.home,
});

describe("gate decision goldens", () => {
  it("the tables hold at least 150 calls, both outcomes well represented, each with a why", () => {
    const all = GATE_SCENES.flatMap((s) => s.cases);
    expect(all.length).toBeGreaterThanOrEqual(150);
    expect(all.filter((c) => c.want === "allow").length).toBeGreaterThan(40);
    expect(all.filter((c) => c.want === "block").length).toBeGreaterThan(40);
    expect(
      all.every((c) => c.why.length > 0),
      "every case says why",
    ).toBe(true);
  });

  for (const scene of GATE_SCENES) {
    it(scene.name, async () => {
      const fs = memoryView(scene.tree);
      const lines: string[] = [];
      const wrong: string[] = [];
      for (const k of scene.cases) {
        const d = decide(scene.policy, k.tool, k.input, fs);
        lines.push(line(k.tool, k.input, d));
        // The invariant beside the golden: each call's decision is the one the table's author wrote down.
        if ((d.allow ? "allow" : "block") !== k.want)
          wrong.push(`${line(k.tool, k.input, d)}  (wanted ${k.want}: ${k.why})`);
        if (!d.allow) expect(d.reason.length, "a block always says why").toBeGreaterThan(0);
      }
      expect(wrong).toEqual([]);
      await matchGolden(
        "gate",
        scene.name,
        "txt",
        `gate decisions: ${scene.what}; one call per line: tool input → decision`,
        [...renderTree(scene.tree), ...lines].join("\n"),
      );
    });
  }
});

describe("gate decisions: in-memory tree against the same tree on disk", () => {
  for (const scene of GATE_SCENES) {
    it(scene.name, () => {
      const root = `${scratch.root}/${scene.name}`;
      layOutTree(scene.tree, root);
      const mem = memoryView(scene.tree, root);
      const real = realFsView();
      const policy = rooted(scene.policy, root);
      for (const k of scene.cases) {
        expect(
          decide(policy, k.tool, k.input, real),
          line(k.tool, k.input, decide(policy, k.tool, k.input, mem)),
        ).toEqual(decide(policy, k.tool, k.input, mem));
      }
    });
  }
});
