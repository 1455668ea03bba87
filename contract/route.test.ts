import { describe, expect, it } from "vitest";
import { decideLaunch, type LaunchDecision } from "../src/core/launch/decide-launch.ts";
import { parseInstance } from "../src/core/launch/instance.ts";
import { harnessNames, loadHarness } from "../src/core/route/loader.ts";
import { REFUSALS } from "../src/core/route/refusals.ts";
import { isVersionAtLeast } from "../src/core/route/versions.ts";
import { FOUNDER_ENV } from "../src/core/session/env.ts";
import { isMosaicError } from "../src/core/errors.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { STAND_IN, loadCase, type LaunchCase } from "./support/launch-cases.ts";
import { FOUNDER_ENV_ORACLE, SEED_CREDENTIAL_SETS } from "./oracles/seed-tables.ts";
import {
  SEED_REFUSAL_CODES,
  SEED_ROUTE_CHECK_ORDER,
  SEED_S0_LINES,
  SEED_THINKING,
  SEED_TOOL_GRANTS,
} from "./oracles/launch-seed-tables.ts";

const decide = (c: LaunchCase): LaunchDecision => decideLaunch(c.instance, c.settings, c.facts, c.env);
const outcome = (c: LaunchCase): string => {
  const d = decide(c);
  return d.kind === "launch" ? `launch ${d.plan.route} ${d.plan.harness}` : d.code;
};

describe("harness modules (seed 003)", () => {
  it("the loader knows pi and claude-code and nothing else", () => {
    expect(harnessNames()).toEqual(["pi", "claude-code"]);
    for (const n of ["codex", "", "__proto__", "toString", "constructor", "Pi"])
      expect(loadHarness(n), n).toBeUndefined();
  });
  it.each(["pi", "claude-code"] as const)("%s: thinking levels and S0 lines are the seed's", (name) => {
    const m = loadHarness(name)!;
    expect(m.name).toBe(name);
    expect({ levels: m.thinkingLevels, required: m.thinkingRequired }).toEqual(SEED_THINKING[name]);
    expect(m.reliesOn).toEqual(SEED_S0_LINES[name]);
  });
  it.each(["pi", "claude-code"] as const)(
    "%s: built-in tools are the tool limit's, and bash only where the limit grants it",
    (name) => {
      const m = loadHarness(name)!;
      const grants = SEED_TOOL_GRANTS[name];
      const names = Object.keys(grants);
      // Every subset of the seven neutral names.
      for (let mask = 0; mask < 1 << names.length; mask++) {
        const limit = names.filter((_, i) => (mask & (1 << i)) !== 0);
        const want = [...new Set(limit.flatMap((n) => grants[n]!))].sort();
        expect([...m.builtInTools(limit)].sort(), `limit [${limit.join(",")}]`).toEqual(want);
      }
      const bash = name === "pi" ? "bash" : "Bash";
      expect(
        m.builtInTools(names.filter((n) => n !== "bash")),
        `${bash} only where the limit grants bash`,
      ).not.toContain(bash);
      expect(m.builtInTools(["bash"]), "positive control").toEqual([bash]);
    },
  );
  it("Claude Code typed tools are mcp__mosaic__<tool>; Pi's keep their names", () => {
    expect(loadHarness("claude-code")!.typedToolName("raise_decision")).toBe("mcp__mosaic__raise_decision");
    expect(loadHarness("pi")!.typedToolName("raise_decision")).toBe("raise_decision");
  });
  it("golden", async () => {
    const lines = harnessNames().flatMap((n) => {
      const m = loadHarness(n)!;
      const paths = { runDir: "<run>", repo: "<repo>", node: "<node>" };
      return [
        `## ${n}`,
        `thinking: ${m.thinkingLevels.join(" ")} (${m.thinkingRequired ? "required" : "optional"})`,
        `providers: ${m.providers.join(" ")}`,
        `versionProbe: ${m.versionProbe("<bin>").join(" ")}`,
        `sandboxMounts: ${m.sandboxMounts.join(" ")}`,
        `builtInTools(all): ${m.builtInTools(["read", "edit", "write", "bash", "grep", "find", "ls"]).join(" ")}`,
        `typedToolName(x): ${m.typedToolName("x")}`,
        `gate: ${m.gate.timeoutSeconds}s, ${m.gate.how}`,
        `bundleFiles: ${m.bundleFiles.join(" ") || "(none beyond the four)"}`,
        `adapterEnv: ${Object.entries(m.adapterEnv(paths))
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`,
        `turnEnd: ${JSON.stringify(m.turnEnd(paths))}`,
        `sessionFiles: ${m.sessionFiles(paths)}`,
        ...m.reliesOn.map((l) => `reliesOn: ${l}`),
      ];
    });
    await matchGolden(
      "route",
      "harness-modules",
      "txt",
      "what each harness module provides (seed 003)",
      lines.join("\n"),
    );
  });
});

