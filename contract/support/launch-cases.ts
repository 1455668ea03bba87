// The example instances under scenarios/instances/, each with the settings, host facts and
// environment it is decided against. Defaults describe a healthy host; a case's `host` and
// `settings` override them (an env value of null removes the variable).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  parseInstance,
  parseSettings,
  type LaunchSettings,
  type ResolvedInstance,
} from "../../src/core/launch/instance.ts";
import type { LaunchFacts } from "../../src/core/launch/decide-launch.ts";
import type { RefusalCode } from "../../src/core/route/refusals.ts";
import { sha256 } from "../../src/core/bundle/digest.ts";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";

export const STAND_IN = "stand-in-value";
export const CASE_DIR = join(REPO_ROOT, "scenarios/instances");

export const DEFAULT_SETTINGS: LaunchSettings = {
  launch: { models: ["claude-sonnet-4-5", "claude-opus-4-1"] },
  plugins: { harness: ["pi", "claude-code"] },
};

export const FIXTURE_REPO = "/srv/mosaic";
export const FIXTURE_NODE = "/usr/bin/node";

export function defaultFacts(run: string): LaunchFacts {
  return {
    repo: FIXTURE_REPO,
    runDir: `/srv/mosaic-data/runs/${run}`,
    node: { path: FIXTURE_NODE, version: "24.21.0" },
    binaries: {
      pi: {
        path: `${FIXTURE_REPO}/node_modules/.bin/pi`,
        exists: true,
        executable: true,
        runs: true,
        version: "0.85.1",
      },
      "claude-code": {
        path: "/usr/local/bin/claude",
        exists: true,
        executable: true,
        runs: true,
        version: "2.1.332 (Claude Code)",
      },
    },
    sandboxProblem: null,
    // Stand-in digests: fixed so goldens do not move on every edit of the sources (DESIGN.md).
    digests: {
      gate: sha256("stand-in: src/host/claude-gate.ts"),
      extension: sha256("stand-in: src/host/pi-extension.ts"),
      mcpServer: sha256("stand-in: src/host/mcp-server.ts"),
      tools: sha256("stand-in: src/core/tools/catalog.ts"),
    },
  };
}

/** A host shell: some allowed variables, a credential stand-in, and noise that must be filtered out. */
export const DEFAULT_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  LANG: "C.UTF-8",
  HOME: "/home/founder",
  EDITOR: "vi",
  ANTHROPIC_API_KEY: STAND_IN,
};

export interface LaunchCase {
  name: string;
  why: string;
  refuses: RefusalCode | undefined;
  instance: ResolvedInstance;
  settings: LaunchSettings;
  facts: LaunchFacts;
  env: Record<string, string | undefined>;
}

type HostOverride = {
  env?: Record<string, string | null>;
  node?: LaunchFacts["node"];
  sandboxProblem?: string | null;
  binaries?: Partial<Record<keyof LaunchFacts["binaries"], Partial<LaunchFacts["binaries"]["pi"]>>>;
};

function applyHost(facts: LaunchFacts, env: Record<string, string | undefined>, o: HostOverride | undefined): void {
  if (o === undefined) return;
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  if (o.node) facts.node = o.node;
  if (o.sandboxProblem !== undefined) facts.sandboxProblem = o.sandboxProblem;
  for (const [h, b] of Object.entries(o.binaries ?? {})) {
    const key = h as keyof LaunchFacts["binaries"];
    facts.binaries[key] = { ...facts.binaries[key], ...b };
  }
}

export function loadCase(name: string): LaunchCase {
  const doc = parse(readFileSync(join(CASE_DIR, `${name}.yaml`), "utf8")) as Record<string, unknown>;
  const instance = parseInstance(doc.instance);
  const settings =
    doc.settings === undefined ? DEFAULT_SETTINGS : parseSettings({ ...DEFAULT_SETTINGS, ...(doc.settings as object) });
  const facts = defaultFacts(instance.run);
  const env: Record<string, string | undefined> = { ...DEFAULT_ENV };
  applyHost(facts, env, doc.host as HostOverride | undefined);
  return {
    name,
    why: String(doc.why),
    refuses: doc.refuses as RefusalCode | undefined,
    instance,
    settings,
    facts,
    env,
  };
}

export function caseNames(): string[] {
  return readdirSync(CASE_DIR)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.replace(/\.yaml$/, ""))
    .sort();
}

export function loadCases(): LaunchCase[] {
  return caseNames().map(loadCase);
}

/** Placeholders for goldens: the fixture's run directory, workspace, checkout and node. */
export function launchPlaceholders(c: LaunchCase): Record<string, string> {
  return { "<run>": c.facts.runDir, "<ws>": c.instance.workspace, "<repo>": c.facts.repo, "<node>": c.facts.node.path };
}
