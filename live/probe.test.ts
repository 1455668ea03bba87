import { describe, expect } from "vitest";
import { readBwrapVersion, readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";

const it = liveIt(
  "bwrap installed",
  readBwrapVersion("bwrap") === null ? "bwrap is not on PATH (apt-get install bubblewrap)" : null,
);

describe("the sandbox probe on this machine", () => {
  it("sandboxProblem() is null: bwrap builds the namespaces and system binds here", () => {
    const facts = readHostFacts({ repo: REPO_ROOT });
    expect(facts.bwrapVersion).toMatch(/^bubblewrap \d+\.\d+/);
    expect(sandboxProblem(facts)).toBeNull();
  });
});
