import { execFileSync } from "node:child_process";
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { TOP_LINKS, type HostFacts, type TopEntry } from "../core/sandbox/types.ts";
import { sessionIdentity, sessionUidRange } from "../core/sandbox/identity.ts";
import { uidLocksDir } from "../core/session/host-plan.ts";
import { heldUids } from "./workspace-lock.ts";
import { findSessionCgroupBases } from "./session-cgroups.ts";
import { runnerNodePath } from "./runner-node.ts";

/** The host's own state (the runner's execute-only node): MOSAIC_STATE_DIR, else under the checkout's ignored .scratch/. */
export function stateDirOf(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.MOSAIC_STATE_DIR || join(repo, ".scratch", "state");
}

/**
 * Reads the facts the sandbox decisions need from this machine. No decision is made here. A launch
 * reads them once and hands them to readLaunchFacts(), so the binary it probes and the one it binds
 * are the same.
 */
export function readHostFacts(opts: {
  repo: string;
  env?: NodeJS.ProcessEnv;
  bwrap?: string;
  stateDir?: string;
}): HostFacts {
  const env = opts.env ?? process.env;
  const uid = process.getuid?.() ?? -1;
  const stateDir = opts.stateDir ?? stateDirOf(opts.repo, env);
  const top = Object.fromEntries(TOP_LINKS.map((p) => [p, readTop(p)])) as HostFacts["top"];
  const claudePath = resolveClaudeBinary(env);
  return {
    top,
    node: { path: process.execPath, realPath: realpathSync(process.execPath) },
    claude: claudePath ? { path: claudePath, realPath: safeRealpath(claudePath) } : undefined,
    nodeModulesRealPath: safeRealpath(join(opts.repo, "node_modules")),
    home: env.HOME ?? homedir(),
    bwrapVersion: readBwrapVersion(opts.bwrap ?? "bwrap"),
    arch: process.arch,
    runnerNode: runnerNodePath(stateDir, process.execPath, process.versions.node),
    cgroups: uid === 0 ? findSessionCgroupBases() : { pids: null, memory: null },
    uid,
    session: sessionIdentity({ uid, gid: process.getgid?.() ?? -1 }, env),
    sessionUids: sessionUidRange({ uid }, env),
    heldSessionUids: heldUids(uidLocksDir(stateDir)),
  };
}

/**
 * The Claude Code binary a launch probes, binds and runs: MOSAIC_CLAUDE_BIN when set, else claude
 * from PATH's absolute directories, else undefined. A relative pin names nothing here: it is not
 * resolved against the host's working directory, bound or run, and the preflight refuses it.
 */
export function resolveClaudeBinary(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const pinned = env.MOSAIC_CLAUDE_BIN ?? "";
  if (pinned === "") return findOnPath("claude", env.PATH ?? "");
  return pinned.startsWith("/") ? pinned : undefined; // safety: host-facts-relative-claude
}

function readTop(p: string): TopEntry {
  try {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return { kind: "symlink", target: readlinkSync(p) };
    if (st.isDirectory()) return { kind: "dir" }; // safety: host-facts-split-usr
    return { kind: "absent" };
  } catch {
    return { kind: "absent" };
  }
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The first regular file called name in an absolute PATH directory; relative entries are never searched. */
export function findOnPath(name: string, path: string): string | undefined {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue; // safety: path-relative-dir-searched
    try {
      if (statSync(join(dir, name)).isFile()) return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export function readBwrapVersion(bwrap: string): string | null {
  try {
    return execFileSync(bwrap, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}
