import { SESSION_LIMITS } from "./limits.ts";

export type CgroupController = "pids" | "memory";
export type CgroupVersion = 1 | 2;

const MEMORY_V1 = [
  { file: "memory.limit_in_bytes", value: SESSION_LIMITS.memoryBytes.value, why: SESSION_LIMITS.memoryBytes.why },
  {
    file: "memory.memsw.limit_in_bytes",
    value: SESSION_LIMITS.memoryBytes.value,
    optional: true,
    why: "swap counts too, so the bound cannot be dodged by paging out",
  },
] as const;
const MEMORY_V2 = [
  { file: "memory.max", value: SESSION_LIMITS.memoryBytes.value, why: SESSION_LIMITS.memoryBytes.why },
  { file: "memory.swap.max", value: 0, optional: true, why: "no swap, so the bound cannot be dodged by paging out" },
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
