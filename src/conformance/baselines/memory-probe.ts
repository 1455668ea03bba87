// Which memory files reach the model: a marker planted in every place Claude Code or Pi reads
// memory from, one planned session turn, and the markers found in the scripted API's request
// bodies. live/memory.test.ts asserts the polarity pairs with it; baselines:sync and
// live/baselines.test.ts read the flags' facts with it.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostFacts } from "../../core/sandbox/types.ts";
import { planWithoutFlags } from "../controls/launch.ts";
import {
  planLiveSession,
  runLiveTurn,
  startSessionSetup,
  type LiveSession,
  type SessionSetup,
} from "../worlds/live-session.ts";
import { startScriptedApi } from "../stand-ins/scripted-api.ts";
import { scriptOf } from "../stand-ins/model-script/format.ts";

/**
 * Claude Code's project slug for a working directory: every character but a letter or digit
 * becomes "-" (read off 2.1.332: a MEMORY.md under this slug reaches the model without
 * --restricted). Inside the sandbox the workspace is in no git repository, so the slug is the
 * workspace's own.
 */
export function claudeProjectSlug(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, "-");
}

/** Every place a session's memory can come from, by a stable name (the names in baselines/). */
export const MEMORY_LOCATIONS = [
  { id: "ws/CLAUDE.md", why: "Claude Code's project memory", path: (s: LiveSession) => join(s.ws, "CLAUDE.md") },
  {
    id: "ws/CLAUDE.local.md",
    why: "Claude Code's local project memory",
    path: (s: LiveSession) => join(s.ws, "CLAUDE.local.md"),
  },
  {
    id: "ws/.claude/CLAUDE.md",
    why: "Claude Code's project memory in .claude/",
    path: (s: LiveSession) => join(s.ws, ".claude/CLAUDE.md"),
  },
  {
    id: "ws/.claude/rules/",
    why: "Claude Code's project rules",
    path: (s: LiveSession) => join(s.ws, ".claude/rules/house.md"),
  },
  {
    id: "home/.claude/CLAUDE.md",
    why: "Claude Code's user memory",
    path: (s: LiveSession) => join(s.home, ".claude/CLAUDE.md"),
  },
  {
    id: "home/.claude/rules/",
    why: "Claude Code's user rules",
    path: (s: LiveSession) => join(s.home, ".claude/rules/house.md"),
  },
  {
    id: "home/.claude/projects/<slug>/memory/MEMORY.md",
    why: "Claude Code's auto-memory for the workspace",
    path: (s: LiveSession) => join(s.home, ".claude/projects", claudeProjectSlug(s.ws), "memory/MEMORY.md"),
  },
  {
    id: "ws/AGENTS.md",
    why: "Pi's project context file (Claude Code reads no AGENTS.md)",
    path: (s: LiveSession) => join(s.ws, "AGENTS.md"),
  },
  {
    id: "pi-agent-dir/AGENTS.md",
    why: "Pi's global context file, in PI_CODING_AGENT_DIR",
    path: (s: LiveSession) =>
      join(s.plan.adapter.env.PI_CODING_AGENT_DIR ?? join(s.run, "session/pi-agent"), "AGENTS.md"),
  },
] as const;

export type MemoryLocation = (typeof MEMORY_LOCATIONS)[number]["id"];

/** Plants a distinct marker in every memory location of the session; returns marker by location. */
export function plantMemory(s: LiveSession, tag: string): Map<MemoryLocation, string> {
  const markers = new Map<MemoryLocation, string>();
  for (const [i, loc] of MEMORY_LOCATIONS.entries()) {
    const marker = `memory-marker-${tag}-${i}-${process.pid}`;
    const file = loc.path(s);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `# Notes\n\nAlways mention ${marker} in every reply.\n`);
    markers.set(loc.id, marker);
  }
  return markers;
}

/** The locations whose marker appears in any of the request bodies, in MEMORY_LOCATIONS order. */
export function findMarkers(markers: ReadonlyMap<MemoryLocation, string>, bodies: readonly string[]): MemoryLocation[] {
  return [...markers].filter(([, m]) => bodies.some((b) => b.includes(m))).map(([id]) => id);
}

export type Drop = string | readonly [string, string];

/**
 * One turn of a planned session of the example with the given adapter flags dropped on purpose,
 * every memory location planted: the locations that reached the model.
 */
export async function probeMemory(
  setup: SessionSetup,
  name: string,
  example: "claude-coder" | "pi-coder",
  drop: readonly Drop[],
): Promise<{ reached: MemoryLocation[]; bodies: number; stderr: string; status: number | null }> {
  const api = await startScriptedApi({ script: scriptOf([{ text: `turn-finished-${name}` }]) });
  const url = api.url;
  try {
    const s = planLiveSession(setup, name, url, example);
    const markers = plantMemory(s, name);
    const plan = drop.length > 0 ? planWithoutFlags(s.plan, drop) : s.plan;
    const r = await runLiveTurn({ ...s, plan }, "say hello");
    if (!r.stdout.includes(`turn-finished-${name}`))
      throw new Error(`the ${example} turn did not finish (exit ${r.status}): ${r.stderr.slice(0, 600)}`);
    const bodies = api.messageBodies();
    return { reached: findMarkers(markers, bodies), bodies: bodies.length, stderr: r.stderr, status: r.status };
  } finally {
    await api.stop();
  }
}

/** fn with a fresh session setup, closed after it (baselines:sync). */
export async function withSessionSetup<T>(
  label: string,
  hostFacts: HostFacts,
  fn: (setup: SessionSetup) => Promise<T>,
): Promise<T> {
  const { setup, close } = await startSessionSetup(label, hostFacts);
  try {
    return await fn(setup);
  } finally {
    await close();
  }
}