describe("refusal codes", () => {
  it("the table holds exactly the issue's codes, each with a why", () => {
    expect(REFUSALS.map((r) => r.code).sort()).toEqual([...SEED_REFUSAL_CODES].sort());
    for (const r of REFUSALS) expect(r.why.length, r.code).toBeGreaterThan(20);
  });
  it("golden", async () => {
    await matchGolden(
      "route",
      "refusal-codes",
      "txt",
      "the launcher's refusal codes in check order, with why",
      ["code | why", ...REFUSALS.map((r) => `${r.code} | ${r.why}`)].join("\n"),
    );
  });
});

describe("route checks", () => {
  it("each route is checked in the issue's order", () => {
    const c = loadCase("claude-coder");
    c.instance.vars = { harness: "codex", model: "gpt-4o", thinking: "ultra" };
    c.settings = { ...c.settings, plugins: { harness: ["pi", "claude-code"] } };
    const seen = [outcome(c)];
    c.settings = { ...c.settings, plugins: { harness: ["pi", "claude-code", "codex"] } };
    seen.push(outcome(c));
    c.instance.vars.harness = "claude-code";
    seen.push(outcome(c));
    c.instance.vars.thinking = "high";
    seen.push(outcome(c));
    c.instance.vars.model = "claude-sonnet-4-5";
    c.facts.binaries["claude-code"].exists = false;
    seen.push(outcome(c));
    expect(seen).toEqual(SEED_ROUTE_CHECK_ORDER);
    c.facts.binaries["claude-code"].exists = true;
    expect(outcome(c), "positive control: all checks pass").toBe("launch primary claude-code");
  });

  it("the fallback is checked too, and its refusal names the fallback's path", () => {
    const c = loadCase("fallback-to-pi");
    c.facts.binaries["claude-code"].exists = true;
    c.instance.vars.fallback!.thinking = "ultra";
    const d = decide(c);
    expect(d.kind === "refuse" && [d.code, d.message]).toEqual([
      "thinking-unsupported",
      `vars.fallback.thinking: "ultra" is not a level of pi (off minimal low medium high xhigh max)`,
    ]);
  });

  it("only a failed preflight falls back", () => {
    const c = loadCase("fallback-to-pi");
    c.instance.vars.model = "gpt-4o";
    expect(outcome(c), "a primary outside launch.models refuses even with a fallback").toBe("unknown-model");
    c.instance.vars.model = "claude-sonnet-4-5";
    expect(outcome(c)).toBe("launch fallback pi");
  });

  it("Pi may leave thinking unset and then gets no --thinking; Claude Code may not", () => {
    const pi = loadCase("pi-coder");
    delete pi.instance.vars.thinking;
    const d = decide(pi);
    expect(d.kind === "launch" && d.plan.adapter.argv.includes("--thinking")).toBe(false);
    expect(d.kind === "launch" && d.plan.adapter.env.MOSAIC_THINKING).toBeUndefined();
    const cc = loadCase("claude-coder");
    delete cc.instance.vars.thinking;
    const r = decide(cc);
    expect(r.kind === "refuse" && [r.code, r.message.split(";")[0]]).toEqual([
      "no-route",
      "vars: vars.thinking not set",
    ]);
  });

  it("Pi needs node 22.19 or newer", () => {
    expect(isVersionAtLeast("22.19.0", "22.19")).toBe(true);
    expect(isVersionAtLeast("v24.21.0", "22.19")).toBe(true);
    expect(isVersionAtLeast("22.18.9", "22.19")).toBe(false);
    expect(isVersionAtLeast("9.99", "22.19")).toBe(false);
    expect(isVersionAtLeast("garbage", "22.19")).toBe(false);
    const c = loadCase("refuse-preflight");
    c.facts.node.version = "22.19.0";
    expect(outcome(c), "positive control: node 22.19.0").toBe("launch primary pi");
  });

  it("MOSAIC_CLAUDE_BIN: unset or empty runs claude from PATH; relative or not executable refuses", () => {
    const c = loadCase("claude-coder");
    for (const v of [undefined, ""]) {
      c.env.MOSAIC_CLAUDE_BIN = v;
      const d = decide(c);
      expect(d.kind === "launch" && d.plan.adapter.argv[0], `MOSAIC_CLAUDE_BIN=${v}`).toBe("claude");
    }
    c.env.MOSAIC_CLAUDE_BIN = "/opt/claude/bin/claude";
    const pinned = decide(c);
    expect(pinned.kind === "launch" && pinned.plan.adapter.argv[0]).toBe("/opt/claude/bin/claude");
    expect(pinned.kind === "launch" && pinned.plan.adapter.env.MOSAIC_CLAUDE_BIN, "the pin reaches the session").toBe(
      "/opt/claude/bin/claude",
    );
    c.env.MOSAIC_CLAUDE_BIN = "claude";
    expect(outcome(c)).toBe("preflight");
    c.env.MOSAIC_CLAUDE_BIN = "/opt/claude/bin/claude";
    c.facts.binaries["claude-code"].executable = false;
    const d = decide(c);
    expect(d.kind === "refuse" && d.message).toMatch(/is not executable$/);
  });
});

