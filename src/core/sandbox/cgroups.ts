import { SESSION_LIMITS } from "./limits.ts";
import type { SessionCgroupBases } from "./types.ts";

export type CgroupController = "pids" | "memory";
export type CgroupVersion = 1 | 2;

const MEMSW_V1 = {
  file: "memory.memsw.limit_in_bytes",
  value: SESSION_LIMITS.memoryBytes.value,
  optional: true,
  why: "swap counts too, so the bound cannot be dodged by paging out",
} as const;
const MEMORY_V1 = [
  { file: "memory.limit_in_bytes", value: SESSION_LIMITS.memoryBytes.value, why: SESSION_LIMITS.memoryBytes.why },
  MEMSW_V1, // safety: memory-cgroup-v1-no-swap
] as const;
const SWAP_V2 = {
  file: "memory.swap.max",
  value: 0, // safety: memory-cgroup-v2-swap-as-memory
  optional: true,
  why: "no swap, so the bound cannot be dodged by paging out",
} as const;
const MEMORY_V2 = [
  { file: "memory.max", value: SESSION_LIMITS.memoryBytes.value, why: SESSION_LIMITS.memoryBytes.why },
  SWAP_V2,
] as const;

/**
 * What a root host writes into each session cgroup, per controller and cgroup version. `optional`
 * files may be missing (no swap accounting) and are then skipped; any other failure refuses the
 * launch. Order matters on v1: memsw may not be set below the memory limit.
 */
export const CGROUP_SETTINGS: Readonly<
  Record<
    CgroupController,
    Readonly<Record<CgroupVersion, readonly { file: string; value: number; optional?: true; why: string }[]>>
  >
> = {
  pids: {
    1: [{ file: "pids.max", value: SESSION_LIMITS.tasks.value, why: SESSION_LIMITS.tasks.why }], // safety: cgroup-unbounded
    2: [{ file: "pids.max", value: SESSION_LIMITS.tasks.value, why: SESSION_LIMITS.tasks.why }], // safety: cgroup-v2-unbounded
  },
  memory: {
    1: MEMORY_V1, // safety: memory-cgroup-unbounded
    2: MEMORY_V2, // safety: memory-cgroup-v2-unbounded
  },
};

/**
 * The session's cgroup names are unique per launch: a cgroup a killed session left behind never
 * blocks the next launch, and two launches in the same millisecond from one host never share one.
 */
export function sessionCgroupName(run: string, hostPid: number, now: number): string {
  return `${run}-${hostPid}-${now.toString(36)}`; // safety: cgroup-name-run
}

/** One setting a session cgroup gets: its file, its value, and why. */
export type CgroupSetting = { file: string; value: number; optional?: true; why: string };

/** One cgroup directory of a session: the controllers it holds and what is written into it. */
export interface CgroupDir {
  /** `<base>/<name>`. */
  dir: string;
  /** The hierarchy's sessions directory, made if missing. */
  base: string;
  version: CgroupVersion;
  controllers: CgroupController[];
  settings: CgroupSetting[];
}

/** The session's cgroups: one directory per hierarchy (one for both controllers on cgroup v2). */
export interface CgroupPlan {
  name: string;
  dirs: CgroupDir[];
}

/**
 * The cgroups a root host puts a session in: every controller the host offers, grouped by
 * hierarchy, each with CGROUP_SETTINGS for its version. None for a user caller, who has no
 * hierarchy it may write (bases all null).
 */
export function planCgroups(bases: SessionCgroupBases, name: string): CgroupPlan {
  const dirs: CgroupDir[] = [];
  for (const c of ["pids", "memory"] as const) {
    const base = bases[c];
    if (base === null) continue;
    const same = dirs.find((d) => d.base === base.dir);
    const settings = CGROUP_SETTINGS[c][base.version].map((s) => ({ ...s }));
    if (same !== undefined) {
      same.controllers.push(c);
      same.settings.push(...settings);
    } else dirs.push({ dir: `${base.dir}/${name}`, base: base.dir, version: base.version, controllers: [c], settings });
  }
  return { name, dirs };
}
