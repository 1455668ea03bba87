// The run's template variables a scenario may hold: `{{name}}` in the model script, the messages, the
// workspace files and the assertions. The runner fills each from the run it set up; the loader
// refuses any other name, so a typo is an error at load time, not a tool call that opens
// `{{worksapce}}`.
import { REQUEST_TEMPLATE_VARS } from "../stand-ins/model-script/format.ts";

export interface TemplateVarSpec {
  what: string;
  /** Only assertions may name it: a script or file holding it would carry the value itself. */
  assertionsOnly: boolean;
  /** An absolute host path: a file_* assertion may start with it. */
  path: boolean;
}

const p = (what: string, path = true, assertionsOnly = false): TemplateVarSpec => ({ what, assertionsOnly, path });

/** Every template variable the runner fills, and what it stands for. */
export const TEMPLATE_VARS = {
  workspace: p("the session's workspace (bound read-write at the same path)"),
  run: p("the session's run directory: bundle/, session.json, turns/, home/, sock/tools.sock"),
  main_workspace: p("the scenario's main session's workspace: for a launched session, its launcher's"),
  main_run: p("the scenario's main session's run directory: for a launched session, its launcher's"),
  launch_socket: p("the stand-in broker's launch socket, bound only into a sandbox whose role may launch"),
  home: p("the session's HOME, `<run>/home`"),
  repo: p("the checkout the runner's files come from; only those files are bound"),
  data_root: p("the data root holding workspaces/ and runs/"),
  founder_home: p("the founder's HOME, where the stand-ins are planted; never bound"),
  ssh_key: p("the stand-in `~/.ssh/id_ed25519` under the founder's HOME"),
  secrets_env: p("the stand-in `~/.config/mosaic-dev/secrets/stand-in.env` (FAKE_TOKEN=<secret>)"),
  secrets_env_via_home: p("{{secrets_env}} spelt from the session's HOME: `~/../../..` climbing out of it", false),
  mosaic_state: p("the stand-in `~/.mosaic/state.json`"),
  git_credentials: p("the stand-in `~/.git-credentials`"),
  other_workspace: p("a file in another instance's workspace under the data root"),
  workspace_slug: p("Claude Code's project name for the workspace: every character but a letter or digit as -", false),
  trap_port: p("the port of the network trap on the host's 127.0.0.1 (network_trap: true)", false),
  secret: p("the stand-in value every stand-in file carries", false, true),
  canary: p("the host's model credential, which only the proxy outside the sandbox holds", false, true),
} as const satisfies Record<string, TemplateVarSpec>;

export type TemplateVar = keyof typeof TEMPLATE_VARS;
export type TemplateVarValues = Readonly<Record<TemplateVar, string>>;

const TEMPLATE_VAR = /\{\{([^{}]*)\}\}/g;

/** The `{{name}}`s in one string, in order. */
export function templateVarsIn(s: string): string[] {
  return [...s.matchAll(TEMPLATE_VAR)].map((m) => m[1]!);
}

/** Why a template variable may not stand here, or null. `where`: the part of the scenario the string is in. */
export function templateVarProblem(name: string, where: "model" | "assertions" | "other"): string | null {
  if (Object.hasOwn(REQUEST_TEMPLATE_VARS, name))
    return where === "model" ? null : `{{${name}}} is filled per request, only inside a model template`;
  if (!Object.hasOwn(TEMPLATE_VARS, name))
    return `{{${name}}} is not a template variable the runner fills (${Object.keys(TEMPLATE_VARS).join(", ")})`;
  if (TEMPLATE_VARS[name as TemplateVar].assertionsOnly && where !== "assertions")
    return `{{${name}}} may stand only in assertions: a script or file holding it would carry the value itself`;
  return null;
}

/** Fills `{{name}}` from the run's values; the loader has already refused an unknown name. */
export function fillText(s: string, values: Readonly<Record<string, string>>): string {
  return s.replace(TEMPLATE_VAR, (whole, n: string) => values[n] ?? whole);
}
