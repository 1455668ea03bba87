// The host shell's reading of the Claude Code binary: a relative MOSAIC_CLAUDE_BIN (or a relative
// PATH entry) names a file relative to wherever the host runs, so it is never resolved, bound or
// run, not even for a version probe. The stand-in `claude` records every time it is started.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { findOnPath, readHostFacts } from "../src/host/host-facts.ts";
import { readBinaryFacts, readLaunchFacts } from "../src/host/launch-facts.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { loadCase } from "./support/launch-cases.ts";

const scratch = makeScratch("host-facts");
afterAll(() => scratch.remove());
const bin = join(scratch.root, "bin");
const claude = join(bin, "claude");
const marker = join(scratch.root, "claude-ran");
mkdirSync(bin);
writeFileSync(claude, `#!/bin/sh\necho "$0 $*" >> '${marker}'\necho "2.1.332 (Claude Code)"\n`);
chmodSync(claude, 0o755);
// The same file named from the tests' working directory, as a relative pin would name it.
const relClaude = relative(process.cwd(), claude);
const relBin = relative(process.cwd(), bin);
const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");
beforeEach(() => rmSync(marker, { force: true }));

describe("a relative Claude Code binary is never run on the host", () => {
  it("the stand-in is reachable by its relative name from here (the attack's precondition)", () => {
    expect(relClaude.startsWith("/")).toBe(false);
    expect(existsSync(relClaude)).toBe(true);
  });

  it("readBinaryFacts: a relative path is not statted or probed; the absolute one runs (positive control)", () => {
    expect(readBinaryFacts("claude-code", relClaude), "a relative path is never run").toEqual({ path: relClaude, exists: false, executable: false, runs: false, version: null });
    expect(ran(), "the relative binary did not run").toBe("");
    expect(readBinaryFacts("claude-code", claude)).toEqual({ path: claude, exists: true, executable: true, runs: true, version: "2.1.332 (Claude Code)" });
    expect(ran(), "positive control: the probe runs the absolute binary").toContain(`${claude} --version`);
  });

  it("readHostFacts: a relative MOSAIC_CLAUDE_BIN is not resolved against the host's working directory, so nothing binds it", () => {
    const facts = (pin: string) => readHostFacts({ repo: scratch.root, env: { MOSAIC_CLAUDE_BIN: pin, PATH: "" }, bwrap: join(scratch.root, "no-bwrap") }).claude;
    expect(facts(relClaude), "a relative pin names no binary on the host").toBeUndefined();
    expect(facts(claude), "positive control: the absolute pin").toEqual({ path: claude, realPath: claude });
    expect(ran()).toBe("");
  });

  it("findOnPath searches absolute PATH directories only", () => {
    expect(findOnPath("claude", relBin), "a relative PATH entry is not searched").toBeUndefined();
    expect(findOnPath("claude", `.:${relBin}::${bin}`), "positive control: the absolute entry").toBe(claude);
  });

  it("readLaunchFacts with a relative pin: nothing runs, and the launch is refused by the preflight", () => {
    const runDir = join(scratch.root, "run");
    const env = { MOSAIC_CLAUDE_BIN: relClaude, PATH: bin, ANTHROPIC_API_KEY: "stand-in" };
    const facts = readLaunchFacts({ repo: scratch.root, runDir, env, bwrap: join(scratch.root, "no-bwrap") });
    expect(facts.binaries["claude-code"], "the relative pin is not probed").toMatchObject({ path: relClaude, exists: false, runs: false });
    expect(ran(), "the relative binary did not run").toBe("");
    const c = loadCase("claude-coder");
    const d = decideLaunch(c.instance, c.settings, facts, env);
    expect(d.kind === "refuse" && [d.code, d.message.includes(`MOSAIC_CLAUDE_BIN ${JSON.stringify(relClaude)} is not an absolute path`)]).toEqual(["preflight", true]);
    const pinned = readLaunchFacts({ repo: scratch.root, runDir, env: { ...env, MOSAIC_CLAUDE_BIN: claude }, bwrap: join(scratch.root, "no-bwrap") });
    expect(pinned.binaries["claude-code"].runs, "positive control: the absolute pin is probed").toBe(true);
  });
});
