import type { TripwireSpec } from "../runner/tripwire.ts";
import type { BindRow, Harness } from "../sandbox/types.ts";
import { presentCredentialSet } from "../session/credentials.ts";
import { founderVariables } from "../session/env.ts";
import { SESSION_CREDENTIALS } from "../session/credentials.ts";
import { chooseRoute, type RouteWhich } from "../route/choose-route.ts";
import { refuse, type Refusal } from "../route/refusals.ts";
import type { BinaryFacts, RunPaths, TurnEnd } from "../route/types.ts";
import { bundleDir, planBundle, type BundleFiles, type SourceDigests } from "../bundle/plan-bundle.ts";
import { claudeCommand, piCommand, type AdapterCommand } from "../adapters/command.ts";
import { heldActions, selectTools } from "../tools/catalog.ts";
import type { LaunchSettings, ResolvedInstance } from "./instance.ts";

/** What the launch decision reads from the machine, gathered by src/host and passed in as data. */
export interface LaunchFacts {
  repo: string;
  runDir: string;
  /** node as the runner, the gate and the MCP server are started with, and its version. */
  node: { path: string; version: string };
  binaries: Record<Harness, BinaryFacts>;
  /** null when the sandbox probe passed; else the probe's line (the first line of bwrap's stderr, or "bwrap is missing"). */
  sandboxProblem: string | null;
  digests: SourceDigests;
}

export interface LaunchPlan {
  route: RouteWhich;
  routeReason: string;
  harness: Harness;
  provider: string;
  model: string;
  thinking: string | null;
  harnessVersion: string;
  credentialSet: string | null;
  bundleDir: string;
  bundle: BundleFiles;
  adapter: AdapterCommand;
  turnEnd: TurnEnd;
  tripwire: TripwireSpec;
  sessionFiles: string;
  sandboxMounts: BindRow[];
}

export type LaunchDecision = { kind: "launch"; plan: LaunchPlan } | Refusal;

function credentialHelp(): string {
  return SESSION_CREDENTIALS.map((s) => s.names.join(" with ")).join(", or ");
}

/**
 * The launcher's decision for one resolved instance (issue 3): a launch plan, or a refusal with a
 * code from REFUSALS. `env` is the host environment the session would be started from.
 */
export function decideLaunch(
  instance: ResolvedInstance,
  settings: LaunchSettings,
  facts: LaunchFacts,
  env: Readonly<Record<string, string | undefined>>,
): LaunchDecision {
  const choice = chooseRoute(instance.vars, settings, (h) => ({
    binary: facts.binaries[h],
    nodeVersion: facts.node.version,
    claudeBinEnv: env.MOSAIC_CLAUDE_BIN,
  }));
  if (choice.kind === "refuse") return choice;
  const { route } = choice;

  if (facts.sandboxProblem !== null)
    // safety: no-sandbox-check // safety: sandbox-check-one-harness
    return refuse("sandbox-unavailable", `the sandbox is unavailable: ${facts.sandboxProblem}`);

  const founder = founderVariables(env);
  if (founder.length > 0)
    // safety: founder-check-dropped // safety: founder-check-one-harness
    return refuse(
      "founder-credentials",
      `the environment that would reach the session carries founder credentials: ${founder.join(", ")}; remove them from the bus unit's environment`,
    );

  const credentialSet = presentCredentialSet(env);
  if (route.harness === "claude-code" && credentialSet === null)
    // safety: no-credential-check
    return refuse(
      "no-session-credential",
      `a Claude Code session needs one full credential set (${credentialHelp()}); none is set in the bus unit's EnvironmentFile`,
    );

  const paths: RunPaths = { runDir: facts.runDir, repo: facts.repo, node: facts.node.path };
  const binary = facts.binaries[route.harness];
  const harnessVersion = binary.version ?? "unknown";
  const bundle = planBundle({
    instance,
    route,
    which: choice.which,
    reason: choice.reason,
    harnessVersion,
    paths,
    credentialSet,
    digests: facts.digests,
  });
  const typedTools = selectTools(heldActions(instance.actions)).map((t) => route.module.typedToolName(t.name));
  const adapterInput = {
    route,
    paths,
    workspace: instance.workspace,
    toolLimit: instance.limits.tools,
    typedTools,
    hostEnv: env,
    credentialSet,
  };
  const adapter = route.harness === "pi" ? piCommand(adapterInput, binary.path) : claudeCommand(adapterInput);

  return {
    kind: "launch",
    plan: {
      route: choice.which,
      routeReason: choice.reason,
      harness: route.harness,
      provider: route.provider,
      model: route.model,
      thinking: route.thinking,
      harnessVersion,
      credentialSet,
      bundleDir: bundleDir(facts.runDir),
      bundle,
      adapter,
      turnEnd: route.module.turnEnd(paths),
      tripwire: { stream: route.module.eventStream, typedTools },
      sessionFiles: route.module.sessionFiles(paths),
      sandboxMounts: [...route.module.sandboxMounts],
    },
  };
}
