import { existsSync } from "node:fs";
import { describe, expect } from "vitest";
import { BASELINE_SOURCES, loadBaseline, readBaseline } from "../src/conformance/baselines.ts";
import { liveIt } from "../src/conformance/live-gate.ts";
import { readBwrapVersion } from "../src/host/host-facts.ts";

describe("baselines match the real binaries", () => {
  for (const src of BASELINE_SOURCES) {
    const missing = src.binary === "bwrap" ? (readBwrapVersion("bwrap") === null ? "bwrap is not on PATH" : null) : existsSync(src.command) ? null : `${src.command} is missing (npm ci)`;
    liveIt(`${src.binary} installed`, missing)(`${src.binary}: version and options are the pinned ones`, () => {
      const pinned = loadBaseline(src.binary);
      const real = readBaseline(src);
      const hint = `baselines/${src.binary}.json differs from the installed binary: run npm run baselines:sync and review the diff`;
      expect(real.version, hint).toBe(pinned.version);
      expect(real.options, hint).toEqual(pinned.options);
    });
  }
});
