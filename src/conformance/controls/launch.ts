// Changing a plan or a prepared launch on purpose, for a positive control: its bind table, its
// spec or the host facts it was planned with (binds and argv planned again from them), its argv,
// its identity, seccomp rules, cgroups, runner node and end check, its adapter's argv and env, its
// bundle's settings.json. A real launch never does any of this; only tests and the scenario
// runner's knobs edit a plan, and start() then carries out the edited plan like any other.
import type { LaunchPlan } from "../../core/launch/decide-launch.ts";
import type { CgroupController } from "../../core/sandbox/cgroups.ts";
import { planIdentity, planIdentityFiles } from "../../core/sandbox/identity.ts";
import { binds } from "../../core/sandbox/binds.ts";
import { bwrapArgv } from "../../core/sandbox/bwrap-argv.ts";
import type { SeccompRules } from "../../core/sandbox/seccomp.ts";
import type { Bind, HostFacts, SandboxSpec } from "../../core/sandbox/types.ts";
import type { PreparedLaunch } from "../../host/launcher.ts";
import { realFsView } from "../../host/fs-view.ts";
import { withoutFlags } from "./argv.ts";

type SessionPlan = PreparedLaunch["session"];
type SessionFile = SessionPlan["sessionFile"];

/** The plan with the adapter's argv replaced. */
export const planWithArgv = (plan: LaunchPlan, argv: string[]): LaunchPlan => ({
  ...plan,
  adapter: { ...plan.adapter, argv },
});

/** The plan with the adapter's argv without the given flags (throws on a flag that is not there). */
export const planWithoutFlags = (
  plan: LaunchPlan,
  drop: ReadonlyArray<string | readonly [string, string]>,
): LaunchPlan => planWithArgv(plan, withoutFlags(plan.adapter.argv, drop));

/** A prepared launch with its session plan changed. */
export const launchWithSession = (p: PreparedLaunch, edit: (s: SessionPlan) => SessionPlan): PreparedLaunch => ({
  ...p,
  session: edit(p.session),
});

/** A prepared launch with its bind table changed, its bwrap argv rebuilt from the new table. */
export function launchWithBinds(p: PreparedLaunch, edit: (t: Bind[]) => Bind[]): PreparedLaunch {
  const table = edit(p.session.binds);
  return { ...p, session: { ...p.session, binds: table, argv: bwrapArgv(p.session.spec, p.facts, table) } };
}

/**
 * A prepared launch planned again from a changed spec or host facts: the bind table from the
 * shipped planner (over the real workspace), then the argv. Edits of the table or argv come after.
 */
export function launchReplanned(
  p: PreparedLaunch,
  edit: { spec?: (s: SandboxSpec) => SandboxSpec; facts?: (f: HostFacts) => HostFacts },
): PreparedLaunch {
  const spec = (edit.spec ?? ((s) => s))(p.session.spec);
  const facts = (edit.facts ?? ((f) => f))(p.facts);
  const table = binds(spec, facts, realFsView());
  return { ...p, facts, session: { ...p.session, spec, binds: table, argv: bwrapArgv(spec, facts, table) } };
}

/** A prepared launch with its bwrap argv changed (after any change of its binds: the argv is rebuilt then). */
export const launchWithBwrapArgv = (p: PreparedLaunch, edit: (argv: string[]) => string[]): PreparedLaunch =>
  launchWithSession(p, (s) => ({ ...s, argv: edit(s.argv) }));

/** A prepared launch whose seccomp rules are changed: start() compiles what the plan holds. */
export const launchWithSeccomp = (p: PreparedLaunch, edit: (r: SeccompRules) => SeccompRules): PreparedLaunch =>
  launchWithSession(p, (s) => ({ ...s, seccomp: { ...s.seccomp, rules: edit(s.seccomp.rules) } }));

/** A prepared launch whose cgroups leave one controller out. */
export const launchWithoutCgroup = (p: PreparedLaunch, controller: CgroupController): PreparedLaunch =>
  launchWithSession(p, (s) => ({
    ...s,
    cgroups: {
      ...s.cgroups,
      dirs: s.cgroups.dirs
        .map((d) => ({
          ...d,
          controllers: d.controllers.filter((c) => c !== controller),
          settings: d.settings.filter((x) => !x.file.startsWith(`${controller}.`)),
        }))
        .filter((d) => d.controllers.length > 0),
    },
  }));

/**
 * A root caller's prepared launch without the drop to the session's identity: bwrap runs as the
 * caller (kuid 0), and the launcher hands it nothing, as it would never have to.
 */
export const launchWithoutDrop = (p: PreparedLaunch): PreparedLaunch =>
  launchWithSession(p, (s) => ({
    ...s,
    identity: { ...s.identity, runAs: { uid: s.identity.caller, gid: s.identity.caller }, drop: [], handOver: null },
    toolSocket: { ...s.toolSocket, owner: null },
  }));

