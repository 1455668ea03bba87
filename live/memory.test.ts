import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { CLAUDE_BIN } from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import {
  MEMORY_LOCATIONS,
  probeMemory,
  type Drop,
  type MemoryLocation,
} from "../src/conformance/baselines/memory-probe.ts";

// Memory files with their polarity pairs. Every place Claude Code or Pi reads memory from gets a
// marker, in the workspace and in the session's HOME (<run>/home), never the workspace's parent,
// which the sandbox hides whatever the flags. A session the launcher started (prepareLaunch(), the
// flags dropped from the adapter's argv on purpose, start()) runs one turn; each arm asserts
// exactly which markers reached the scripted API. The shipped flags keep every one out; each flag removed on purpose lets in what
// it kept out (baselines/README.md: what each flag does, as measured).
const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const hostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap, Claude Code and Pi",
  checkoutProblem(REPO_ROOT) ??
    sandboxProblem(hostFacts) ??
    (existsSync(CLAUDE_BIN) ? null : `${CLAUDE_BIN} missing (npm ci)`) ??
    (existsSync(PI_CLI) ? null : `${PI_CLI} missing (npm ci)`),
);

const CLAUDE_MEMORY: MemoryLocation[] = [
  "ws/CLAUDE.md",
  "ws/CLAUDE.local.md",
  "ws/.claude/CLAUDE.md",
  "ws/.claude/rules/",
  "home/.claude/CLAUDE.md",
  "home/.claude/rules/",
  "home/.claude/projects/<slug>/memory/MEMORY.md",
];
const AUTO_MEMORY: MemoryLocation = "home/.claude/projects/<slug>/memory/MEMORY.md";
const PI_MEMORY: MemoryLocation[] = ["ws/AGENTS.md", "pi-agent-dir/AGENTS.md"];

const ARMS: {
  name: string;
  example: "claude-coder" | "pi-coder";
  drop: Drop[];
  reaches: MemoryLocation[];
  why: string;
}[] = [
  {
    name: "claude-shipped",
    example: "claude-coder",
    drop: [],
    reaches: [],
    why: "Claude Code with the shipped flags: no memory file reaches the model",
  },
  {
    name: "claude-no-restricted",
    example: "claude-coder",
    drop: ["--restricted"],
    reaches: [AUTO_MEMORY],
    why: 'without --restricted, auto-memory reaches the model (--setting-sources "" does not keep it out)',
  },
  {
    name: "claude-no-sources",
    example: "claude-coder",
    drop: [["--setting-sources", ""]],
    reaches: [],
    why: 'without --setting-sources "", --restricted alone still keeps every memory file out',
  },
  {
    name: "claude-neither",
    example: "claude-coder",
    drop: ["--restricted", ["--setting-sources", ""]],
    reaches: CLAUDE_MEMORY,
    why: "without both flags, every Claude Code memory file planted reaches the model",
  },
  {
    name: "pi-shipped",
    example: "pi-coder",
    drop: [],
    reaches: [],
    why: "Pi with the shipped flags: no context file reaches the model",
  },
  {
    name: "pi-no-nc",
    example: "pi-coder",
    drop: ["-nc"],
    reaches: PI_MEMORY,
    why: "without -nc, Pi's AGENTS.md files (workspace and agent dir) reach the model",
  },
];

let w: RuntimeWorld;

beforeAll(async () => {
  w = await makeRuntimeWorld("memory");
});

afterAll(async () => {
  await w?.close();
});

describe("memory files reach the model only with their flag removed on purpose", () => {
  it("every location is planted in the workspace or the session's HOME, none in the workspace's parent", () => {
    expect(MEMORY_LOCATIONS.map((l) => l.id).sort()).toEqual([...CLAUDE_MEMORY, ...PI_MEMORY].sort());
    for (const l of MEMORY_LOCATIONS) expect(l.id, l.why).toMatch(/^(ws|home|pi-agent-dir)\//);
  });
  for (const arm of ARMS) {
    it(`${arm.name}: ${arm.why}`, async () => {
      const r = await probeMemory(w, arm.name, arm.example, arm.drop);
      expect(r.bodies, "the turn reached the scripted API").toBeGreaterThan(0);
      expect(r.reached, `${arm.why}; stderr: ${r.stderr.slice(0, 400)}`).toEqual(arm.reaches);
    }, 90_000);
  }
});
