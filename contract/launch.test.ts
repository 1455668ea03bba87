import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decideLaunch, type LaunchDecision, type LaunchPlan } from "../src/core/launch/decide-launch.ts";
import { REFUSALS } from "../src/core/route/refusals.ts";
import { credentialVariableNames } from "../src/core/session/credentials.ts";
import { FOUNDER_ENV } from "../src/core/session/env.ts";
import { normalise } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { STAND_IN, launchPlaceholders, loadCase, loadCases, type LaunchCase } from "./support/launch-cases.ts";
import { MODEL_URL } from "../src/core/network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import { POLICY_FIELDS, SEED_BUNDLE_FILES, SEED_S0_LINES, SEED_TOOL_GRANTS } from "./oracles/launch-seed-tables.ts";

const CASES = loadCases();
const LAUNCHES = CASES.filter((c) => c.refuses === undefined);
const REFUSING = CASES.filter((c) => c.refuses !== undefined);

function decide(c: LaunchCase): LaunchDecision {
  return decideLaunch(c.instance, c.settings, c.facts, c.env);
}

function planOf(c: LaunchCase): LaunchPlan {
  const d = decide(c);
  if (d.kind !== "launch") throw new Error(`${c.name}: expected a launch, got ${d.code}: ${d.message}`);
  return d.plan;
}

/** One argv token per line; an empty or spaced token is shown JSON-quoted so it stays visible. */
function renderArgv(argv: readonly string[]): string[] {
  return argv.map((t) => (t === "" || /\s/.test(t) ? JSON.stringify(t) : t));
}

const CREDENTIAL_NAMES = new Set(credentialVariableNames());

/** NAME=value sorted; a credential variable's value shows only as <set>, or as <placeholder> when it is the placeholder, so the golden shows which the session holds. */
function renderEnv(env: Readonly<Record<string, string>>): string[] {
  return Object.keys(env)
    .sort()
    .map(
      (k) =>
        `${k}=${env[k] === CREDENTIAL_PLACEHOLDER ? "<placeholder>" : k === "ANTHROPIC_BASE_URL" && env[k] === MODEL_URL ? MODEL_URL : CREDENTIAL_NAMES.has(k) ? "<set>" : env[k]}`,
    );
}

function renderDecision(p: LaunchPlan): string {
  return [
    `route: ${p.route}`,
    `routeReason: ${p.routeReason}`,
    `harness: ${p.harness}`,
    `provider: ${p.provider}`,
    `model: ${p.model}`,
    `thinking: ${p.thinking ?? "(unset)"}`,
    `harnessVersion: ${p.harnessVersion}`,
    `credentialSet: ${p.credentialSet ?? "(none)"}`,
    `bundleDir: ${p.bundleDir}`,
    `bundleFiles: ${Object.keys(p.bundle).join(" ")}`,
    `cwd: ${p.adapter.cwd}`,
    `stdin: ${p.adapter.stdin}`,
    `turnEnd: ${JSON.stringify(p.turnEnd)}`,
    `sessionFiles: ${p.sessionFiles}`,
    `sandboxMounts: ${p.sandboxMounts.join(" ")}`,
  ].join("\n");
}

