// The edges of planSession, the adapters' commands, sessionExit and canonicalJson the generated
// sweep found untested: the fake adapter's session, each harness's adapter file and packages, an
// adapter command that cannot run, a route without thinking, no exit code at all, and JSON nulls.
import { describe, expect, it } from "vitest";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { planSession, RUNNER_ENTRY, type SessionInputs } from "../src/core/session/plan-session.ts";
import { sessionExit } from "../src/core/session/exit.ts";
import { claudeCommand, type AdapterInput } from "../src/core/adapters/command.ts";
import type { MosaicError } from "../src/core/errors.ts";
import { canonicalJson } from "../src/core/bundle/digest.ts";
import { loadHarness } from "../src/core/route/loader.ts";
import { planRunnerBounds } from "../src/core/runner/bounds.ts";
import { HOST_LAYOUTS, FIXTURE_REPO } from "../src/conformance/worlds/host-fixtures.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import { loadCase, type LaunchCase } from "./support/launch-cases.ts";

const FACTS = HOST_LAYOUTS["merged-usr"]!.facts;
const HOST_ENV = { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", EDITOR: "vi", ANTHROPIC_API_KEY: "stand-in-value" };

function launchPlan(name: string, edit: (c: LaunchCase) => void = () => {}) {
  const c = loadCase(name);
  edit(c);
  const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
  if (d.kind !== "launch") throw new Error(`${name}: expected a launch, got ${d.code}`);
  return { c, plan: d.plan };
}

function inputs(
  name: string,
  over: Partial<SessionInputs> = {},
  edit: (c: LaunchCase) => void = () => {},
): SessionInputs {
  const { c, plan } = launchPlan(name, edit);
  return {
    plan,
    instance: c.instance,
    facts: FACTS,
    fs: memoryView({}),
    repo: FIXTURE_REPO,
    runDir: "/data/runs/r1",
    brokerSocket: "/data/broker.sock",
    launchSocket: "/data/launch.sock",
    runnerFiles: ["/srv/mosaic/src/z.ts", `${FIXTURE_REPO}/${RUNNER_ENTRY}`, "/srv/mosaic/src/a.ts"],
    packages: ["/srv/mosaic/node_modules/zod", "/srv/mosaic/node_modules/@modelcontextprotocol/sdk"],
    adapter: { kind: "harness" },
    hostEnv: HOST_ENV,
    stateDir: "/srv/mosaic/.scratch/state",
    launchedAt: { hostPid: 4242, now: 1_700_000_000_000 },
    ...over,
  };
}

const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    const err = e as MosaicError;
    return { code: err.code, field: err.field, message: err.message };
  }
  return "no throw";
};

describe("planSession: the sandbox spec per harness", () => {
  const RUNNER_FILES = ["/srv/mosaic/src/a.ts", `${FIXTURE_REPO}/${RUNNER_ENTRY}`, "/srv/mosaic/src/z.ts"];
  it("Pi: the adapter file is the pi binary node runs, no packages, runner files sorted once each", () => {
    const p = planSession(inputs("pi-coder"));
    expect(p.spec).toEqual({
      harness: "pi",
      repo: FIXTURE_REPO,
      runnerFiles: RUNNER_FILES,
      runner: `${FIXTURE_REPO}/${RUNNER_ENTRY}`,
      adapter: `${FIXTURE_REPO}/node_modules/.bin/pi`,
      brokerSocket: "/data/broker.sock",
      launchSocket: "/data/launch.sock",
      mayLaunch: false,
      workspace: "/srv/mosaic-data/workspaces/acme/coder",
      runDir: "/data/runs/r1",
      packages: [],
      etcIdentity: {
        passwd: "/srv/mosaic/.scratch/state/identity/acme-coder-0001/passwd",
        group: "/srv/mosaic/.scratch/state/identity/acme-coder-0001/group",
      },
    });
  });
  it("Claude Code: the adapter file is the claude binary, and its packages sorted", () => {
    const p = planSession(inputs("claude-coder"));
    expect(p.spec.adapter).toBe("/usr/local/bin/claude");
    expect(p.spec.packages).toEqual([
      "/srv/mosaic/node_modules/@modelcontextprotocol/sdk",
      "/srv/mosaic/node_modules/zod",
    ]);
    expect(p.spec.runnerFiles).toEqual(RUNNER_FILES);
  });
  it("a role on network none gets no model socket; model-only gets one", () => {
    const none = planSession(inputs("pi-coder", {}, (c) => (c.instance.network = "none")));
    expect(none.sessionFile.model).toBeNull();
    expect(planSession(inputs("pi-coder")).sessionFile.model).toEqual({
      port: expect.any(Number),
      socket: "/data/runs/r1/sock/model.sock",
    });
  });
});

