import type { Harness } from "../sandbox/types.ts";
import type { LaunchSettings, RouteVarsValue } from "../launch/instance.ts";
import { loadHarness } from "./loader.ts";
import { refuse, type Refusal } from "./refusals.ts";
import type { HarnessModule, PreflightFacts } from "./types.ts";

export type RouteWhich = "primary" | "fallback";

export interface Route {
  harness: Harness;
  module: HarnessModule;
  provider: string;
  model: string;
  /** null: the harness's own default (Pi only; Claude Code requires a level). */
  thinking: string | null;
}

export type RouteChoice = { kind: "route"; route: Route; which: RouteWhich; reason: string } | Refusal;

type Checked = { ok: true; route: Route } | { ok: false; refusal: Refusal };

const PREFIX: Record<RouteWhich, string> = { primary: "vars.", fallback: "vars.fallback." };

function isSet(v: string | undefined): v is string {
  return v !== undefined && v !== "";
}

/** A route names harness and model, and thinking where its module requires one. */
function isComplete(vars: RouteVarsValue): boolean {
  if (!isSet(vars.harness) || !isSet(vars.model)) return false;
  const mod = loadHarness(vars.harness);
  return isSet(vars.thinking) || (mod !== undefined && !mod.thinkingRequired);
}

/** The vars a route lacks, as document paths. */
function missing(vars: RouteVarsValue, prefix: string): string[] {
  const mod = isSet(vars.harness) ? loadHarness(vars.harness) : undefined;
  const need =
    mod !== undefined && !mod.thinkingRequired
      ? (["harness", "model"] as const)
      : (["harness", "model", "thinking"] as const);
  return need.filter((k) => !isSet(vars[k])).map((k) => `${prefix}${k}`);
}

function describe(vars: RouteVarsValue): string {
  return `${vars.harness ?? "?"} ${vars.model ?? "?"} thinking ${vars.thinking ?? "unset"}`;
}

/** The checks that need no machine: harness-off, harness-refused, thinking-unsupported, unknown-model. */
function checkRoute(which: RouteWhich, vars: RouteVarsValue, settings: LaunchSettings): Checked {
  const p = PREFIX[which];
  const harness = vars.harness!;
  const model = vars.model!;
  const fail = (r: Refusal): Checked => ({ ok: false, refusal: r });
  if (!settings.plugins.harness.includes(harness))
    // safety: harness-off-ignored // safety: harness-off-one-harness
    return fail(
      refuse(
        "harness-off",
        `${p}harness: ${JSON.stringify(harness)} is not a switched-on harness module (plugins.harness: ${settings.plugins.harness.join(", ") || "none"})`,
      ),
    );
  const mod = loadHarness(harness);
  if (mod === undefined)
    return fail(
      refuse("harness-refused", `${p}harness: ${JSON.stringify(harness)} is not a harness module (pi, claude-code)`),
    );
  const thinking = isSet(vars.thinking) ? vars.thinking : null;
  if (thinking !== null && !mod.thinkingLevels.includes(thinking))
    // safety: thinking-one-harness
    return fail(
      refuse(
        "thinking-unsupported",
        `${p}thinking: ${JSON.stringify(thinking)} is not a level of ${mod.name} (${mod.thinkingLevels.join(" ")})`,
      ),
    );
  if (!settings.launch.models.includes(model))
    // safety: unknown-model-ignored // safety: unknown-model-one-harness
    return fail(
      refuse(
        "unknown-model",
        `${p}model: ${JSON.stringify(model)} is not in launch.models (${settings.launch.models.join(", ") || "none"})`,
      ),
    );
  return { ok: true, route: { harness: mod.name, module: mod, provider: mod.providers[0]!, model, thinking } };
}

/**
 * Picks the session's route (seed 003). Both routes must pass the checks that need no machine;
 * only a failed preflight of the primary falls back, and a fallback's refusal names the primary's
 * failure too.
 */
export function chooseRoute(
  vars: RouteVarsValue & { fallback?: RouteVarsValue | undefined },
  settings: LaunchSettings,
  preflightFacts: (harness: Harness) => PreflightFacts,
): RouteChoice {
  const fb = vars.fallback;
  const fbAny = fb !== undefined && [fb.harness, fb.model, fb.thinking].some(isSet);
  if (fbAny && !isComplete(fb))
    return refuse(
      "partial-fallback",
      `vars.fallback: ${missing(fb, "vars.fallback.").join(", ")} not set while other fallback vars are; set the fallback's harness, model and thinking together, or none`,
    );
  if (!isComplete(vars))
    return refuse(
      "no-route",
      `vars: ${missing(vars, "vars.").join(", ")} not set; a session's route comes only from the instance's harness, model and thinking vars`,
    );

  const primary = checkRoute("primary", vars, settings);
  if (!primary.ok) return primary.refusal;
  const fallback = fbAny ? checkRoute("fallback", fb, settings) : undefined;
  if (fallback !== undefined && !fallback.ok) return fallback.refusal;

  const pre = primary.route.module.preflight(preflightFacts(primary.route.harness));
  if (pre.ok) return { kind: "route", route: primary.route, which: "primary", reason: "primary" };
  const primaryFailure = `primary route (${describe(vars)}) failed preflight: ${pre.why}`;
  if (fallback === undefined) return refuse("preflight", primaryFailure);
  const fpre = fallback.route.module.preflight(preflightFacts(fallback.route.harness));
  if (!fpre.ok)
    return refuse("preflight", `${primaryFailure}; fallback route (${describe(fb!)}) failed preflight: ${fpre.why}`);
  return { kind: "route", route: fallback.route, which: "fallback", reason: `fallback: ${primaryFailure}` };
}