function goldenName(file: string): { name: string; ext: "md" | "jsonc" } {
  return file.endsWith(".md")
    ? { name: file.replace(/\.md$/, ""), ext: "md" }
    : { name: file.replace(/\.json$/, ""), ext: "jsonc" };
}

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** What must hold for every plan, whatever its golden says. */
function assertPlanInvariants(c: LaunchCase, p: LaunchPlan): void {
  const files = p.bundle;
  const everything = Object.values(files).join("\n");
  // No credential value in the bundle: every stand-in the host env carries must be absent.
  for (const [k, v] of Object.entries(c.env)) {
    if (v !== undefined && (CREDENTIAL_NAMES.has(k) || FOUNDER_ENV.some((f) => f.name === k)))
      expect(everything.includes(v), `${k}'s value is in the bundle`).toBe(false);
  }
  expect(everything).not.toContain(STAND_IN);

  expect(Object.keys(files).sort(), "the bundle's files").toEqual(SEED_BUNDLE_FILES[p.harness]);
  expect(Object.keys(files).at(-1), "manifest.json is planned last, over the others").toBe("manifest.json");

  const policy = JSON.parse(files["policy.json"]!) as Record<string, unknown>;
  expect(Object.keys(policy).sort(), "policy.json has exactly the Policy fields").toEqual(POLICY_FIELDS);
  expect(policy.harness).toBe(p.harness);
  expect(policy.workspace).toBe(c.instance.workspace);
  expect(policy.home).toBe(`${c.facts.runDir}/home`);
  expect(policy.credentials, "credential status is metadata only").toEqual({ set: p.credentialSet });

  const granted = new Set(c.instance.limits.tools.flatMap((t) => SEED_TOOL_GRANTS[p.harness][t] ?? []));
  expect(
    [...(policy.builtInTools as string[])].sort(),
    "built-in tools are exactly what the tool limit grants",
  ).toEqual([...granted].sort());
  const bash = p.harness === "pi" ? "bash" : "Bash";
  expect((policy.builtInTools as string[]).includes(bash), `${bash} only when the tool limit grants bash`).toBe(
    c.instance.limits.tools.includes("bash"),
  );

  const tools = JSON.parse(files["tools.json"]!) as { tools: { name: string; harnessName: string }[] };
  const manifest = JSON.parse(files["manifest.json"]!) as Record<string, unknown>;
  expect(
    tools.tools.map((t) => t.harnessName),
    "policy.json's typed tools are tools.json's",
  ).toEqual(policy.typedTools);
  expect(manifest.typedTools).toEqual(policy.typedTools);
  expect(
    tools.tools.map((t) => t.name),
    "raise_decision is always there",
  ).toContain("raise_decision");
  const actions = [...c.instance.actions.withinRole, ...c.instance.actions.crossRole];
  expect(
    tools.tools.some((t) => t.name === "launch"),
    "launch only for an instance that holds it",
  ).toBe(actions.includes("launch"));

  expect(manifest.reliesOn, "reliesOn lists the five S0 lines of the harness (seed 000)").toEqual(
    SEED_S0_LINES[p.harness],
  );
  expect([manifest.route, manifest.routeReason, manifest.harnessVersion]).toEqual([
    p.route,
    p.routeReason,
    p.harnessVersion,
  ]);
  const digests = manifest.files as Record<string, string>;
  expect(Object.keys(digests).sort(), "the manifest digests every other bundle file").toEqual(
    Object.keys(files)
      .filter((f) => f !== "manifest.json")
      .sort(),
  );
  for (const [f, d] of Object.entries(digests)) expect(d, `sha256 of ${f}`).toBe(sha(files[f]!));
  expect(manifest.sources).toEqual(c.facts.digests);

  const argv = p.adapter.argv;
  expect(argv.join(" "), "no credential value in argv").not.toContain(STAND_IN);
  expect(argv, "--bare silently skips hooks").not.toContain("--bare");
  expect(argv.at(-1), "options end before the message").toBe("--");
  expect(p.adapter.stdin).toBe("closed");
  expect(p.adapter.cwd).toBe(c.instance.workspace);
  for (const f of FOUNDER_ENV) expect(p.adapter.env[f.name], `${f.name} reaches the session`).toBeUndefined();
  expect(p.adapter.env.HOME, "HOME comes from bwrap, not the host").toBeUndefined();
  expect(p.adapter.env.MOSAIC_POLICY_FILE).toBe(`${p.bundleDir}/policy.json`);
  const after = (flag: string) => argv[argv.indexOf(flag) + 1];

  if (p.harness === "claude-code") {
    const settings = JSON.parse(files["settings.json"]!) as {
      hooks: { PreToolUse: { matcher: string; hooks: { type: string; command: string; timeout: number }[] }[] };
    };
    expect(settings.hooks.PreToolUse).toHaveLength(1);
    const entry = settings.hooks.PreToolUse[0]!;
    expect(entry.matcher, "every tool goes through the gate").toBe("*");
    const hook = entry.hooks[0]!;
    expect(hook.type).toBe("command");
    expect(hook.command, "the gate runs under timeout -k 2 10").toMatch(/^NODE_COMPILE_CACHE='[^']+' timeout -k 2 10 /);
    expect(hook.command, "the gate's compile cache lies in the read-only bundle, not the session's /tmp").toContain(
      `NODE_COMPILE_CACHE='${p.bundleDir}/gate-compile-cache' `,
    );
    expect(hook.command, "a missing, crashing or hanging gate exits 2").toMatch(/ \|\| exit 2$/);
    expect(hook.command).toContain(`'${c.facts.repo}/src/host/claude-gate.ts' '${p.bundleDir}/policy.json'`);
    expect(hook.timeout, "the hook's own timeout outlasts the wrapper's kill").toBeGreaterThan(10 + 2);
    const mcp = JSON.parse(files["mcp.json"]!) as {
      mcpServers: Record<string, { type: string; command: string; args: string[] }>;
    };
    expect(Object.keys(mcp.mcpServers)).toEqual(["mosaic"]);
    expect(mcp.mcpServers.mosaic!.type).toBe("stdio");
    expect(
      [mcp.mcpServers.mosaic!.command, ...mcp.mcpServers.mosaic!.args],
      "the MCP server runs on the node the preflight checked, from the checkout",
    ).toEqual([c.facts.node.path, `${c.facts.repo}/src/host/mcp-server.ts`]);
    for (const t of tools.tools) expect(t.harnessName).toBe(`mcp__mosaic__${t.name}`);

    expect(after("--tools"), "built-in tools only from the limit").toBe((policy.builtInTools as string[]).join(","));
    expect(after("--settings")).toBe(`${p.bundleDir}/settings.json`);
    expect(after("--setting-sources"), "no user, project or local settings load").toBe("");
    expect(argv, "--restricted keeps CLAUDE.md files and auto-memory out of the prompt").toContain("--restricted");
    expect(argv, "only the bundle's MCP server").toContain("--strict-mcp-config");
    expect(after("--mcp-config")).toBe(`${p.bundleDir}/mcp.json`);
    expect(after("--effort")).toBe(p.thinking);
    expect(after("--permission-mode"), "a mode that never bypasses the hook").toBe("dontAsk");
    expect(after("--allowedTools")!.split(",")).toEqual([
      ...(policy.builtInTools as string[]),
      ...(policy.typedTools as string[]),
    ]);
    expect(argv).not.toContain("--dangerously-skip-permissions");
    expect(p.adapter.env.MCP_CONNECTION_NONBLOCKING).toBe("0");
    expect(p.adapter.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe("1");
    expect(p.turnEnd, "only a final result line is a turn; empty output fails").toMatchObject({
      kind: "result-line",
      emptyOutputFails: true,
    });
  } else {
    expect(argv.slice(0, 2), "pi runs on the node the preflight checked, not on PATH's").toEqual([
      c.facts.node.path,
      c.facts.binaries.pi.path,
    ]);
    for (const f of ["-p", "--no-session", "--offline", "-nc", "-ns", "-ne"]) expect(argv, f).toContain(f);
    expect(after("-e"), "the gate's extension is loaded").toBe(`${c.facts.repo}/src/host/pi-extension.ts`);
    for (const f of ["-np", "-na"]) expect(argv, f).toContain(f);
    expect(argv.includes("--thinking"), "--thinking only when set").toBe(p.thinking !== null);
    expect(argv, "Pi's tool allowlist is set").toContain("--tools");
    expect(after("--tools")!.split(","), "Pi's allowlist covers built-ins and typed tools").toEqual([
      ...(policy.builtInTools as string[]),
      ...(policy.typedTools as string[]),
    ]);
    expect(p.adapter.env.PI_CODING_AGENT_DIR).toBe(`${c.facts.runDir}/session/pi-agent`);
    expect(p.adapter.env.PI_OFFLINE, "no network at Pi's startup, besides --offline").toBe("1");
    expect(p.turnEnd, "a Pi turn counts only with the marker written at agent_end").toMatchObject({
      kind: "marker",
      file: `${c.facts.runDir}/turn.done`,
      writtenAt: "agent_end",
    });
    expect(p.adapter.env.MOSAIC_TURN_MARKER, "the extension writes the marker the runner waits for").toBe(
      p.turnEnd.kind === "marker" ? p.turnEnd.file : "",
    );
  }
}

describe("launch plans of the example instances", () => {
  it("the examples cover the issue's cases and every refusal code", () => {
    expect(LAUNCHES.map((c) => c.name)).toEqual(
      expect.arrayContaining(["pi-coder", "claude-coder", "claude-pm", "fallback-to-pi"]),
    );
    expect([...new Set(REFUSING.map((c) => c.refuses))].sort()).toEqual(REFUSALS.map((r) => r.code).sort());
  });

  for (const c of LAUNCHES) {
    it(c.name, async () => {
      const p = planOf(c);
      assertPlanInvariants(c, p);
      const ph = launchPlaceholders(c);
      await matchGolden(
        "launch",
        `${c.name}.route`,
        "txt",
        `route decision: ${c.why}`,
        normalise(renderDecision(p), ph),
      );
      for (const [file, body] of Object.entries(p.bundle)) {
        const g = goldenName(file);
        await matchGolden(`bundle/${c.name}`, g.name, g.ext, `bundle ${file}: ${c.why}`, normalise(body, ph));
      }
      await matchGolden(
        "adapters",
        c.name,
        "txt",
        `adapter argv (one token a line, the message follows "--"), then env (credential values as <set>): ${c.why}`,
        normalise(["# argv", ...renderArgv(p.adapter.argv), "# env", ...renderEnv(p.adapter.env)].join("\n"), ph),
      );
    });
  }

  it("the fallback route records the primary's failure", () => {
    const p = planOf(loadCase("fallback-to-pi"));
    expect([p.route, p.harness, p.thinking]).toEqual(["fallback", "pi", "low"]);
    expect(p.routeReason).toMatch(
      /^fallback: primary route \(claude-code .*\) failed preflight: claude-code: \/usr\/local\/bin\/claude does not exist$/,
    );
    const positive = loadCase("fallback-to-pi");
    positive.facts.binaries["claude-code"] = loadCase("claude-coder").facts.binaries["claude-code"];
    const q = planOf(positive);
    expect([q.route, q.routeReason, q.harness], "with the binary present the primary runs").toEqual([
      "primary",
      "primary",
      "claude-code",
    ]);
  });
});

/** What each refusal's message must say, beside its golden. */
const REFUSAL_INVARIANTS: Record<string, (message: string) => void> = {
  "no-route": (m) => expect(m).toMatch(/^vars: vars\.model not set; /),
  "partial-fallback": (m) =>
    expect(m).toMatch(/^vars\.fallback: vars\.fallback\.model not set while other fallback vars are/),
  "harness-off": (m) => expect(m).toMatch(/^vars\.harness: "pi" is not a switched-on harness module/),
  "harness-refused": (m) => expect(m).toMatch(/^vars\.harness: "codex" is not a harness module \(pi, claude-code\)/),
  "thinking-unsupported": (m) => expect(m).toMatch(/^vars\.thinking: "ultra" is not a level of claude-code /),
  "unknown-model": (m) => expect(m).toMatch(/^vars\.model: "gpt-4o" is not in launch\.models/),
  preflight: (m) => expect(m).toMatch(/^primary route .* failed preflight: /),
  "no-session-credential": (m) => {
    for (const n of credentialVariableNames()) expect(m, `names ${n}`).toContain(n);
    expect(m).toContain("the bus unit's EnvironmentFile");
    expect(m).not.toContain(STAND_IN);
  },
  "sandbox-unavailable": (m) => expect(m).toContain("bwrap: No permissions to create new namespace"),
  "founder-credentials": (m) => {
    expect(m).toContain("GH_TOKEN, SSH_AUTH_SOCK");
    expect(m).not.toContain(STAND_IN);
  },
};

describe("refusals of the example instances", () => {
  for (const c of REFUSING) {
    it(c.name, async () => {
      const d = decide(c);
      expect(d.kind === "refuse" ? d.code : "launch", c.why).toBe(c.refuses);
      if (d.kind !== "refuse") return;
      REFUSAL_INVARIANTS[d.code]!(d.message);
      await matchGolden(
        "launch",
        `${c.name}.refusal`,
        "txt",
        `refusal: ${c.why}`,
        normalise(`${d.code} | ${d.message}`, launchPlaceholders(c)),
      );
    });
  }
});
