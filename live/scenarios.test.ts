import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/live-gate.ts";
import { loadScenario, scenarioFiles, type Scenario } from "../src/conformance/scenario/load.ts";
import { runScenario } from "../src/conformance/scenario/run.ts";
import { makeScratch } from "../src/conformance/scratch.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

// The shipped scenarios, live: the same files and the same runner `npm start` uses, each a real
// session through the real launcher and runner in bwrap, Pi and Claude Code against the scripted
// API. One source of truth: a scenario added to scenarios/ is run here too.
const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));
const scratch = makeScratch("scenarios-live");
afterAll(() => scratch.remove());
const runsDir = join(scratch.root, "runs");

const notPassing = (r: Awaited<ReturnType<typeof runScenario>>) => r.assertions.filter((a) => a.verdict !== "pass").map((a) => `${a.verdict}: ${a.label}: ${a.detail}`);

describe("every shipped scenario passes", () => {
  for (const file of scenarioFiles()) {
    const s = loadScenario(file);
    it(`${s.name} (${s.harness})`, async () => {
      const r = await runScenario(s, { runsDir });
      expect(r.problem).toBeNull();
      expect(r.assertions.length).toBe(s.assertions.length);
      expect(notPassing(r)).toEqual([]);
      expect(r.verdict).toBe("pass");
    }, 120_000);
  }
});

// Positive controls: the same scenario with protections removed on purpose. The sandbox alone keeps
// the stand-in out of reach (it is not bound), so the extension's part shows only once the
// stand-ins are bound in; with both gone the read gets through and the leak checks fail.
describe("breaking it on purpose: pi-reads-outside", () => {
  const base = loadScenario(join(REPO_ROOT, "scenarios/pi-reads-outside.yaml"));
  const broken = (b: Scenario["break"]): Scenario => ({ ...base, break: b });
  const verdicts = (r: Awaited<ReturnType<typeof runScenario>>) => Object.fromEntries(r.assertions.map((a) => [a.label.replace(/ .*/s, "") + (a.label.includes("via_home") ? " via_home" : a.label.includes("{{secrets_env}}\"") ? " abs" : ""), a.verdict]));

  it("stand-ins bound into the sandbox, the extension kept: it still blocks both reads, every assertion passes", async () => {
    const r = await runScenario(broken({ expose_stand_ins: true }), { id: "control-exposed", runsDir });
    expect(notPassing(r)).toEqual([]);
  }, 120_000);

  it("stand-ins bound in and Pi without its extension: the secret reaches the model, no_standin_leak fails, and the turn does not count", async () => {
    // Without the extension no agent_end marker is written, so the runner fails the turn closed.
    const s = { ...broken({ expose_stand_ins: true, gate: "unhooked" }), assertions: [...base.assertions, { turn_failed: { why: "agent_end marker" } }] };
    const r = await runScenario(s, { id: "control-unhooked", runsDir });
    expect(r.problem).toBeNull();
    expect(verdicts(r)).toEqual({
      "tool_result_contains abs": "fail",
      "tool_result_contains via_home": "fail",
      tool_result_contains: "pass",
      reply_contains: "fail",
      tool_result_not_contains: "fail",
      no_standin_leak: "fail",
      file_unchanged: "pass",
      turn_failed: "pass",
    });
    expect(r.assertions.find((a) => a.label === "no_standin_leak")?.detail).toMatch(/^a stand-in value is in: .*requests/);
    expect(r.verdict).toBe("fail");
  }, 120_000);
});

describe("mosaic-harness run, as a process", () => {
  it("a scenario whose assertions fail and go unobserved exits 1, and the table says which", () => {
    const dir = join(scratch.root, "failing");
    mkdirSync(dir);
    writeFileSync(join(dir, "fails-on-purpose.yaml"), [
      "name: fails-on-purpose",
      "description: a fake-harness session whose reply never holds the text asked for",
      "harness: fake",
      "instance: { ref: pi-coder }",
      "messages:",
      "  - body: echo hello",
      "assertions:",
      "  - reply_contains: hello",
      "  - reply_contains: goodbye",
      "  - egress_refused: { path: /v1/models }",
      "",
    ].join("\n"));
    const r = spawnSync(process.execPath, [join(REPO_ROOT, "src/cli/main.ts"), "run", dir], { encoding: "utf8", cwd: REPO_ROOT });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^FAIL fails-on-purpose \(fake\) /m);
    expect(r.stdout).toMatch(/fails-on-purpose\s+reply_contains hello\s+pass/);
    expect(r.stdout).toMatch(/fails-on-purpose\s+reply_contains goodbye\s+fail\s+fail: none of 1 replies contains it/);
    expect(r.stdout).toMatch(/egress_refused .*\s+unobserved\s+unobserved: no matching request/);
    expect(r.stdout).toContain("0/1 scenarios passed; 3 assertion verdicts: 1 pass, 1 fail, 1 unobserved");
  }, 60_000);
});
