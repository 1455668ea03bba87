import { constants } from "node:os";
import { describe, expect, it } from "vitest";
import { ENV_ALLOW, FOUNDER_ENV, founderVariables, sessionEnv } from "../src/core/session/env.ts";
import {
  SESSION_CREDENTIALS,
  credentialVariableNames,
  hasSessionCredential,
  presentCredentialSet,
} from "../src/core/session/credentials.ts";
import { RUNNER_EXITS, launchEndReason, sessionExit } from "../src/core/session/exit.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { loadBaseline } from "../src/conformance/baselines/baselines.ts";
import { loadEnvNamesBaseline } from "../src/conformance/baselines/claude-env-names.ts";
import {
  FOUNDER_ENV_ORACLE,
  MAY_REACH_SESSION,
  NEVER_REACH_SESSION,
  SEED_CREDENTIAL_SETS,
  SEED_FOUNDER_ENV,
  SEED_RUNNER_EXITS,
  SEED_SESSION_EXIT,
} from "./oracles/seed-tables.ts";

const STAND_IN = "stand-in-value";

describe("runner exits (seed 000)", () => {
  it("maps each seed code to its launch end reason", () => {
    expect(RUNNER_EXITS.map((e) => [e.code, e.endReason])).toEqual(SEED_RUNNER_EXITS);
    for (const [code, reason] of SEED_RUNNER_EXITS) expect(launchEndReason(code), `exit ${code}`).toBe(reason);
  });
  it("an unknown code is a failure", () => {
    expect(launchEndReason(1)).toBe("failed");
    expect(launchEndReason(99)).toBe("failed");
  });
  it("golden", async () => {
    await matchGolden(
      "session",
      "runner-exits",
      "txt",
      "runner exit code → launch end reason (seed 000)",
      ["code | meaning | end reason", ...RUNNER_EXITS.map((e) => `${e.code} | ${e.meaning} | ${e.endReason}`)].join(
        "\n",
      ),
    );
  });
});

describe("sessionExit (seed 002)", () => {
  it.each(SEED_SESSION_EXIT)("exit %i", (code, expected) => {
    expect(sessionExit(code, null)).toEqual(expected);
  });
  it("a signal the host saw directly is a kill", () => {
    expect(sessionExit(null, "SIGKILL")).toEqual({ kind: "signal", signal: "SIGKILL", ending: "killed" });
  });
  it("128+n maps back to signal n across the range, and only there", () => {
    expect(sessionExit(129, null)).toEqual({ kind: "signal", signal: "SIGHUP", ending: "killed" });
    expect(sessionExit(159, null)).toEqual({ kind: "signal", signal: "SIGSYS", ending: "killed" });
    expect(sessionExit(160, null)).toEqual({ kind: "code", code: 160 });
    expect(sessionExit(255, null)).toEqual({ kind: "code", code: 255 });
  });
  it("128+n is signal n for every Linux signal, by node's own signal numbers", () => {
    for (let n = 1; n <= 31; n++) {
      const names = Object.entries(constants.signals)
        .filter(([, v]) => v === n)
        .map(([k]) => k);
      expect(names.length, `node knows signal ${n}`).toBeGreaterThan(0);
      const got = sessionExit(128 + n, null);
      expect(
        got.kind === "signal" && names.includes(got.signal) && got.ending,
        `exit ${128 + n} is ${names.join("/")}, killed`,
      ).toBe("killed");
    }
  });
  it("golden", async () => {
    const codes = [0, 1, 2, 20, 21, 22, 23, 128, 129, 130, 137, 143, 159, 160, 255];
    await matchGolden(
      "session",
      "session-exit",
      "txt",
      "bwrap exit code → how the session ended",
      codes.map((c) => `${c} → ${JSON.stringify(sessionExit(c, null))}`).join("\n"),
    );
  });
});

