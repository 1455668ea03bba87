// Which memory files reach the model: a marker planted in every place Claude Code or Pi reads
// memory from, one turn of a session the launcher started, and the markers found in the scripted
// API's request bodies. live/memory.test.ts asserts the polarity pairs with it; baselines:sync and
// live/baselines.test.ts read the flags' facts with it.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { withoutFlags } from "../controls/argv.ts";
import { launchWithArgv } from "../controls/launch.ts";
import { homeSeed, prepareLive, runLiveTurn, withHomeSeed, type Example } from "../worlds/live-session.ts";
import type { RuntimeWorld } from "../worlds/runtime-world.ts";
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

/**
 * Where a session's memory files are planted on the host: its workspace (before the launch is
 * planned, which reads it), the seed of its HOME (copied into the HOME tmpfs before the CLI
 * runs), and Pi's agent dir in the run directory (once start() has made it).
 */
export type MemoryDirs = { ws: string; home: string; piAgentDir: string };
type Where = "ws" | "home" | "run";

/** Every place a session's memory can come from, by a stable name (the names in baselines/), and when it is planted. */
export const MEMORY_LOCATIONS = [
  {
    id: "ws/CLAUDE.md",
    why: "Claude Code's project memory",
    where: "ws",
    path: (d: MemoryDirs) => join(d.ws, "CLAUDE.md"),
  },
  {
    id: "ws/CLAUDE.local.md",
    why: "Claude Code's local project memory",
    where: "ws",
    path: (d: MemoryDirs) => join(d.ws, "CLAUDE.local.md"),
  },
  {
    id: "ws/.claude/CLAUDE.md",
    why: "Claude Code's project memory in .claude/",
    where: "ws",
    path: (d: MemoryDirs) => join(d.ws, ".claude/CLAUDE.md"),
  },
  {
    id: "ws/.claude/rules/",
    why: "Claude Code's project rules",
    where: "ws",
    path: (d: MemoryDirs) => join(d.ws, ".claude/rules/house.md"),
  },
  {
    id: "home/.claude/CLAUDE.md",
    why: "Claude Code's user memory",
    where: "home",
    path: (d: MemoryDirs) => join(d.home, ".claude/CLAUDE.md"),
  },
  {
    id: "home/.claude/rules/",
    why: "Claude Code's user rules",
    where: "home",
    path: (d: MemoryDirs) => join(d.home, ".claude/rules/house.md"),
  },
  {
    id: "home/.claude/projects/<slug>/memory/MEMORY.md",
    why: "Claude Code's auto-memory for the workspace",
    where: "home",
    path: (d: MemoryDirs) => join(d.home, ".claude/projects", claudeProjectSlug(d.ws), "memory/MEMORY.md"),
  },
  {
    id: "ws/AGENTS.md",
    why: "Pi's project context file (Claude Code reads no AGENTS.md)",
    where: "ws",
    path: (d: MemoryDirs) => join(d.ws, "AGENTS.md"),
  },
  {
    id: "pi-agent-dir/AGENTS.md",
    why: "Pi's global context file, in PI_CODING_AGENT_DIR",
    where: "run",
    path: (d: MemoryDirs) => join(d.piAgentDir, "AGENTS.md"),
  },
] as const satisfies ReadonlyArray<{ id: string; why: string; where: Where; path: (d: MemoryDirs) => string }>;

export type MemoryLocation = (typeof MEMORY_LOCATIONS)[number]["id"];

/** Plants a distinct marker in every memory location planted at `where`; returns marker by location. */
export function plantMemory(d: MemoryDirs, tag: string, where: readonly Where[]): Map<MemoryLocation, string> {
  const markers = new Map<MemoryLocation, string>();
  for (const [i, loc] of MEMORY_LOCATIONS.entries()) {
    if (!where.includes(loc.where)) continue;
    const marker = `memory-marker-${tag}-${i}-${process.pid}`;
    const file = loc.path(d);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `# Notes\n\nAlways mention ${marker} in every reply.\n`);
    markers.set(loc.id, marker);
  }
  return markers;
}

/** The locations whose marker appears in any of the request bodies, in MEMORY_LOCATIONS order. */
export function findMarkers(markers: ReadonlyMap<MemoryLocation, string>, bodies: readonly string[]): MemoryLocation[] {
  const order = MEMORY_LOCATIONS.map((l) => l.id as MemoryLocation);
  return [...markers]
    .filter(([, m]) => bodies.some((b) => b.includes(m)))
    .map(([id]) => id)
    .sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

export type Drop = string | readonly [string, string];

/**
 * One turn of a session of the example, launched with the given adapter flags dropped on purpose
 * and every memory location planted: the locations that reached the model. The workspace's
 * markers go in before the launch is planned, HOME's through its seed, Pi's agent dir's once
 * start() has made the run directory.
 */
export async function probeMemory(
  w: RuntimeWorld,
  name: string,
  example: Example,
  drop: readonly Drop[],
): Promise<{ reached: MemoryLocation[]; bodies: number; stderr: string; reply: string | null }> {
  const api = await startScriptedApi({ script: scriptOf([{ text: `turn-finished-${name}` }]) });
  try {
    const instance = w.instance(example, name);
    const seed = homeSeed(w, name);
    const dirs: MemoryDirs = { ws: instance.workspace, home: seed, piAgentDir: "" };
    const markers = plantMemory(dirs, name, ["ws", "home"]);
    let p = prepareLive(w, instance, api.url);
    dirs.piAgentDir =
      p.launch.adapter.env.PI_CODING_AGENT_DIR ?? join(p.session.sessionFile.runDir, "session/pi-agent");
    if (drop.length > 0) p = launchWithArgv(p, (argv) => withoutFlags(argv, drop));
    const t = await runLiveTurn(w, withHomeSeed(p, seed), "say hello", {
      afterStart: () => {
        for (const [k, v] of plantMemory(dirs, name, ["run"])) markers.set(k, v);
      },
    });
    if (t.reply === null || !t.reply.includes(`turn-finished-${name}`))
      throw new Error(`the ${example} turn did not finish: ${t.reply ?? t.why}; stderr: ${t.stderr.slice(0, 600)}`);
    const bodies = api.messageBodies();
    return { reached: findMarkers(markers, bodies), bodies: bodies.length, stderr: t.stderr, reply: t.reply };
  } finally {
    await api.stop();
  }
}
