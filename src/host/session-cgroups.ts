import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CgroupController, CgroupPlan } from "../core/sandbox/cgroups.ts";
import type { CgroupBase, SessionCgroupBases } from "../core/sandbox/types.ts";
import { isAlive } from "./session-procs.ts";

type Mount = { dir: string; type: string; options: string[] };

/**
 * Where a root host can make session cgroups, per controller: cgroup v1's hierarchy for it, or a
 * cgroup v2 hierarchy that offers it; null where none is writable. Sessions live under
 * `<hierarchy>/mosaic-sessions`.
 */
export function findSessionCgroupBases(mounts = readMounts()): SessionCgroupBases {
  return { pids: findBase("pids", mounts), memory: findBase("memory", mounts) };
}

function findBase(controller: CgroupController, mounts: Mount[]): CgroupBase | null {
  for (const m of mounts) {
    const version =
      m.type === "cgroup" && m.options.includes(controller)
        ? 1
        : m.type === "cgroup2" && controllers(m.dir).includes(controller)
          ? 2
          : null;
    if (version === null) continue;
    try {
      accessSync(m.dir, constants.W_OK);
      return { dir: join(m.dir, "mosaic-sessions"), version };
    } catch {
      // not ours to write
    }
  }
  return null;
}

function readMounts(): Mount[] {
  try {
    return readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [, dir, type, opts] = l.split(" ");
        return { dir: dir!, type: type!, options: (opts ?? "").split(",") };
      });
  } catch {
    return [];
  }
}

function controllers(dir: string): string[] {
  try {
    return readFileSync(join(dir, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  } catch {
    return [];
  }
}

/**
 * Carries out a cgroup plan (planCgroups): makes each directory and writes its settings. Returns
 * the directories; on any failure removes what it made and throws, naming the file.
 */
export function makeSessionCgroups(plan: CgroupPlan): string[] {
  const made: string[] = [];
  try {
    for (const d of plan.dirs) {
      mkdirSync(d.base, { recursive: true });
      // cgroup v2 only: let the sessions' cgroups use the controllers.
      if (d.version === 2) for (const c of d.controllers) tryWrite(join(d.base, "cgroup.subtree_control"), `+${c}`);
      mkdirSync(d.dir);
      made.push(d.dir);
      for (const s of d.settings) {
        const file = join(d.dir, s.file);
        if (s.optional === true && !existsSync(file)) continue;
        writeFileSync(file, String(s.value));
      }
    }
    return made;
  } catch (e) {
    for (const d of made) removeSessionCgroup(d);
    throw e;
  }
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // already on, or not allowed: the settings below then fail and name the file
  }
}

/** Removes a session's cgroup once it holds no process; true when it is gone. */
export function removeSessionCgroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/**
 * Removes every directory, waiting up to five seconds for the kernel to let go of a dead session's
 * tasks: on a loaded host a killed task can take more than a second to leave its cgroup.
 */
export async function removeSessionCgroups(dirs: readonly string[]): Promise<void> {
  for (const d of dirs)
    for (let i = 0; i < 250 && !removeSessionCgroup(d); i++) await new Promise((r) => setTimeout(r, 20));
}

/**
 * SIGKILL to every process the session's cgroups list, until they list none or two seconds pass:
 * a process forked while the launch killed its sandbox's children is no child the kill named, and
 * only its cgroup still knows it. Only a session's sandbox joins these cgroups; never pid 1 or the
 * host itself. A dir that cannot be read (gone, or never made) lists nothing.
 */
export async function killCgroupProcs(dirs: readonly string[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    // A killed process stays listed until it has exited; a zombie is already gone as far as it goes.
    const listed = dirs.flatMap(readCgroupProcs).filter((pid) => pid > 1 && pid !== process.pid && isAlive(pid));
    if (listed.length === 0) return;
    for (const pid of listed)
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function readCgroupProcs(dir: string): number[] {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8")
      .split("\n")
      .filter((l) => /^\d+$/.test(l))
      .map(Number);
  } catch {
    return [];
  }
}
