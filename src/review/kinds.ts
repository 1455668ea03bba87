// Which parser reads which golden. A new golden kind is one row: a matcher on the golden's path
// and header, and a parser. A golden no row matches has no facts to compare, so every change to it
// is unknown (classify.ts), never neutral.
import type { Fact } from "./model.ts";
import { parseAdapter } from "./parse-adapter.ts";
import { parseBindTable } from "./parse-binds.ts";
import { parseBwrapArgv } from "./parse-bwrap-argv.ts";
import { parseGate } from "./parse-gate.ts";
import { parseJsonGolden } from "./parse-json.ts";
import { bodyLines, headerFact, parsePipeTable, plainLine } from "./parse-lines.ts";
import { parseDiagnoses, parsePlan, parsePrompt, parseReviewReport } from "./parse-misc.ts";
import { parseExitMap, parseHarnessModules, parseRefusal, parseRoute, parseSpecErrors } from "./parse-records.ts";
import { parseSeccomp } from "./parse-seccomp.ts";
import { parseEgress } from "./parse-egress.ts";

export type GoldenKind = {
  id: string;
  /** What the golden shows, for the docs. */
  what: string;
  /** `path` is from the repository root (`goldens/...`); `header` is the golden's first line. */
  matches: (path: string, header: string) => boolean;
  parse: (text: string) => Fact[];
};

/** Every body line one fact of `type`: no rule knows such a line, so any change to it is unknown. */
const lines = (type: string) => (text: string) => [
  ...headerFact(text),
  ...bodyLines(text).map((l) => ({ ...plainLine(l), type })),
];
const table = (type: string) => (text: string) => [...headerFact(text), ...parsePipeTable(type, bodyLines(text))];
const under = (dir: string, ext: string) => (p: string) =>
  p.startsWith(dir) && p.endsWith(ext) && !p.slice(dir.length).includes("/");
const bundle = (file: string) => (p: string) => /^goldens\/bundle\/[^/]+\//.test(p) && p.endsWith(`/${file}`);

