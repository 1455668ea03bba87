import { BIND_TABLE_SYSTEM_ROWS, systemBinds } from "./binds.ts";
import { HARDENING, NAMESPACES, bindArgs, runnerPrefix } from "./bwrap-argv.ts";
import { seccompArchOf } from "./seccomp.ts";
import type { HostFacts } from "./types.ts";

/** One step of the probe: bwrap's arguments with everything up to this step, and what it adds. */
export interface ProbeStep {
  name: string;
  args: string[];
}

/**
 * The probe as cumulative steps, ending in exactly the namespaces, capabilities, seccomp filter,
 * tmpfs bounds and runner command a session gets (with `-e 0` for the runner). The host runs the
 * last step; only when it fails does it run the others, to name the first one this host lacks.
 */
export function probeSteps(facts: HostFacts): ProbeStep[] {
  const system = systemBinds(facts)
    .filter((b) => BIND_TABLE_SYSTEM_ROWS.includes(b.row))
    .flatMap(bindArgs);
  const tmp = systemBinds(facts)
    .filter((b) => b.row === "tmp")
    .flatMap(bindArgs);
  const runner = systemBinds(facts)
    .filter((b) => b.row === "runner-node")
    .flatMap(bindArgs);
  const steps: ProbeStep[] = [];
  let args = [...NAMESPACES, ...system];
  steps.push({ name: `the namespaces (${NAMESPACES.join(" ")})`, args: [...args, "--", "true"] });
  for (const h of HARDENING) {
    args = [...args, ...h.args];
    steps.push({ name: h.args.join(" "), args: [...args, "--", "true"] });
  }
  args = [...args, ...tmp];
  steps.push({ name: "a tmpfs with --size", args: [...args, "--", "true"] });
  args = [...args, ...runner];
  steps.push({
    name: `the runner's command (setpriv --pdeathsig, prlimit --nproc --data, the execute-only node ${facts.runnerNode})`,
    args: [...args, "--", ...runnerPrefix(facts), "-e", "0"],
  });
  return steps;
}

/** What the host lacks before bwrap is even run, or null. */
export function hostProblem(facts: HostFacts): string | null {
  if (seccompArchOf(facts.arch) === undefined)
    return `no seccomp filter is written for ${facts.arch}; sessions run on x64 and arm64 only`;
  if (facts.uid === 0 && facts.cgroups.pids === null)
    // safety: root-without-cgroup
    return "running as root, a session's tasks are bounded by a pids cgroup too, and no writable pids controller was found (mount cgroup v2 with pids, or cgroup v1's pids hierarchy)";
  if (facts.uid === 0 && facts.cgroups.memory === null)
    // safety: root-without-memory-cgroup
    return "running as root, a session's memory as a whole is bounded by a memory cgroup, and no writable memory controller was found (mount cgroup v2 with memory, or cgroup v1's memory hierarchy)";
  return null;
}
