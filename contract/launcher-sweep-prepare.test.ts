// The launcher's request handling, fast, in the checkout stand-in of support/launcher-sweep-world.ts.
// What a request leaves out takes its default (the harness's own adapter, the runner's timings, the
// host's environment read once), what it gives is carried into the plan, and launch() hands a ready
// plan to start().
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ADAPTER } from "../src/conformance/worlds/runtime-world.ts";
import { upstreamUrl } from "../src/core/network/placeholder.ts";
import { RUNNER_DEFAULTS } from "../src/core/runner/session-file.ts";
import { launchEndReason } from "../src/core/session/exit.ts";
import { RUNNER_ENTRY } from "../src/core/session/plan-session.ts";
import { launch, sessionRunnerFiles } from "../src/host/launcher.ts";
import { MCP_SERVER_PACKAGES } from "../src/host/mcp-packages.ts";
import { type LauncherWorld, makeLauncherWorld } from "./support/launcher-sweep-world.ts";

let lw: LauncherWorld;
let repo = "";
beforeAll(async () => {
  lw = await makeLauncherWorld("lsprep");
  repo = lw.repo;
});
afterAll(async () => {
  await lw?.close();
});
const request = (example: string, name: string, extra = {}) => lw.request(example, name, extra);
const ready = (req: Parameters<LauncherWorld["ready"]>[0]) => lw.ready(req);

const runnerFiles = (harness: "pi" | "claude-code", ...more: string[]) =>
  [...new Set([join(repo, RUNNER_ENTRY), ...sessionRunnerFiles(repo, harness), ...more])].sort();

describe("prepareLaunch() fills in what a request leaves out", () => {
  it("no adapter: the harness's own command; no timings: the runner's defaults; the host's environment as given", () => {
    const { req } = request("pi-coder", "lp-harness", { adapter: undefined, timings: undefined });
    const p = ready(req);
    const f = p.session.sessionFile;
    expect(f.adapter.argv[1], "Pi's own command, not the fake adapter").toBe(join(repo, "node_modules", ".bin", "pi"));
    expect(f.turnEnd.kind, "a Pi turn ends at its marker").toBe("marker");
    expect(p.session.spec.adapter).toBe(join(repo, "node_modules", ".bin", "pi"));
    expect(p.session.spec.runnerFiles, "the runner's files and nothing else").toEqual(runnerFiles("pi"));
    expect({
      turnTimeoutSeconds: f.turnTimeoutSeconds,
      brokerRetries: f.brokerRetries,
      pollMs: f.pollMs,
      brokerTimeoutSeconds: f.brokerTimeoutSeconds,
    }).toEqual({
      turnTimeoutSeconds: RUNNER_DEFAULTS.turnTimeoutSeconds,
      brokerRetries: RUNNER_DEFAULTS.brokerRetries,
      pollMs: RUNNER_DEFAULTS.pollMs,
      brokerTimeoutSeconds: RUNNER_DEFAULTS.brokerTimeoutSeconds,
    });
    // The host's facts are read from the request's environment, not the process's.
    expect(p.facts.home).toBe(lw.w.hostEnv.HOME);
    expect(p.facts.claude?.path).toBe(join(repo, "claude"));
  });

  it("a fake adapter: its script is one of the runner's files, besides the runner's own", () => {
    const { req } = request("pi-coder", "lp-fake");
    const p = ready(req);
    expect(p.session.sessionFile.adapter.argv).toEqual(["/bin/sh", FAKE_ADAPTER]);
    expect(p.session.spec.runnerFiles).toEqual(runnerFiles("pi", FAKE_ADAPTER));
  });

  it("a Claude Code plan binds the MCP server's packages from the request's checkout", () => {
    const { req } = request("claude-coder", "lp-claude");
    const p = ready(req);
    expect(p.launch.harness).toBe("claude-code");
    expect(p.session.spec.packages).toEqual(MCP_SERVER_PACKAGES.map((m) => join(repo, "node_modules", m.name)).sort());
    expect(p.session.spec.runnerFiles).toEqual(runnerFiles("claude-code", FAKE_ADAPTER));
  });
});

describe("launch() starts a ready plan", () => {
  it("a ready plan comes back launched: bwrap from the session's PATH runs, reads the capability, and its exit ends the session", async () => {
    const { req, issued, ended } = request("pi-coder", "lp-launch");
    const r = await launch(req);
    expect(r.kind).toBe("launched");
    if (r.kind !== "launched") return;
    expect(r.session.run).toBe(req.instance.run);
    expect(r.session.runDir).toBe(req.runDir);
    expect(r.session.pid).toBeGreaterThan(0);
    const end = await r.session.exited;
    expect(end.end).toEqual({ kind: "code", code: 7 });
    expect(end.reason).toBe(launchEndReason(7));
    expect(end.stderr).toBe(`bwrap stand-in: ${JSON.stringify({ cap: "cap-lp-launch" })}\n`);
    expect(issued).toEqual([{ run: req.instance.run, instance: req.instance.instance }]);
    expect(ended).toEqual([req.instance.run]);
  });
});

describe("prepareLaunch() carries the request's model upstream", () => {
  it("a request's model upstream is where its session's proxy sends model calls; without one, the host's", () => {
    const given = ready(request("pi-coder", "lp-up", { modelUpstream: "http://127.0.0.1:9/given" }).req);
    expect(given.session.modelProxy?.upstream).toBe("http://127.0.0.1:9/given");
    const { req } = request("pi-coder", "lp-noup", { modelUpstream: undefined });
    expect(ready(req).session.modelProxy?.upstream).toBe(upstreamUrl(req.hostEnv));
  });
});
