// The edges of the route choice, the harness preflights, version compare, and instance parsing the
// generated sweep found untested: each refusal's exact message where lists are empty or long, a
// binary that does not run, versions that are not plain numbers, and a version the probe never printed.
import { describe, expect, it } from "vitest";
import { chooseRoute } from "../src/core/route/choose-route.ts";
import { loadHarness } from "../src/core/route/loader.ts";
import { isVersionAtLeast } from "../src/core/route/versions.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { parseInstance } from "../src/core/launch/instance.ts";
import { isMosaicError } from "../src/core/errors.ts";
import type { Harness } from "../src/core/sandbox/types.ts";
import { loadCase } from "./support/launch-cases.ts";

const pi = loadHarness("pi")!;
const claude = loadHarness("claude-code")!;
const SETTINGS = { launch: { models: ["m1", "m2"] }, plugins: { harness: ["pi", "claude-code"] } };
const runs = (path: string, over = {}) => ({
  binary: { path, exists: true, executable: true, runs: true, version: "1.0", ...over },
  nodeVersion: "24.21.0",
  claudeBinEnv: undefined,
});
const healthy = () => runs("/bin/h");
const NO_ROUTE_TAIL = "not set; a session's route comes only from the instance's harness, model and thinking vars";

describe("chooseRoute: the whole choice", () => {
  it("a healthy primary is the route, named primary", () => {
    expect(chooseRoute({ harness: "pi", model: "m1", thinking: "low" }, SETTINGS, healthy)).toEqual({
      kind: "route",
      route: { harness: "pi", module: pi, provider: "anthropic", model: "m1", thinking: "low" },
      which: "primary",
      reason: "primary",
    });
  });
  it("a primary that fails preflight falls back, and the reason carries the primary's failure", () => {
    const facts = (h: Harness) => (h === "pi" ? runs("/bin/pi", { exists: false }) : healthy());
    expect(
      chooseRoute(
        { harness: "pi", model: "m1", fallback: { harness: "claude-code", model: "m2", thinking: "high" } },
        SETTINGS,
        facts,
      ),
    ).toEqual({
      kind: "route",
      route: { harness: "claude-code", module: claude, provider: "anthropic", model: "m2", thinking: "high" },
      which: "fallback",
      reason: "fallback: primary route (pi m1 thinking unset) failed preflight: pi: /bin/pi does not exist",
    });
  });
  it("a Pi route without thinking that fails preflight says its thinking is unset", () => {
    const facts = () => runs("/bin/pi", { exists: false });
    expect(chooseRoute({ harness: "pi", model: "m1" }, SETTINGS, facts)).toEqual({
      kind: "refuse",
      code: "preflight",
      message: "primary route (pi m1 thinking unset) failed preflight: pi: /bin/pi does not exist",
    });
  });
});

describe("chooseRoute: what counts as set", () => {
  it("an empty var is not set: each empty one is named, comma-separated", () => {
    expect(chooseRoute({ harness: "", model: "", thinking: "" }, SETTINGS, healthy)).toEqual({
      kind: "refuse",
      code: "no-route",
      message: `vars: vars.harness, vars.model, vars.thinking ${NO_ROUTE_TAIL}`,
    });
    expect(chooseRoute({ harness: "pi", model: "" }, SETTINGS, healthy)).toEqual({
      kind: "refuse",
      code: "no-route",
      message: `vars: vars.model ${NO_ROUTE_TAIL}`,
    });
  });
  it("an unknown harness without thinking lacks thinking: no module says thinking is optional", () => {
    expect(chooseRoute({ harness: "codex", model: "m1" }, SETTINGS, healthy)).toEqual({
      kind: "refuse",
      code: "no-route",
      message: `vars: vars.thinking ${NO_ROUTE_TAIL}`,
    });
  });
  it("a fallback with only its harness set names both missing vars", () => {
    expect(
      chooseRoute({ harness: "pi", model: "m1", fallback: { harness: "claude-code" } }, SETTINGS, healthy),
    ).toEqual({
      kind: "refuse",
      code: "partial-fallback",
      message:
        "vars.fallback: vars.fallback.model, vars.fallback.thinking not set while other fallback vars are; set the fallback's harness, model and thinking together, or none",
    });
  });
});