describe("session credentials (seed 002)", () => {
  it("the sets are the seed's", () => {
    expect(SESSION_CREDENTIALS.map((s) => s.names)).toEqual(SEED_CREDENTIAL_SETS);
  });
  it.each(SEED_CREDENTIAL_SETS.map((s) => [s.join("+"), s] as const))("%s alone passes", (_n, set) => {
    expect(hasSessionCredential(Object.fromEntries(set.map((n) => [n, STAND_IN])))).toBe(true);
  });
  it.each([
    ["nothing", {}],
    ["a proxy token without its URL", { ANTHROPIC_AUTH_TOKEN: STAND_IN }],
    ["a proxy URL without its token", { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }],
    ["an empty API key", { ANTHROPIC_API_KEY: "" }],
    ["an empty OAuth token", { CLAUDE_CODE_OAUTH_TOKEN: "" }],
    ["a proxy token with an empty URL", { ANTHROPIC_AUTH_TOKEN: STAND_IN, ANTHROPIC_BASE_URL: "" }],
    ["an unrelated token", { OPENAI_API_KEY: STAND_IN }],
  ])("%s fails", (_n, env) => {
    expect(hasSessionCredential(env)).toBe(false);
  });
  it("reports which set, never a value", () => {
    expect(presentCredentialSet({ ANTHROPIC_AUTH_TOKEN: STAND_IN, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" })).toBe(
      "proxy",
    );
  });
  it("no credential variable reaches the session: the host's proxy adds the real one", () => {
    const allowed = new Set(ENV_ALLOW.map((e) => e.name));
    expect(credentialVariableNames().length, "positive control: the sets name variables").toBeGreaterThan(3);
    for (const n of credentialVariableNames()) expect(allowed.has(n), `${n} is on ENV_ALLOW`).toBe(false);
    const host = Object.fromEntries(credentialVariableNames().map((n) => [n, STAND_IN]));
    expect(sessionEnv({ ...host, PATH: "/usr/bin" }), "sessionEnv passes none of them").toEqual({ PATH: "/usr/bin" });
  });
  it("golden", async () => {
    await matchGolden(
      "session",
      "credentials",
      "txt",
      "SESSION_CREDENTIALS: a set counts only when every variable is set and non-empty",
      [
        "set | variables | why",
        ...SESSION_CREDENTIALS.map((s) => `${s.label} | ${s.names.join(" + ")} | ${s.why}`),
      ].join("\n"),
    );
  });
});

describe("session environment", () => {
  const founderHost = Object.fromEntries(FOUNDER_ENV.map((e) => [e.name, STAND_IN]));
  const host = {
    ...founderHost,
    PATH: "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: "/home/founder",
    TMPDIR: "/tmp",
    ANTHROPIC_API_KEY: STAND_IN,
    EDITOR: "vi",
  };

  it("FOUNDER_ENV holds the seed's variables", () => {
    const names = FOUNDER_ENV.map((e) => e.name);
    for (const n of SEED_FOUNDER_ENV) expect(names, n).toContain(n);
  });
  it("FOUNDER_ENV holds every name of the hand-typed list, and sessionEnv drops each", () => {
    const names = FOUNDER_ENV.map((e) => e.name);
    for (const n of FOUNDER_ENV_ORACLE) {
      expect(names, `${n} is a founder variable`).toContain(n);
      expect(founderVariables({ PATH: "/usr/bin", [n]: "" }), `${n} set empty is found`).toEqual([n]);
      expect(sessionEnv({ PATH: "/usr/bin", [n]: STAND_IN }), `${n} does not reach the session`).toEqual({
        PATH: "/usr/bin",
      });
    }
  });
  it("no founder variable is allowed through", () => {
    const allowed = new Set(ENV_ALLOW.map((e) => e.name));
    for (const e of FOUNDER_ENV) expect(allowed.has(e.name), e.name).toBe(false);
  });
  it("sessionEnv keeps only allowed variables, and never HOME or TMPDIR", () => {
    expect(sessionEnv(host)).toEqual({ LANG: "C.UTF-8", PATH: "/usr/bin:/bin" });
  });
  it("founderVariables finds every founder variable, even an empty one", () => {
    expect(founderVariables(founderHost)).toEqual(FOUNDER_ENV.map((e) => e.name));
    expect(founderVariables({ GH_TOKEN: "" })).toEqual(["GH_TOKEN"]);
    expect(founderVariables({ PATH: "/usr/bin" })).toEqual([]);
  });
  it("goldens", async () => {
    await matchGolden(
      "session",
      "env-allow",
      "txt",
      "ENV_ALLOW: the only host variables a session gets",
      ["variable | why", ...ENV_ALLOW.map((e) => `${e.name} | ${e.why}`)].join("\n"),
    );
    await matchGolden(
      "session",
      "founder-env",
      "txt",
      "FOUNDER_ENV: variables that must never reach a session",
      ["variable | why", ...FOUNDER_ENV.map((e) => `${e.name} | ${e.why}`)].join("\n"),
    );
  });
});

describe("session environment against names that look allowed", () => {
  const allowed = () => new Set(ENV_ALLOW.map((e) => e.name));

  it("ENV_ALLOW holds no name beyond the hand-typed most that may reach a session", () => {
    for (const e of ENV_ALLOW) expect(MAY_REACH_SESSION, `${e.name} is on ENV_ALLOW`).toContain(e.name);
  });
  it("no name of the hand-typed never list is on ENV_ALLOW or passes sessionEnv", () => {
    for (const n of NEVER_REACH_SESSION) expect(allowed().has(n), `${JSON.stringify(n)} is on ENV_ALLOW`).toBe(false);
    const host = Object.fromEntries(NEVER_REACH_SESSION.map((n) => [n, STAND_IN]));
    expect(sessionEnv(host), "sessionEnv passes none of them").toEqual({});
    expect(sessionEnv({ ...host, PATH: "/usr/bin" }), "positive control: PATH itself passes").toEqual({
      PATH: "/usr/bin",
    });
  });
  it("every ANTHROPIC_* and CLAUDE_* name in Claude Code, and every twin of an allowed name, passes only when ENV_ALLOW names it exactly", () => {
    const baseline = loadEnvNamesBaseline();
    expect(baseline.version, "read off the pinned Claude Code").toBe(loadBaseline("claude-code")!.version);
    expect(baseline.names.length, "names read off the binary").toBeGreaterThan(500);
    const twins = ENV_ALLOW.flatMap(({ name }) => [
      name.toLowerCase(),
      `${name}_`,
      `_${name}`,
      `${name}2`,
      `${name}_FILE`,
      `${name} `,
      ` ${name}`,
      `MOSAIC_${name}`,
    ]);
    const candidates = [
      ...new Set([...baseline.names, ...twins, ...NEVER_REACH_SESSION, ...ENV_ALLOW.map((e) => e.name)]),
    ];
    const passed = Object.keys(sessionEnv(Object.fromEntries(candidates.map((n) => [n, STAND_IN])))).sort();
    expect(passed, "only the exact names of ENV_ALLOW").toEqual(candidates.filter((n) => allowed().has(n)).sort());
    expect(passed.length, "positive control: every ENV_ALLOW name passes").toBe(ENV_ALLOW.length);
  });
});
