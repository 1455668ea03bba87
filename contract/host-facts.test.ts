// The host shell's reading of the Claude Code binary: a relative MOSAIC_CLAUDE_BIN (or a relative
// PATH entry) names a file relative to wherever the host runs, so it is never resolved, bound or
// run, not even for a version probe. One resolver decides, and a launch reads the machine once, so
// the binary its preflight probed is the one its sandbox binds. The stand-in `claude` records every
// time it is started.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { findOnPath, readHostFacts, resolveClaudeBinary } from "../src/host/host-facts.ts";
import { readBinaryFacts, readLaunchFacts } from "../src/host/launch-facts.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
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
    expect(readBinaryFacts("claude-code", relClaude), "a relative path is never run").toEqual({
      path: relClaude,
      exists: false,
      executable: false,
      runs: false,
      version: null,
    });
    expect(ran(), "the relative binary did not run").toBe("");
    expect(readBinaryFacts("claude-code", claude)).toEqual({
      path: claude,
      exists: true,
      executable: true,
      runs: true,
      version: "2.1.332 (Claude Code)",
    });
    expect(ran(), "positive control: the probe runs the absolute binary").toContain(`${claude} --version`);
  });

  it("readHostFacts: a relative MOSAIC_CLAUDE_BIN is not resolved against the host's working directory, so nothing binds it", () => {
    const facts = (pin: string) =>
      readHostFacts({
        repo: scratch.root,
        env: { MOSAIC_CLAUDE_BIN: pin, PATH: "" },
        bwrap: join(scratch.root, "no-bwrap"),
      }).claude;
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
    const facts = readLaunchFacts(readHostFacts({ repo: scratch.root, env }), {
      repo: scratch.root,
      runDir,
      bwrap: join(scratch.root, "no-bwrap"),
    });
    expect(facts.binaries["claude-code"], "the relative pin is not probed").toMatchObject({
      exists: false,
      runs: false,
    });
    expect(ran(), "the relative binary did not run").toBe("");
    const c = loadCase("claude-coder");
    const d = decideLaunch(c.instance, c.settings, facts, env);
    expect(
      d.kind === "refuse" && [
        d.code,
        d.message.includes(`MOSAIC_CLAUDE_BIN ${JSON.stringify(relClaude)} is not an absolute path`),
      ],
    ).toEqual(["preflight", true]);
    const pinned = readLaunchFacts(readHostFacts({ repo: scratch.root, env: { ...env, MOSAIC_CLAUDE_BIN: claude } }), {
      repo: scratch.root,
      runDir,
      bwrap: join(scratch.root, "no-bwrap"),
    });
    expect(pinned.binaries["claude-code"].runs, "positive control: the absolute pin is probed").toBe(true);
  });

  it("resolveClaudeBinary: MOSAIC_CLAUDE_BIN when set, else claude from PATH's absolute directories, else none", () => {
    expect(
      resolveClaudeBinary({ MOSAIC_CLAUDE_BIN: claude, PATH: "" }),
      "the pin wins, even with nothing on PATH",
    ).toBe(claude);
    expect(resolveClaudeBinary({ MOSAIC_CLAUDE_BIN: "", PATH: bin }), "an empty pin is unset").toBe(claude);
    expect(
      resolveClaudeBinary({ PATH: `${relBin}:/nonexistent` }),
      "nothing found: no binary, not a guess",
    ).toBeUndefined();
    expect(ran()).toBe("");
  });
});

describe("one rule for the Claude Code binary, and one reading of the machine per launch", () => {
  it("readLaunchFacts judges the host facts it is handed: the binary they resolved, and the sandbox on them", () => {
    const runDir = join(scratch.root, "run");
    const read = readHostFacts({ repo: scratch.root, env: { PATH: "" }, bwrap: join(scratch.root, "no-bwrap") });
    expect(read.claude, "no binary on this reading's PATH").toBeUndefined();
    // Facts this x64 or arm64 machine could not give: were the machine read again, neither would show.
    const handed = { ...read, claude: { path: claude, realPath: claude }, arch: "riscv64" };
    const facts = readLaunchFacts(handed, { repo: scratch.root, runDir, bwrap: join(scratch.root, "no-bwrap") });
    expect(facts.binaries["claude-code"], "the handed binary is the one probed").toEqual({
      path: claude,
      exists: true,
      executable: true,
      runs: true,
      version: "2.1.332 (Claude Code)",
    });
    expect(facts.sandboxProblem, "the probe judged the handed facts").toBe(
      "no seccomp filter is written for riscv64; sessions run on x64 and arm64 only",
    );
    const none = readLaunchFacts(read, { repo: scratch.root, runDir, bwrap: join(scratch.root, "no-bwrap") });
    expect(
      none.binaries["claude-code"],
      "no binary resolved: claude is missing, and the bare name is not probed",
    ).toEqual({ path: "claude", exists: false, executable: false, runs: false, version: null });
  });

  it("src/host reads the host facts in one place, the launcher's prepareLaunch, and passes them down", () => {
    const dir = join(REPO_ROOT, "src/host");
    const calls = readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) =>
        [...readFileSync(join(dir, f), "utf8").matchAll(/(?<!function )\breadHostFacts\(/g)].map(() => f),
      );
    expect(calls).toEqual(["launcher.ts"]);
    expect(
      readLaunchFacts.length,
      "readLaunchFacts takes the host facts and its options, no environment to read them from",
    ).toBe(2);
  });
});