describe("chooseRoute: the settings' lists in a refusal", () => {
  const route = { harness: "pi", model: "m1", thinking: "low" };
  it("harness-off lists the switched-on modules comma-separated, or none", () => {
    expect(chooseRoute(route, { ...SETTINGS, plugins: { harness: ["claude-code", "other"] } }, healthy)).toEqual({
      kind: "refuse",
      code: "harness-off",
      message: 'vars.harness: "pi" is not a switched-on harness module (plugins.harness: claude-code, other)',
    });
    expect(chooseRoute(route, { ...SETTINGS, plugins: { harness: [] } }, healthy)).toEqual({
      kind: "refuse",
      code: "harness-off",
      message: 'vars.harness: "pi" is not a switched-on harness module (plugins.harness: none)',
    });
  });
  it("unknown-model lists launch.models, or none", () => {
    expect(chooseRoute(route, { ...SETTINGS, launch: { models: [] } }, healthy)).toEqual({
      kind: "refuse",
      code: "unknown-model",
      message: 'vars.model: "m1" is not in launch.models (none)',
    });
  });
});

describe("preflight: a binary that exists but whose --version did not run", () => {
  it("Pi refuses it", () => {
    expect(pi.preflight(runs("/opt/pi", { runs: false, version: null }))).toEqual({
      ok: false,
      why: "pi: /opt/pi --version did not run",
    });
  });
  it("Claude Code refuses it", () => {
    expect(claude.preflight(runs("/opt/claude", { runs: false, version: null }))).toEqual({
      ok: false,
      why: "claude-code: /opt/claude --version did not run",
    });
  });
});

describe("Pi's built-in tools", () => {
  it("a name that is not a neutral tool-limit name grants nothing", () => {
    expect(pi.builtInTools(["read", "telnet", "ls"])).toEqual(["read", "ls"]);
  });
});

describe("isVersionAtLeast", () => {
  it("a part shorter than the minimum's counts its missing parts as 0", () => {
    expect(isVersionAtLeast("22", "22.19")).toBe(false);
    expect(isVersionAtLeast("22.19", "22.19.1")).toBe(false);
    expect(isVersionAtLeast("22.19.0", "22.19")).toBe(true);
  });
  it("a version with any part that is not a number is not at least anything", () => {
    expect(isVersionAtLeast("24.x", "22.19")).toBe(false);
    expect(isVersionAtLeast("24..1", "22.19")).toBe(false);
  });
  it("only a leading v is stripped; a v inside a part ends that part's number", () => {
    expect(isVersionAtLeast("v22.19.0", "22.19")).toBe(true);
    // parseInt("1v9") is 1: this is 22.1, not 22.19.
    expect(isVersionAtLeast("22.1v9", "22.19")).toBe(false);
  });
});

describe("decideLaunch: a harness version the probe never printed", () => {
  it("is recorded as unknown, in the plan and the bundle's manifest", () => {
    const c = loadCase("pi-coder");
    c.facts.binaries.pi = { ...c.facts.binaries.pi, version: null };
    const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
    expect(d.kind).toBe("launch");
    if (d.kind !== "launch") throw new Error(`pi-coder: expected a launch, got ${d.code}`);
    expect(d.plan.harnessVersion).toBe("unknown");
    expect(JSON.parse(d.plan.bundle["manifest.json"]!).harnessVersion).toBe("unknown");
  });
});

describe("parseInstance: an unknown key", () => {
  it("is a bad field named by the key, even when the key is spelled undefined", () => {
    const doc = { ...loadCase("pi-coder").instance, undefined: 1 };
    let err: unknown;
    try {
      parseInstance(doc);
    } catch (e) {
      err = e;
    }
    expect(isMosaicError(err)).toBe(true);
    if (!isMosaicError(err)) throw new Error("parseInstance: expected a MosaicError");
    expect({ code: err.code, field: err.field, message: err.message }).toEqual({
      code: "bad-field",
      field: "undefined",
      message: "undefined: not a field of the resolved instance (a typo?)",
    });
  });
});
