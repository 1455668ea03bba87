// Changing a plan or a prepared launch on purpose, for a positive control: its bind table (argv
// rebuilt from it), its adapter's argv and env, its bundle's settings.json. A real launch never
// does any of this; only tests and the scenario runner's knobs edit a plan.
import type { LaunchPlan } from "../../core/launch/decide-launch.ts";
import { bwrapArgv } from "../../core/sandbox/bwrap-argv.ts";
import type { Bind } from "../../core/sandbox/types.ts";
import type { PreparedLaunch } from "../../host/launcher.ts";
import { withoutFlags } from "./argv.ts";

type SessionFile = PreparedLaunch["session"]["sessionFile"];

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

/** A prepared launch with its bind table changed, its bwrap argv rebuilt from the new table. */
export function launchWithBinds(p: PreparedLaunch, edit: (t: Bind[]) => Bind[]): PreparedLaunch {
  const binds = edit(p.session.binds);
  return { ...p, session: { ...p.session, binds, argv: bwrapArgv(p.session.spec, p.facts, binds) } };
}

/** A prepared launch with its session.json changed. */
export const launchWithSessionFile = (p: PreparedLaunch, edit: (sf: SessionFile) => SessionFile): PreparedLaunch => ({
  ...p,
  session: { ...p.session, sessionFile: edit(p.session.sessionFile) },
});

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