describe("session checks", () => {
  it("no-session-credential: each full set alone passes; Pi does not check", () => {
    const c = loadCase("refuse-no-session-credential");
    expect(outcome(c)).toBe("no-session-credential");
    for (const set of SEED_CREDENTIAL_SETS) {
      const ok = loadCase("refuse-no-session-credential");
      delete ok.env.ANTHROPIC_AUTH_TOKEN;
      for (const n of set) ok.env[n] = n.endsWith("_URL") ? "http://127.0.0.1:9" : STAND_IN;
      const d = decide(ok);
      expect(d.kind, set.join("+")).toBe("launch");
      expect(d.kind === "launch" && JSON.parse(d.plan.bundle["policy.json"]!).credentials.set).not.toBeNull();
    }
    const pi = loadCase("pi-coder");
    delete pi.env.ANTHROPIC_API_KEY;
    const d = decide(pi);
    expect(d.kind === "launch" && [d.plan.harness, d.plan.credentialSet]).toEqual(["pi", null]);
  });

  it("sandbox-unavailable carries the probe's line; a passing probe launches", () => {
    const c = loadCase("refuse-sandbox-unavailable");
    const d = decide(c);
    expect(d.kind === "refuse" && d.message).toBe(`the sandbox is unavailable: ${c.facts.sandboxProblem}`);
    c.facts.sandboxProblem = null;
    expect(outcome(c), "positive control").toBe("launch primary pi");
  });

  it("founder-credentials: every FOUNDER_ENV variable stops the launch, even set empty", () => {
    for (const name of new Set([...FOUNDER_ENV.map((f) => f.name), ...FOUNDER_ENV_ORACLE])) {
      const c = loadCase("pi-coder");
      c.env[name] = "";
      const d = decide(c);
      expect(d.kind === "refuse" && [d.code, d.message.includes(name)], name).toEqual(["founder-credentials", true]);
    }
    const c = loadCase("refuse-founder-credentials");
    delete c.env.GH_TOKEN;
    delete c.env.SSH_AUTH_SOCK;
    expect(outcome(c), "positive control: without them it launches").toBe("launch primary pi");
  });
});

/**
 * Every refusal that can apply to either harness, made from each harness's healthy example by one
 * change, so a check that covers one harness only is caught. harness-refused names no harness
 * module, and no-session-credential is Claude Code's alone (Pi's launch without one is above).
 */
const PER_HARNESS_REFUSALS: ReadonlyArray<[code: string, patch: (c: LaunchCase, h: "pi" | "claude-code") => void]> = [
  [
    "partial-fallback",
    (c) => {
      c.instance.vars.fallback = { model: "claude-sonnet-4-5" };
    },
  ],
  [
    "no-route",
    (c) => {
      delete c.instance.vars.model;
    },
  ],
  [
    "harness-off",
    (c, h) => {
      c.settings = { ...c.settings, plugins: { harness: [h === "pi" ? "claude-code" : "pi"] } };
    },
  ],
  // "off" is one of Pi's levels but not Claude Code's; "ultra" is neither's.
  [
    "thinking-unsupported",
    (c, h) => {
      c.instance.vars.thinking = h === "pi" ? "ultra" : "off";
    },
  ],
  [
    "unknown-model",
    (c) => {
      c.instance.vars.model = "gpt-4o";
    },
  ],
  [
    "preflight",
    (c, h) => {
      c.facts.binaries[h].exists = false;
    },
  ],
  [
    "sandbox-unavailable",
    (c) => {
      c.facts.sandboxProblem = "bwrap: No permissions to create new namespace";
    },
  ],
  [
    "founder-credentials",
    (c) => {
      c.env.GH_TOKEN = "";
    },
  ],
];
const HEALTHY = { pi: "pi-coder", "claude-code": "claude-coder" } as const;

