import { existsSync } from "node:fs";
import { describe, expect } from "vitest";
import { CLAUDE_EXE, loadEnvNamesBaseline, readEnvNames } from "../src/conformance/baselines/claude-env-names.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";

const it = liveIt("Claude Code installed", existsSync(CLAUDE_EXE) ? null : `${CLAUDE_EXE} is missing (npm ci)`);

describe("the ANTHROPIC_*/CLAUDE_* names pinned for the session-env test", () => {
  it("are the ones the installed Claude Code binary holds", () => {
    const real = readEnvNames(CLAUDE_EXE);
    const hint =
      "baselines/claude-code-env.json differs from the installed binary: run node scripts/claude-env-names.ts and review the diff";
    expect(real, hint).toEqual(loadEnvNamesBaseline().names);
    // Positive control for the reader: names the adapter itself sets are among them.
    expect(real).toEqual(
      expect.arrayContaining(["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]),
    );
  });
});
