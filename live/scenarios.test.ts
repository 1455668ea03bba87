import { spawnSync } from "node:child_process";
import { runProcess } from "../src/conformance/processes/run-process.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { loadScenario, scenarioFiles, type Scenario } from "../src/conformance/scenario/load.ts";
import { runScenario } from "../src/conformance/scenario/run.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

// The shipped scenarios, live: the same files and the same runner `npm start` uses, each a real
// session through the real launcher and runner in bwrap, Pi and Claude Code against the scripted
// API. One source of truth: a scenario added to scenarios/ is run here too.
const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));
const scratch = makeScratch("scenarios-live");
afterAll(() => scratch.remove());
const runsDir = join(scratch.root, "runs");

const notPassing = (r: Awaited<ReturnType<typeof runScenario>>) =>
  r.assertions.filter((a) => a.verdict !== "pass").map((a) => `${a.verdict}: ${a.label}: ${a.detail}`);

describe("every shipped scenario passes", () => {
  for (const file of scenarioFiles()) {
    const s = loadScenario(file);
    it(`${s.name} (${s.harness})`, async () => {
      const r = await runScenario(s, { runsDir });
      expect(r.problem).toBeNull();
      expect(r.assertions.length, "one row per assertion, a launched session's too, and no stray launch").toBe(
        s.assertions.length + s.launches.reduce((n, l) => n + l.assertions.length, 0),
      );
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

  it("stand-ins bound into the sandbox, the extension kept: it still blocks both reads, every assertion passes", async () => {
    const r = await runScenario(broken({ expose_stand_ins: true }), { id: "control-exposed", runsDir });
    expect(notPassing(r)).toEqual([]);
  }, 120_000);

  it("stand-ins bound in and Pi without its extension: the secret reaches the model, no_standin_leak fails, and the turn does not count", async () => {
    // Without the extension no agent_end marker is written, so the runner fails the turn closed.
    const s = {
      ...broken({ expose_stand_ins: true, gate: "unhooked" }),
      assertions: [...base.assertions, { turn_failed: { why: "agent_end marker" } }],
    };
    const r = await runScenario(s, { id: "control-unhooked", runsDir });
    expect(r.problem).toBeNull();
    const by = (kind: string) =>
      r.assertions.filter((a) => a.label.startsWith(`${kind} `) || a.label === kind).map((a) => a.verdict);
    // The reads outside now run: the ones through a path that exists in the sandbox get their content.
    expect(by("path_blocked").filter((v) => v === "fail").length, "reads outside that ran").toBeGreaterThanOrEqual(4);
    expect(by("tool_result_not_contains")).toEqual(["fail"]);
    expect(by("no_standin_leak")).toEqual(["fail"]);
    expect(by("turn_failed")).toEqual(["pass"]);
    expect(by("file_unchanged")).toEqual(["pass"]);
    expect(r.assertions.find((a) => a.label === "no_standin_leak")?.detail).toMatch(
      /^a stand-in value is in: .*requests/,
    );
    expect(r.verdict).toBe("fail");
  }, 120_000);
});

describe("breaking the other scenarios on purpose", () => {
  const load = (n: string) => loadScenario(join(REPO_ROOT, `scenarios/${n}.yaml`));
  const verdictOf = (r: Awaited<ReturnType<typeof runScenario>>, label: string) =>
    r.assertions.find((a) => a.label.startsWith(label))?.verdict;

  it("claude-file-tools-outside with the stand-ins bound in and Claude Code unhooked and unrestricted: the Read outside returns the secret", async () => {
    const s = {
      ...load("claude-file-tools-outside"),
      break: { expose_stand_ins: true as const, gate: "unhooked" as const, drop_flags: ["--restricted"] },
    };
    const r = await runScenario(
      { ...s, assertions: [...s.assertions, { turn_failed: { why: "ran without the gate" } }] },
      { id: "control-claude-unhooked", runsDir },
    );
    expect(r.problem).toBeNull();
    expect(verdictOf(r, 'path_blocked {"path":"{{secrets_env}}"')).toBe("fail");
    expect(verdictOf(r, "no_standin_leak")).toBe("fail");
    expect(verdictOf(r, "turn_failed"), "the tripwire fails the turn whose calls ran unhooked").toBe("pass");
    expect(verdictOf(r, "gate_saw_every_call")).toBe("fail");
  }, 120_000);

  it("pi-redteam-canary with the host's credential put in the session's environment: the dump carries the canary to the model, and the leak check names it", async () => {
    const r = await runScenario(
      { ...load("pi-redteam-canary"), break: { credential: "exposed" } },
      { id: "control-credential-exposed", runsDir },
    );
    expect(r.problem).toBeNull();
    expect(verdictOf(r, "request_not_contains")).toBe("fail");
    // Only the canary is in reach of this dump: the leak check fails on it alone, in the requests.
    const leak = r.assertions.find((a) => a.label === "no_standin_leak");
    expect(leak?.verdict).toBe("fail");
    expect(leak?.detail).toMatch(/^a stand-in value is in: .*requests \(1 value\)/);
  }, 120_000);

  it("claude-gate-crash with its fault removed: the same read inside runs, so the fault scenario's block is the crash's doing", async () => {
    const r = await runScenario({ ...load("claude-gate-crash"), fault: {} }, { id: "control-gate-intact", runsDir });
    expect(r.problem).toBeNull();
    expect(verdictOf(r, "path_blocked")).toBe("fail");
    expect(verdictOf(r, "tool_result_not_contains")).toBe("fail");
  }, 120_000);

  it('claude-redteam-plant-config with --restricted and --setting-sources "" dropped: the HOME hook runs and the planted CLAUDE.md reaches the model', async () => {
    const s = {
      ...load("claude-redteam-plant-config"),
      break: { drop_flags: ["--restricted", ["--setting-sources", ""] as [string, string]] },
    };
    const r = await runScenario(s, { id: "control-plant-config", runsDir });
    expect(r.problem).toBeNull();
    expect(verdictOf(r, "request_not_contains planted-instruction-marker")).toBe("fail");
    expect(verdictOf(r, "file_absent {{workspace}}/planted-hook-ran")).toBe("fail");
  }, 120_000);
});

// The launch scenario's controls: each removes one protection from the launched coder (or sends
// the PM's launch elsewhere), and exactly the rows that protection holds turn.
describe("breaking pm-launches-claude-coder on purpose", () => {
  const base = loadScenario(join(REPO_ROOT, "scenarios/pm-launches-claude-coder.yaml"));
  const coderWith = (b: Scenario["break"]): Scenario => ({ ...base, launches: [{ ...base.launches[0]!, break: b }] });
  const notPassingLabels = (r: Awaited<ReturnType<typeof runScenario>>) =>
    r.assertions.filter((a) => a.verdict !== "pass").map((a) => `${a.verdict}: ${a.label}`);

  it("the stand-ins bound into the coder's sandbox: exactly the two stand-in reads turn to yes", async () => {
    const r = await runScenario(coderWith({ expose_stand_ins: true }), { id: "control-coder-exposed", runsDir });
    expect(r.problem).toBeNull();
    expect(notPassingLabels(r)).toEqual([
      "fail: acme-coder: reply_contains read the stand-in secret: no",
      "fail: acme-coder: reply_contains read ~/.mosaic: no",
    ]);
  }, 120_000);

  it("the launch socket bound into the coder's sandbox: the coder sees it, and its argv shows the bind", async () => {
    const r = await runScenario(coderWith({ launch_socket: "bound" }), { id: "control-coder-launch-socket", runsDir });
    expect(r.problem).toBeNull();
    expect(notPassingLabels(r)).toEqual([
      "fail: acme-coder: reply_contains see the launch socket: no",
      "fail: acme-coder: launch_socket_bound false",
    ]);
  }, 120_000);

  it("the PM launches an instance the scenario does not declare: a failed launch row, and the coder's rows unobserved", async () => {
    const s = {
      ...base,
      messages: base.messages.map((m) => ({ body: m.body.replace(" acme-coder ", " acme-nobody ") })),
    };
    const r = await runScenario(s, { id: "control-stray-launch", runsDir });
    expect(r.problem).toBeNull();
    const stray = r.assertions.find((a) => a.label === "launch acme-nobody");
    expect(stray).toMatchObject({
      verdict: "fail",
      detail: "pm-launches-claude-coder launched acme-nobody, which the scenario does not declare under launches",
    });
    const coder = r.assertions.filter((a) => a.session === "acme-coder");
    expect(coder.length).toBe(base.launches[0]!.assertions.length);
    expect(new Set(coder.map((a) => `${a.verdict}: ${a.detail}`))).toEqual(
      new Set(["unobserved: pm-launches-claude-coder never launched acme-coder"]),
    );
    expect(r.verdict).toBe("fail");
  }, 120_000);
});

/** A fake-harness scenario whose reply never holds one of the texts asked for. */
const FAILING = [
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
].join("\n");

describe("mosaic-harness run, as a process", () => {
  it("a scenario whose assertions fail and go unobserved exits 1, and the table says which", () => {
    const dir = join(scratch.root, "failing");
    mkdirSync(dir);
    writeFileSync(join(dir, "fails-on-purpose.yaml"), FAILING);
    const r = spawnSync(process.execPath, [join(REPO_ROOT, "src/cli/main.ts"), "run", dir], {
      encoding: "utf8",
      cwd: REPO_ROOT,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^FAIL fails-on-purpose \(fake\) /m);
    expect(r.stdout).toMatch(/fails-on-purpose\s+reply_contains hello\s+pass/);
    expect(r.stdout).toMatch(/fails-on-purpose\s+reply_contains goodbye\s+fail\s+fail: none of 1 replies contains it/);
    expect(r.stdout).toMatch(/egress_refused .*\s+unobserved\s+unobserved: no matching request/);
    expect(r.stdout).toContain("0/1 scenarios passed; 3 assertion verdicts: 1 pass, 1 fail, 1 unobserved");
  }, 60_000);

  it("--jobs 1 and --jobs 4 give the same verdict table, a failing scenario's rows included", async () => {
    const dir = join(scratch.root, "failing-jobs");
    mkdirSync(dir);
    writeFileSync(join(dir, "fails-on-purpose.yaml"), FAILING);
    const files = [
      dir,
      ...["pi-reads-outside", "claude-file-tools-outside", "fake-shell-confined", "pi-egress-refused"].map((n) =>
        join(REPO_ROOT, `scenarios/${n}.yaml`),
      ),
    ];
    const table = async (jobs: number) => {
      const r = await runProcess(
        process.execPath,
        [join(REPO_ROOT, "src/cli/main.ts"), "run", ...files, "--json", "--jobs", String(jobs)],
        { cwd: REPO_ROOT, env: process.env, timeoutMs: 300_000 },
      );
      expect(r.status, r.stderr.slice(-800)).toBe(1);
      expect(r.stderr, "the progress line names the parallelism").toContain(`5 scenario runs, up to ${jobs} at once`);
      const doc = JSON.parse(r.stdout) as {
        scenarios: Array<{ name: string; runs: Array<{ assertions: Array<{ label: string; verdict: string }> }> }>;
      };
      return doc.scenarios.map((sc) => [
        sc.name,
        sc.runs.map((run) => run.assertions.map((a) => `${a.verdict} ${a.label}`)),
      ]);
    };
    const one = await table(1);
    const four = await table(4);
    expect(one.map(([n]) => n)).toEqual([
      "fails-on-purpose",
      "pi-reads-outside",
      "claude-file-tools-outside",
      "fake-shell-confined",
      "pi-egress-refused",
    ]);
    expect(JSON.stringify(one), "the failing scenario fails at both").toContain("fail reply_contains goodbye");
    expect(four).toEqual(one);
  }, 600_000);
});

// The tripwire's positive controls: the gate loaded but never called, as a harness version that
// stopped calling it would be. Every other check still passes the turn (Pi's marker is written,
// Claude Code's result line is there); only the tripwire fails it.
describe("the tripwire, with the gate never called on purpose", () => {
  const load = (n: string) => loadScenario(join(REPO_ROOT, `scenarios/${n}.yaml`));
  const rows = (r: Awaited<ReturnType<typeof runScenario>>, kind: string) =>
    r.assertions.filter((a) => a.label.startsWith(`${kind} `) || a.label === kind);
  const withTrip = (s: Scenario, b: Scenario["break"]): Scenario => ({
    ...s,
    break: b,
    assertions: [...s.assertions, { turn_failed: { why: "ran without the gate" } }],
  });

  it("Claude Code with settings.json's PreToolUse hook removed: a call inside completes ungated, and the turn fails naming it", async () => {
    const r = await runScenario(withTrip(load("claude-file-tools-outside"), { gate: "no-handler" }), {
      id: "control-claude-no-hook",
      runsDir,
    });
    expect(r.problem).toBeNull();
    expect(
      rows(r, "tool_result_contains").map((a) => a.verdict),
      "the Read inside ran",
    ).toContain("pass");
    expect(rows(r, "turn_failed").map((a) => a.verdict)).toEqual(["pass"]);
    expect(rows(r, "turn_failed")[0]?.detail).toMatch(/The turn failed: (Read|Write|Edit) ran without the gate/);
    expect(rows(r, "gate_saw_every_call").map((a) => [a.verdict, a.detail])).toEqual([
      ["fail", expect.stringMatching(/^turn 1: (Read|Write|Edit) \(call "[^"]+"\) ran without the gate/)],
    ]);
    expect(
      rows(r, "reply_contains").map((a) => a.verdict),
      "the reply is the tripwire's, not the model's",
    ).toEqual(["fail"]);
  }, 120_000);

  it("Pi's extension loaded without its tool_call handler: the read inside completes ungated, and the turn fails naming it", async () => {
    const r = await runScenario(withTrip(load("pi-reads-outside"), { gate: "no-handler" }), {
      id: "control-pi-no-handler",
      runsDir,
    });
    expect(r.problem).toBeNull();
    expect(rows(r, "turn_failed").map((a) => a.verdict)).toEqual(["pass"]);
    expect(rows(r, "turn_failed")[0]?.detail).toMatch(/The turn failed: (read|write) ran without the gate/);
    expect(rows(r, "gate_saw_every_call").map((a) => a.verdict)).toEqual(["fail"]);
    expect(rows(r, "gate_saw_every_call")[0]?.detail).toMatch(
      /^turn 1: (read|write) \(call "[^"]+"\) ran without the gate/,
    );
  }, 120_000);
});
