// The probe's diagnosis on a real host fault: a setuid root copy of this host's bwrap. The real
// probe must refuse naming the setuid cause and its fix; the same copy without the setuid bit, the
// only difference, passes (the positive control that the bit, and nothing else, is the cause).
import { chmodSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { DIAGNOSES } from "../src/core/sandbox/diagnose.ts";
import { findOnPath, readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

const facts = readHostFacts({ repo: REPO_ROOT });
const hostBwrap = findOnPath("bwrap", process.env.PATH ?? "");
const it = liveIt(
  "bwrap, as root",
  checkoutProblem(REPO_ROOT) ??
    sandboxProblem(facts) ??
    (hostBwrap === undefined ? "no bwrap on PATH" : null) ??
    (facts.uid !== 0 ? "only root can make a setuid root copy of bwrap" : null),
);

const scratch = makeScratch("probe-diagnosis");
afterAll(() => scratch.remove());

describe("the probe names a setuid bwrap's cause and fix", () => {
  it("a setuid root copy is refused naming the setuid cause; the same copy without the bit passes", () => {
    const copy = join(scratch.root, "bwrap");
    copyFileSync(hostBwrap!, copy);
    const row = DIAGNOSES.find((r) => r.id === "setuid-bwrap")!;
    chmodSync(copy, 0o4755);
    const refused = sandboxProblem(facts, { bwrap: copy });
    expect(refused, "the setuid copy is refused").not.toBeNull();
    expect(refused!.startsWith(`${row.cause}: ${row.fix} (bwrap cannot apply `), refused!).toBe(true);
    chmodSync(copy, 0o755);
    expect(sandboxProblem(facts, { bwrap: copy }), "control: the bit lifted, the same binary passes").toBeNull();
  });
});