/**
 * A root caller's prepared launch run as a given uid and holding no uid lock: a second session
 * sharing a first one's uid, as every session did when they all ran as one identity.
 */
export const launchAsUid = (p: PreparedLaunch, runAs: { uid: number; gid: number }): PreparedLaunch =>
  launchWithSession(p, (s) => ({
    ...s,
    identity: { ...s.identity, runAs, drop: planIdentity({ uid: s.identity.caller, session: runAs }, s.spec).drop },
    toolSocket: { ...s.toolSocket, owner: s.toolSocket.owner === null ? null : runAs },
    uidLock: null,
    identityFiles: { ...s.identityFiles, ...planIdentityFiles(runAs, `${s.sessionFile.runDir}/home`) },
  }));

/** A prepared launch whose runner runs on another copy of node, of the given mode (a readable one, say). */
export function launchWithRunnerNode(p: PreparedLaunch, path: string, mode: number): PreparedLaunch {
  const q = launchReplanned(p, { facts: (f) => ({ ...f, runnerNode: path }) });
  return launchWithSession(q, (s) => ({ ...s, runnerNode: { ...s.runnerNode, path, mode } }));
}

/** A prepared launch with no end-of-session check. */
export const launchWithoutEndCheck = (p: PreparedLaunch): PreparedLaunch =>
  launchWithSession(p, (s) => ({ ...s, endCheck: null }));

/** A prepared launch with its model proxy's plan changed (its grants and bounds, say). */
export function launchWithModelProxy(
  p: PreparedLaunch,
  edit: (m: NonNullable<SessionPlan["modelProxy"]>) => SessionPlan["modelProxy"],
): PreparedLaunch {
  const m = p.session.modelProxy;
  if (m === null) throw new Error("the plan has no model proxy to change");
  return launchWithSession(p, (s) => ({ ...s, modelProxy: edit(m) }));
}

/** A prepared launch with its session.json changed. */
export const launchWithSessionFile = (p: PreparedLaunch, edit: (sf: SessionFile) => SessionFile): PreparedLaunch =>
  launchWithSession(p, (s) => ({ ...s, sessionFile: edit(s.sessionFile) }));

/**
 * The session's model port moved off the planned one: where a control shares the host's network,
 * the port the runner listens on must be free on the host.
 */
export const launchWithModelPort = (p: PreparedLaunch, port: number): PreparedLaunch =>
  launchWithSessionFile(p, (sf) => (sf.model === null ? sf : { ...sf, model: { ...sf.model, port } }));

/** A prepared launch with the adapter's argv (in session.json) changed. */
export const launchWithArgv = (p: PreparedLaunch, edit: (argv: string[]) => string[]): PreparedLaunch =>
  launchWithSessionFile(p, (sf) => ({ ...sf, adapter: { ...sf.adapter, argv: edit(sf.adapter.argv) } }));

/** A prepared launch with the adapter's env (in session.json) changed. */
export const launchWithEnv = (
  p: PreparedLaunch,
  edit: (env: Record<string, string>) => Record<string, string>,
): PreparedLaunch =>
  launchWithSessionFile(p, (sf) => ({ ...sf, adapter: { ...sf.adapter, env: edit(sf.adapter.env) } }));

/** A prepared launch with the bundle's settings.json edited; throws when there is none. */
export function launchWithSettings(p: PreparedLaunch, why: string, edit: (settings: string) => string): PreparedLaunch {
  const settings = p.launch.bundle["settings.json"];
  if (settings === undefined) throw new Error(`${why}: the bundle has no settings.json`);
  return { ...p, launch: { ...p.launch, bundle: { ...p.launch.bundle, "settings.json": edit(settings) } } };
}

/**
 * The session's model port moved (launchWithModelPort) and the harness told of it: Claude Code's
 * ANTHROPIC_BASE_URL in the adapter's env, Pi's models.json in the bundle, which start() copies to
 * Pi's agent dir (the manifest's digest of it is then stale; nothing checks it at run time).
 */
export function launchWithHarnessModelPort(p: PreparedLaunch, port: number): PreparedLaunch {
  const url = `http://127.0.0.1:${port}`;
  let out = launchWithModelPort(p, port);
  if (out.session.sessionFile.adapter.env.ANTHROPIC_BASE_URL !== undefined)
    out = launchWithEnv(out, (env) => ({ ...env, ANTHROPIC_BASE_URL: url }));
  const models = out.launch.bundle["models.json"];
  if (models === undefined) return out;
  const doc = JSON.parse(models) as { providers: Record<string, { baseUrl: string }> };
  for (const provider of Object.values(doc.providers)) provider.baseUrl = url;
  const bundle = { ...out.launch.bundle, "models.json": JSON.stringify(doc, null, 2) + "\n" };
  return { ...out, launch: { ...out.launch, bundle } };
}
