import { accessSync, constants, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The directory under which a session's pids cgroup can be made, or null. RLIMIT_NPROC does not
 * bind uid 0 (the kernel exempts the init user), so a root host bounds a session's tasks with the
 * pids controller instead: cgroup v1's pids hierarchy, or a cgroup v2 hierarchy that offers pids.
 */
export function findPidsCgroup(mounts = readMounts()): string | null {
  for (const m of mounts) {
    const base = m.type === "cgroup" && m.options.includes("pids") ? m.dir
      : m.type === "cgroup2" && controllers(m.dir).includes("pids") ? m.dir
      : null;
    if (base === null) continue;
    try {
      accessSync(base, constants.W_OK);
      return join(base, "mosaic-sessions");
    } catch {
      // not ours to write
    }
  }
  return null;
}

type Mount = { dir: string; type: string; options: string[] };

function readMounts(): Mount[] {
  try {
    return readFileSync("/proc/self/mounts", "utf8").split("\n").filter(Boolean).map((l) => {
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

/** Makes `<base>/<name>` with pids.max = max (enabling pids for children on v2). Returns its directory. */
export function makeSessionCgroup(base: string, name: string, max: number): string {
  mkdirSync(base, { recursive: true });
  try {
    // cgroup v2 only: let the sessions' cgroups use the pids controller.
    writeFileSync(join(base, "cgroup.subtree_control"), "+pids");
  } catch {
    // v1 has no subtree_control; on v2 the write fails only if it is already on or not allowed,
    // and then pids.max below is missing and the whole call fails.
  }
  const dir = join(base, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "pids.max"), String(max)); // safety: cgroup-unbounded
  return dir;
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