describe("planSession: the harness command it runs", () => {
  const withArgv = (inp: SessionInputs, argv: string[]): SessionInputs => ({
    ...inp,
    plan: { ...inp.plan, adapter: { ...inp.plan.adapter, argv } },
  });
  it("Claude Code's bare claude runs from the path the host resolved", () => {
    const inp = inputs("claude-coder");
    const p = planSession(withArgv(inp, ["claude", "-p"]));
    expect(p.sessionFile.adapter.argv).toEqual(["/usr/local/bin/claude", "-p"]);
    expect(p.spec.adapter).toBe("/usr/local/bin/claude");
  });
  it("a bare claude the host resolved no binary for is refused", () => {
    const inp = { ...inputs("claude-coder"), facts: { ...FACTS, claude: undefined } };
    expect(thrown(() => planSession(withArgv(inp, ["claude", "-p"])))).toEqual({
      code: "adapter-not-found",
      field: "adapter.argv[0]",
      message:
        'adapter.argv[0]: "claude" is not an absolute path and the host resolved no Claude Code binary (set MOSAIC_CLAUDE_BIN)',
    });
  });
  it("a relative command for Pi is refused even where the host resolved a Claude Code binary", () => {
    expect(thrown(() => planSession(withArgv(inputs("pi-coder"), ["node", "pi"])))).toEqual({
      code: "adapter-not-found",
      field: "adapter.argv[0]",
      message:
        'adapter.argv[0]: "node" is not an absolute path and the host resolved no Claude Code binary (set MOSAIC_CLAUDE_BIN)',
    });
  });
  it("an empty command is refused", () => {
    expect(thrown(() => planSession(withArgv(inputs("pi-coder"), [])))).toEqual({
      code: "adapter-empty",
      field: "adapter.argv",
      message: "adapter.argv: the planned harness command is empty",
    });
  });
});

describe("planSession: the fake adapter", () => {
  it("runs the script with sh from the run directory, judged by its exit, with no tripwire", () => {
    const p = planSession(inputs("pi-coder", { adapter: { kind: "fake", script: "/data/fake.sh" } }));
    expect(p.spec.adapter).toBe("/data/fake.sh");
    const { adapter, turnEnd, tripwire, bounds } = p.sessionFile;
    expect({ adapter, turnEnd, tripwire }).toEqual({
      adapter: {
        argv: ["/bin/sh", "/data/fake.sh"],
        env: {
          LANG: "C.UTF-8",
          PATH: "/usr/bin:/bin",
          MOSAIC_WORKSPACE: "/srv/mosaic-data/workspaces/acme/coder",
          HOME: "/data/runs/r1/home",
          TMPDIR: "/tmp",
        },
        cwd: "/data/runs/r1",
      },
      turnEnd: { kind: "exit", why: "the fake adapter's exit status is the turn's" },
      tripwire: null,
    });
    // A fake turn's stdout is its reply, not a stream: it gets the exit kind's bound, not Pi's.
    expect(bounds).toEqual(planRunnerBounds({ kind: "exit" }));
    expect(bounds).not.toEqual(planRunnerBounds({ kind: "marker" }));
  });
  it("needs no harness command at all", () => {
    const inp = inputs("claude-coder", { adapter: { kind: "fake", script: "/data/fake.sh" } });
    const p = planSession({ ...inp, plan: { ...inp.plan, adapter: { ...inp.plan.adapter, argv: [] } } });
    expect(p.sessionFile.adapter.argv).toEqual(["/bin/sh", "/data/fake.sh"]);
  });
});

describe("claudeCommand without a thinking level", () => {
  it("is refused: Claude Code needs --effort", () => {
    const route = {
      harness: "claude-code" as const,
      module: loadHarness("claude-code")!,
      provider: "anthropic",
      model: "m1",
    };
    const inp: AdapterInput = {
      route: { ...route, thinking: null },
      paths: { runDir: "/data/runs/r1", repo: FIXTURE_REPO, node: "/usr/bin/node" },
      workspace: "/ws",
      toolLimit: ["read"],
      typedTools: [],
      hostEnv: {},
      credentialSet: null,
    };
    expect(thrown(() => claudeCommand(inp))).toEqual({
      code: "no-effort",
      field: "vars.thinking",
      message: "vars.thinking: Claude Code needs a thinking level for --effort",
    });
  });
});

describe("Pi's command without a thinking level", () => {
  it("passes no --thinking, leaving Pi's own default", () => {
    const { plan } = launchPlan("pi-coder", (c) => delete c.instance.vars.thinking);
    expect(plan.thinking).toBeNull();
    const argv = plan.adapter.argv;
    expect(argv.slice(argv.indexOf("--model"), argv.indexOf("--no-session"))).toEqual(["--model", "claude-sonnet-4-5"]);
  });
});

describe("sessionExit with neither a code nor a signal", () => {
  it("is exit code -1", () => {
    expect(sessionExit(null, null)).toEqual({ kind: "code", code: -1 });
  });
});

describe("canonicalJson", () => {
  it("keeps nulls as null at every depth, with keys sorted", () => {
    expect(canonicalJson({ b: null, a: [{ d: 1, c: null }, null] })).toBe('{"a":[{"c":null,"d":1},null],"b":null}');
  });
});
