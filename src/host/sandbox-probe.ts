import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { sha256Bytes } from "../core/bundle/digest.ts";
import { SECCOMP_FD } from "../core/sandbox/bwrap-argv.ts";
import { hostProblem, probeSteps } from "../core/sandbox/probe-plan.ts";
import { seccompArchOf, seccompProgram } from "../core/sandbox/seccomp.ts";
import type { HostFacts } from "../core/sandbox/types.ts";
import { dropToSession } from "../core/sandbox/identity.ts";
import { makeSessionCgroups, removeSessionCgroup } from "./session-cgroups.ts";
import { planCgroups } from "../core/sandbox/cgroups.ts";
import { prepareRunnerNode } from "./runner-node.ts";
import { findOnPath } from "./host-facts.ts";
import { joinCgroups } from "./sandbox-spawn.ts";
import { holdsBytes, writeFileAtomic } from "./atomic-write.ts";
import { diagnoseProbe, diagnosisLine } from "../core/sandbox/diagnose.ts";
import { readProbeHost, type ProbeHost } from "./probe-host.ts";

export const BWRAP_MISSING_HINT =
  "install it with `apt-get install bubblewrap` (Debian, Ubuntu) or your distribution's bubblewrap package";
export const PROBE_TIMEOUT_MS = 10_000;

/** The seccomp program for this host, written once under the state dir; bwrap reads it from a descriptor. */
export function prepareSeccompFile(stateDir: string, arch: string, bytes?: Uint8Array): string {
  const a = seccompArchOf(arch);
  if (a === undefined) throw new Error(`no seccomp filter for ${arch}`);
  return writeSeccompProgram(join(stateDir, "seccomp"), a, bytes ?? seccompProgram(a).bytes);
}

/** A seccomp program's bytes in `dir`, named by their digest; the file's path. */
export function writeSeccompProgram(dir: string, arch: string, bytes: Uint8Array): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, `${arch}-${sha256Bytes(bytes).slice(0, 16)}.bpf`);
  // Named by its content and written once: another launch may be opening it right now, and a
  // partly written program could be a shorter filter the kernel still accepts.
  if (!holdsBytes(file, bytes)) writeFileAtomic(file, bytes, 0o644); // safety: seccomp-atomic
  return file;
}

type Run = (args: string[]) => { ok: true } | { ok: false; line: string };

function runBwrap(bwrap: string, drop: string[], seccompFile: string, cgroupProcs: string[], timeoutMs: number): Run {
  return (args) => {
    const fd = openSync(seccompFile, "r");
    try {
      const [cmd, ...argv] = joinCgroups(cgroupProcs, [...drop, bwrap, ...args]);
      const stdio: Array<"ignore" | "pipe" | number> = ["ignore", "ignore", "pipe"];
      stdio[SECCOMP_FD] = fd;
      const r = spawnSync(cmd!, argv, { encoding: "utf8", stdio, timeout: timeoutMs, killSignal: "SIGKILL" });
      if (r.error) {
        const code = (r.error as NodeJS.ErrnoException).code;
        if (code === "ENOENT")
          return { ok: false, line: `bwrap is missing (${bwrap} not found): ${BWRAP_MISSING_HINT}` };
        if (code === "ETIMEDOUT")
          return { ok: false, line: `bwrap (${bwrap}) did not finish within ${timeoutMs / 1000} s` };
        return { ok: false, line: `bwrap could not be run (${bwrap}): ${r.error.message}` };
      }
      if (r.status === 0) return { ok: true }; // safety: probe-always-ok
      const first = (r.stderr ?? "").split("\n").find((l) => l.trim() !== "");
      return { ok: false, line: first?.trim() ?? `bwrap exited ${r.status ?? r.signal} with no message` };
    } finally {
      closeSync(fd);
    }
  };
}

/**
 * Proves bwrap can build a session's sandbox here with every namespace, capability drop, seccomp
 * filter, tmpfs bound and runner command the session will get. Returns null when it can, else one
 * line naming what this host lacks. There is no weaker fallback: a host that cannot apply one of
 * them refuses sandbox-unavailable.
 */
export function sandboxProblem(
  facts: HostFacts,
  opts: { bwrap?: string; stateDir?: string; timeoutMs?: number; host?: ProbeHost } = {},
): string | null {
  const bwrap = opts.bwrap ?? "bwrap";
  const pre = hostProblem(facts);
  if (pre !== null) return pre;
  // Looked up first: as root the probe runs behind the cgroup's shell, which would hide an ENOENT.
  if (!(bwrap.includes("/") ? existsSync(bwrap) : findOnPath(bwrap, process.env.PATH ?? "") !== undefined))
    return `bwrap is missing (${bwrap} not found): ${BWRAP_MISSING_HINT}`;
  // The runner's node lives at <stateDir>/runner-node/<name>.
  const dir = opts.stateDir ?? dirname(dirname(facts.runnerNode));
  let cgroups: string[] = [];
  try {
    prepareRunnerNode(facts.runnerNode, facts.node.path);
    const seccomp = prepareSeccompFile(dir, facts.arch);
    if (facts.uid === 0) {
      try {
        cgroups = makeSessionCgroups(planCgroups(facts.cgroups, `probe-${process.pid}-${Date.now()}`));
      } catch (e) {
        return `the session cgroups cannot be made (pids under ${facts.cgroups.pids}, memory under ${facts.cgroups.memory}): ${(e as Error).message}`;
      }
    }
    const run = runBwrap(
      bwrap,
      dropToSession(facts),
      seccomp,
      cgroups.map((c) => join(c, "cgroup.procs")),
      opts.timeoutMs ?? PROBE_TIMEOUT_MS,
    );
    const steps = probeSteps(facts);
    const full = run(steps.at(-1)!.args);
    if (full.ok) return null;
    if (/missing|could not be run|did not finish/.test(full.line)) return full.line;
    // The first step this host lacks, named with its cause and fix where the diagnosis table knows them.
    const diagnose = (step: string, line: string) => {
      const seen = { ...(opts.host ?? readProbeHost(bwrap, facts.bwrapVersion)), step, line };
      return diagnosisLine(diagnoseProbe(seen), seen);
    };
    for (const step of steps) {
      const r = run(step.args);
      if (!r.ok) return diagnose(step.name, r.line);
    }
    return diagnose(steps.at(-1)!.name, full.line);
  } catch (e) {
    return `the sandbox could not be prepared: ${(e as Error).message}`;
  } finally {
    for (const c of cgroups) removeSessionCgroup(c);
  }
}
