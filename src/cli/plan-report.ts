import type { FsView } from "../core/gate/fs-view.ts";
import { binds } from "../core/sandbox/binds.ts";
import { bwrapArgv } from "../core/sandbox/bwrap-argv.ts";
import { planIdentity } from "../core/sandbox/identity.ts";
import { sessionCommand } from "../core/session/plan-session.ts";
import { renderCommandLines, renderBindLines } from "../core/sandbox/render.ts";
import type { Bind, HostFacts, SandboxSpec } from "../core/sandbox/types.ts";

export interface PlanReport {
  spec: SandboxSpec;
  binds: Bind[];
  /** The launcher's command: bwrap's argv, behind a root caller's drop to the session's identity. */
  argv: string[];
  probe: { ok: boolean; bwrapVersion: string | null; problem: string | null };
}

/** The whole plan for one spec on one host; throws a MosaicError for a bad spec. */
export function planReport(spec: SandboxSpec, facts: HostFacts, problem: string | null, fs: FsView): PlanReport {
  const table = binds(spec, facts, fs);
  return {
    spec,
    binds: table,
    argv: sessionCommand({ identity: planIdentity(facts, spec), argv: bwrapArgv(spec, facts, table) }),
    probe: { ok: problem === null, bwrapVersion: facts.bwrapVersion, problem },
  };
}

export function renderPlanText(r: PlanReport): string {
  const probe = r.probe.ok
    ? `ok: ${r.probe.bwrapVersion ?? "bwrap"} built the namespaces and system binds on this machine`
    : `NOT READY: ${r.probe.problem}`;
  return [
    `Sandbox plan for a ${r.spec.harness} session`,
    `  workspace ${r.spec.workspace}`,
    `  run dir   ${r.spec.runDir}`,
    "",
    "Bind table (mount order)",
    ...renderBindLines(r.binds).map((l) => `  ${l}`),
    "",
    r.argv[0] === "bwrap" ? "bwrap argv" : "bwrap argv, run as the session's own uid",
    ...renderCommandLines(r.argv).map((l) => `  ${l}`),
    "",
    `Probe: ${probe}`,
    "",
  ].join("\n");
}