export const GOLDEN_KINDS: readonly GoldenKind[] = [
  {
    id: "bind-table",
    what: "the sandbox's bind table, in mount order",
    matches: (p, h) => under("goldens/sandbox/binds/", ".txt")(p) && h.startsWith("# bind table"),
    parse: parseBindTable,
  },
  {
    id: "bwrap-argv",
    what: "the bwrap command line, one option with its operands a line",
    matches: (p, h) => under("goldens/sandbox/argv/", ".txt")(p) && h.startsWith("# bwrap argv"),
    parse: parseBwrapArgv,
  },
  {
    id: "adapter",
    what: "the harness CLI's argv and environment",
    matches: (p, h) => under("goldens/adapters/", ".txt")(p) && h.startsWith("# adapter argv"),
    parse: parseAdapter,
  },
  {
    id: "probe-diagnoses",
    what: "the probe's diagnosis table, and the cause and fix each recorded bwrap failure gets",
    matches: (p) => p === "goldens/sandbox/diagnoses.txt",
    parse: parseDiagnoses,
  },
  {
    id: "gate-decisions",
    what: "the gate's decision for each call of a scene",
    matches: (p, h) => under("goldens/gate/", ".txt")(p) && h.startsWith("# gate decisions"),
    parse: parseGate,
  },
  {
    id: "bundle-policy",
    what: "the bundle's policy.json",
    matches: bundle("policy.jsonc"),
    parse: parseJsonGolden("policy"),
  },
  {
    id: "bundle-settings",
    what: "Claude Code's settings.json, which holds the gate hook",
    matches: bundle("settings.jsonc"),
    parse: parseJsonGolden("settings"),
  },
  { id: "bundle-mcp", what: "Claude Code's mcp.json", matches: bundle("mcp.jsonc"), parse: parseJsonGolden("mcp") },
  {
    id: "bundle-tools",
    what: "the typed tools a session is given",
    matches: bundle("tools.jsonc"),
    parse: parseJsonGolden("tools"),
  },
  {
    id: "bundle-manifest",
    what: "the bundle's manifest: route, tools, what the gate relies on, digests",
    matches: bundle("manifest.jsonc"),
    parse: parseJsonGolden("manifest"),
  },
  {
    id: "bundle-models",
    what: "Pi's models.json: its provider's URL and the placeholder key",
    matches: bundle("models.jsonc"),
    parse: parseJsonGolden("models"),
  },
  { id: "bundle-prompt", what: "the session's system prompt", matches: bundle("prompt.md"), parse: parsePrompt },
  {
    id: "route",
    what: "a launch's route decision",
    matches: (p) => under("goldens/launch/", ".route.txt")(p),
    parse: parseRoute,
  },
  {
    id: "refusal",
    what: "a launch refusal: code and message",
    matches: (p) => under("goldens/launch/", ".refusal.txt")(p),
    parse: parseRefusal,
  },
  {
    id: "spec-errors",
    what: "bad inputs and the typed error each gets",
    matches: (p) => p === "goldens/launch/spec-errors.txt" || p === "goldens/sandbox/spec-errors.txt",
    parse: parseSpecErrors,
  },
  {
    id: "harness-modules",
    what: "what each harness module provides",
    matches: (p) => p === "goldens/route/harness-modules.txt",
    parse: parseHarnessModules,
  },
  {
    id: "refusal-codes",
    what: "the launcher's refusal codes in check order",
    matches: (p) => p === "goldens/route/refusal-codes.txt",
    parse: table("refusal-code"),
  },
  {
    id: "env-allow",
    what: "ENV_ALLOW: the host variables a session gets",
    matches: (p) => p === "goldens/session/env-allow.txt",
    parse: table("env-allow"),
  },
  {
    id: "founder-env",
    what: "FOUNDER_ENV: variables that stop a launch",
    matches: (p) => p === "goldens/session/founder-env.txt",
    parse: table("founder-env"),
  },
  {
    id: "credentials",
    what: "SESSION_CREDENTIALS: the sets that count as a session credential",
    matches: (p) => p === "goldens/session/credentials.txt",
    parse: table("credential-set"),
  },
  {
    id: "runner-exits",
    what: "the runner's exit codes and launch end reasons",
    matches: (p) => p === "goldens/session/runner-exits.txt",
    parse: table("runner-exit"),
  },
  {
    id: "session-exit",
    what: "bwrap's exit code and how the session ended",
    matches: (p) => p === "goldens/session/session-exit.txt",
    parse: parseExitMap,
  },
  {
    id: "egress-allow",
    what: "EGRESS_ALLOW: the requests the model proxy forwards",
    matches: (p) => p === "goldens/network/egress-allow.txt",
    parse: table("egress-allow"),
  },
  {
    id: "network-modes",
    what: "NETWORK_MODES: what the policy's network field may say",
    matches: (p) => p === "goldens/network/network-modes.txt",
    parse: table("network-mode"),
  },
  {
    id: "egress-decisions",
    what: "the model proxy's decision for each request a session might send",
    matches: (p) => p === "goldens/network/egress-decisions.txt",
    parse: parseEgress,
  },
  {
    id: "model-betas",
    what: "BETA_ALLOW: the anthropic-beta values the model proxy passes",
    matches: (p) => p === "goldens/network/model-betas.txt",
    parse: table("model-beta"),
  },
  {
    id: "model-grants",
    what: "MODEL_GRANTS: the server-side features a policy may grant",
    matches: (p) => p === "goldens/network/model-grants.txt",
    parse: table("model-grant"),
  },
  {
    id: "model-body-tables",
    what: "what a model call's body may hold: fields, tool types, content blocks, source types",
    matches: (p) => p === "goldens/network/model-body-tables.txt",
    parse: lines("model-body-row"),
  },
  {
    id: "model-decisions",
    what: "the model proxy's body and header decision for each request a session might send",
    matches: (p) =>
      [
        "goldens/network/model-body-decisions.txt",
        "goldens/network/model-header-decisions.txt",
        "goldens/network/request-head-decisions.txt",
        "goldens/network/model-call-decisions.txt",
        "goldens/network/json-shape.txt",
      ].includes(p),
    parse: lines("model-decision"),
  },
  {
    id: "proxy-limits",
    what: "PROXY_LIMITS: what one session's model proxy may cost the host, and the size decisions",
    matches: (p) => p === "goldens/network/proxy-limits.txt",
    parse: lines("proxy-limit"),
  },
  {
    id: "egress-log-budget",
    what: "EGRESS_LOG_BUDGET: how much of a run's refusals the host's egress log keeps",
    matches: (p) => p === "goldens/network/egress-log-budget.txt",
    parse: table("egress-log-budget"),
  },
  {
    id: "tool-catalog",
    what: "the typed tool catalog",
    matches: (p) => p === "goldens/tools/catalog.txt",
    parse: table("tool"),
  },
  {
    id: "cli-plan",
    what: "`mosaic-harness plan`: the bind table and bwrap argv as printed",
    matches: (p) => under("goldens/cli/", ".txt")(p) && p.includes("/plan."),
    parse: parsePlan,
  },
  {
    id: "seccomp",
    what: "the seccomp filter: instructions, denied syscalls, its sha256",
    matches: (p, h) =>
      p.endsWith(".txt") && (/^goldens\/(.+\/)?seccomp[^/]*(\/|\.txt$)/.test(p) || h.startsWith("# seccomp")),
    parse: parseSeccomp,
  },
  {
    id: "session-env",
    what: "bwrap's environment: what the runner and every process it starts inherit from the host",
    matches: (p) => under("goldens/session/session-env/", ".txt")(p),
    parse: table("session-env"),
  },
  {
    id: "host-plan",
    what: "the host's side of a launch: identity, runner node, seccomp rules, cgroups, bounds, run files, proxy, end check, lock",
    matches: (p) => under("goldens/session/host-plan/", ".txt")(p),
    parse: table("host-plan"),
  },
  {
    id: "session-file",
    what: "session.json: what the launcher tells the runner (adapter argv and env, sockets, timings)",
    matches: (p) => under("goldens/session/session-file/", ".jsonc")(p),
    parse: parseJsonGolden("session-file"),
  },
  {
    id: "model-script",
    what: "the scripted model's format: load errors and SSE bodies (verification engine)",
    matches: (p) => under("goldens/model-script/", ".txt")(p),
    parse: lines("model-script-line"),
  },
  {
    id: "tool-fail-closed",
    what: "what the model sees when a typed tool call could not be made",
    matches: (p) => p === "goldens/tools/fail-closed.txt",
    parse: lines("fail-closed-line"),
  },
  {
    id: "review-report",
    what: "the review's own report on a fixture diff",
    matches: (p) => under("goldens/review/", ".txt")(p),
    parse: parseReviewReport,
  },
  {
    id: "workspace-check",
    what: "the end-of-session check's findings and remedies for a declarative workspace",
    matches: (p) => under("goldens/workspace/", ".txt")(p),
    parse: lines("workspace-check-line"),
  },
];

/** The kind of a golden, or null: then no change to it can be classified. */
export function findKind(path: string, header: string): GoldenKind | null {
  return GOLDEN_KINDS.find((k) => k.matches(path, header)) ?? null;
}
