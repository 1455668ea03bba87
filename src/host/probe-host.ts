// What the probe's diagnosis reads of the host when bwrap fails (src/core/sandbox/diagnose.ts): the
// user-namespace sysctls, whether bwrap is setuid, whether this host is itself a container.
import { existsSync, readFileSync, statSync } from "node:fs";
import type { ProbeSeen } from "../core/sandbox/diagnose.ts";
import { findOnPath } from "./host-facts.ts";

export type ProbeHost = Omit<ProbeSeen, "step" | "line">;

function sysctl(path: string): number | null {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

function isSetuid(bwrap: string): boolean {
  const path = bwrap.includes("/") ? bwrap : findOnPath(bwrap, process.env.PATH ?? "");
  try {
    return path !== undefined && (statSync(path).mode & 0o4000) !== 0;
  } catch {
    return false;
  }
}

export function readProbeHost(bwrap: string, bwrapVersion: string | null): ProbeHost {
  return {
    bwrapVersion,
    sysctls: {
      "kernel.apparmor_restrict_unprivileged_userns": sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
      "kernel.unprivileged_userns_clone": sysctl("/proc/sys/kernel/unprivileged_userns_clone"),
      "user.max_user_namespaces": sysctl("/proc/sys/user/max_user_namespaces"),
    },
    bwrapSetuid: isSetuid(bwrap),
    inContainer: existsSync("/.dockerenv") || existsSync("/run/.containerenv") || (process.env.container ?? "") !== "",
  };
}