describe("each refusal, for both harnesses", () => {
  it("the table covers every code but the two that cannot apply to both", () => {
    expect([...PER_HARNESS_REFUSALS.map(([code]) => code), "harness-refused", "no-session-credential"].sort()).toEqual(
      REFUSALS.map((r) => r.code).sort(),
    );
  });
  const rows = PER_HARNESS_REFUSALS.flatMap(([code, patch]) =>
    (["pi", "claude-code"] as const).map((h) => [h, code, patch] as const),
  );
  it.each(rows)("%s refuses with %s", (h, code, patch) => {
    const c = loadCase(HEALTHY[h]);
    expect(outcome(c), "positive control: the unchanged example launches").toBe(`launch primary ${h}`);
    patch(c, h);
    expect(outcome(c), `${h}: ${code}`).toBe(code);
  });
});

/** Each bad document and the error it must give; the field names the path in the document. */
const BAD_DOCS: ReadonlyArray<[why: string, patch: (d: Record<string, any>) => void]> = [
  ["missing contract", (d) => delete d.contract],
  [
    "a typo in a key",
    (d) => {
      d.vars.thinkng = "high";
    },
  ],
  [
    "a tool-limit name no harness has",
    (d) => {
      d.limits.tools = ["read", "Bash"];
    },
  ],
  [
    "a relative workspace",
    (d) => {
      d.workspace = "workspaces/acme";
    },
  ],
  [
    "a workspace with a space",
    (d) => {
      d.workspace = "/srv/my ws";
    },
  ],
  [
    "a workspace with ..",
    (d) => {
      d.workspace = "/srv/ws/../etc";
    },
  ],
  [
    "a fallback with an unknown key",
    (d) => {
      d.vars.fallback = { harness: "pi", modle: "x" };
    },
  ],
  [
    "an empty thinking var",
    (d) => {
      d.vars.thinking = "";
    },
  ],
  [
    "a cross-role action that is not a string",
    (d) => {
      d.actions.crossRole = [3];
    },
  ],
  [
    "a network mode the proxy does not know",
    (d) => {
      d.network = "open";
    },
  ],
];

describe("resolved instance schema", () => {
  const base = () => structuredClone(loadCase("claude-coder").instance) as Record<string, any>;
  it("errors name the path in the document", async () => {
    const lines: string[] = [];
    for (const [why, patch] of BAD_DOCS) {
      const doc = base();
      patch(doc);
      let err: unknown;
      try {
        parseInstance(doc);
      } catch (e) {
        err = e;
      }
      expect(isMosaicError(err), why).toBe(true);
      const e = err as { code: string; field: string; message: string };
      expect(e.field, why).not.toBe("(document)");
      lines.push(`${why} → ${e.code} | ${e.message}`);
    }
    expect(parseInstance(base()), "positive control: the unpatched document parses").toEqual(base());
    await matchGolden(
      "launch",
      "spec-errors",
      "txt",
      "resolved-instance schema errors: each names the path in the document",
      lines.join("\n"),
    );
  });
});

describe("adapter guard", () => {
  it("the Claude Code command refuses to build without a thinking level for --effort", async () => {
    const { claudeCommand } = await import("../src/core/adapters/command.ts");
    const c = loadCase("claude-coder");
    const route = {
      harness: "claude-code" as const,
      module: loadHarness("claude-code")!,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      thinking: null,
    };
    const inp = {
      route,
      paths: { runDir: c.facts.runDir, repo: c.facts.repo, node: c.facts.node.path },
      workspace: c.instance.workspace,
      toolLimit: ["read"],
      typedTools: [],
      hostEnv: c.env,
      credentialSet: "api-key",
    };
    let err: unknown;
    try {
      claudeCommand(inp);
    } catch (e) {
      err = e;
    }
    expect(isMosaicError(err) && err.code).toBe("no-effort");
    expect(claudeCommand({ ...inp, route: { ...route, thinking: "low" } }).argv, "positive control").toContain(
      "--effort",
    );
  });
});
