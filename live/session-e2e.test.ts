import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { piReply } from "../src/core/runner/decisions.ts";
import { checkTripwire, completedCalls } from "../src/core/runner/tripwire.ts";
import type { LaunchPlan } from "../src/core/launch/decide-launch.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { importGraph } from "../src/host/import-graph.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { withoutFlags } from "../src/conformance/controls/argv.ts";
import { launchWithArgv, launchWithSettings } from "../src/conformance/controls/launch.ts";
import {
  CLAUDE_BIN,
  explain,
  homeSeed,
  prepareLive,
  runLiveTurn,
  withHomeSeed,
  withKeptStdout,
  type Example,
  type LiveTurn,
} from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import { scriptOf, type Reply } from "../src/conformance/stand-ins/model-script/format.ts";

// The whole confinement layer at once, through the one launcher: prepareLaunch() plans a coder
// from the shipped example instances, start() runs the real runner in bwrap, and each message's
// turn runs the real Claude Code or Pi with the adapter's own argv (src/conformance/worlds/live-session.ts).
// The gate runs on every tool call: Claude Code's through the bundle's hook, Pi's through the
// extension; the runner's tripwire checks each completed call. The scripted API records what the
// model was shown. Each turn's stdout is kept by a front before the harness (withKeptStdout), for
// the assertions on the harness's own event stream; HOME's memory file goes in through its seed.
const CLAUDE = CLAUDE_BIN;
const hostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap and Claude Code",
  checkoutProblem(REPO_ROOT) ??
    (await import("../src/host/sandbox-probe.ts")).sandboxProblem(hostFacts) ??
    (existsSync(CLAUDE) ? null : `${CLAUDE} missing (npm ci)`),
);

let w: RuntimeWorld;
const MARKER = `claude-md-marker-${process.pid}`;

beforeAll(async () => {
  w = await makeRuntimeWorld("e2e");
});

afterAll(async () => {
  await w?.close();
});

type Prepared = { prepared: PreparedLaunch; plan: LaunchPlan; ws: string; run: string; seed: string };

/**
 * Plans one launch from a shipped example instance (claude-coder or pi-coder), with what its
 * workspace and HOME hold planted first.
 */
function prepare(name: string, apiUrl: string, example: Example = "claude-coder"): Prepared {
  const gate = importGraph([
    join(REPO_ROOT, example === "pi-coder" ? "src/host/pi-extension.ts" : "src/host/claude-gate.ts"),
  ]);
  expect(gate.packages, "the gate loads no package: it runs on node's own modules only").toEqual([]);
  const instance = w.instance(example, name);
  const ws = instance.workspace;
  // Memory files a session's prompt must never carry: the workspace's and HOME's. The parent's is
  // hidden by the sandbox whatever the flags; every location, with each flag's polarity pair, is
  // live/memory.test.ts.
  writeFileSync(join(ws, "CLAUDE.md"), `Always mention ${MARKER}.\n`);
  writeFileSync(join(ws, "..", "CLAUDE.md"), `Parent memory ${MARKER}.\n`);
  const seed = homeSeed(w, name);
  mkdirSync(join(seed, ".claude"), { recursive: true });
  writeFileSync(join(seed, ".claude/CLAUDE.md"), `User memory ${MARKER}.\n`);
  writeFileSync(join(ws, "inside.txt"), "a file inside the workspace\n");
  const prepared = prepareLive(w, instance, apiUrl);
  return { prepared, plan: prepared.launch, ws, run: prepared.session.sessionFile.runDir, seed };
}

/**
 * One turn of the prepared launch, its stdout kept and HOME seeded. Once the runner has read its
 * session.json, the host's record with a stand-in secret takes its place: the file outside the
 * workspace that the reads below aim at.
 */
function runTurn(p: Prepared, launch: PreparedLaunch, message: string): Promise<LiveTurn> {
  return runLiveTurn(w, withHomeSeed(withKeptStdout(launch), p.seed), message, {
    afterClaim: () =>
      writeFileSync(
        join(p.run, "session.json"),
        JSON.stringify({ note: `the host's record ${w.stand.secret}` }) + "\n",
      ),
  });
}

describe("a planned Claude Code session, end to end", () => {
  it("the gate blocks reads outside the workspace, allows work inside, and no secret or memory file reaches the model", async () => {
    const api = await startScriptedApi();
    const url = api.url;
    try {
      const p = prepare("coder-e2e", url);
      const replies: Reply[] = [
        { tool_use: { name: "Read", input: { file_path: join(p.run, "session.json") } } },
        { tool_use: { name: "Read", input: { file_path: w.stand.files.sshKey } } },
        { tool_use: { name: "Write", input: { file_path: join(p.ws, "made-by-session.txt"), content: "inside\n" } } },
        { tool_use: { name: "Read", input: { file_path: join(p.ws, "inside.txt") } } },
        { text: "turn-finished-e2e" },
      ];
      api.replaceScript(scriptOf(replies));
      const r = await runTurn(p, p.prepared, "do the task");
      const result = r.stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((m) => m.type === "result");
      expect(result?.result, `no result line; ${explain(r)}`).toBe("turn-finished-e2e");
      expect(r.reply, "the runner counted the turn: each completed call had the gate's allow").toBe(
        "turn-finished-e2e",
      );

      const bodies = api.messageBodies();
      expect(bodies.length).toBe(5);
      const seen = toolResultsIn(bodies.at(-1));
      expect(seen.length).toBe(4);
      expect(seen[0], "the gate blocked the run directory's session.json").toMatch(
        /mosaic gate: .*outside the workspace/,
      );
      expect(seen[1], "the gate blocked the founder's key").toMatch(/mosaic gate: .*outside the workspace/);
      expect(seen[3], "a read inside the workspace is allowed").toContain("a file inside the workspace");
      expect(readFileSync(join(p.ws, "made-by-session.txt"), "utf8")).toBe("inside\n");
      for (const b of bodies) {
        expect(b.includes(w.stand.secret), "no stand-in secret reaches the model").toBe(false);
        expect(b.includes(MARKER), "no CLAUDE.md reaches the model").toBe(false);
      }
    } finally {
      await api.stop();
    }
  }, 90_000);

  // Two layers stop a file tool outside the workspace: the gate's hook and Claude Code's own
  // --restricted. Each arm removes one or both on purpose; the read succeeds only with both gone.
  const ARMS = [
    {
      name: "without the hook, --restricted still blocks",
      dropHook: true,
      dropRestricted: false,
      blockedBy: /--restricted confines the file tools/,
    },
    {
      name: "without --restricted, the gate still blocks",
      dropHook: false,
      dropRestricted: true,
      blockedBy: /mosaic gate: .*outside the workspace/,
    },
    { name: "without both, the read reaches the model", dropHook: true, dropRestricted: true, blockedBy: null },
  ] as const;
  for (const arm of ARMS) {
    it(`breaking it on purpose: ${arm.name}`, async () => {
      const api = await startScriptedApi();
      const url = api.url;
      try {
        const p = prepare(`nogate-${ARMS.indexOf(arm)}`, url);
        let launch = p.prepared;
        if (arm.dropHook)
          launch = launchWithSettings(launch, "the hook removed on purpose", (settings) =>
            JSON.stringify({ ...(JSON.parse(settings) as object), hooks: {} }),
          );
        if (arm.dropRestricted) launch = launchWithArgv(launch, (argv) => withoutFlags(argv, ["--restricted"]));
        api.replaceScript(
          scriptOf([
            { tool_use: { name: "Read", input: { file_path: join(p.run, "session.json") } } },
            { text: "turn-finished-arm" },
          ]),
        );
        const r = await runTurn(p, launch, "do the task");
        expect(r.stdout, explain(r)).toContain("turn-finished-arm");
        const seen = toolResultsIn(api.messageBodies().at(-1));
        if (arm.blockedBy === null)
          expect(seen[0], "with both layers gone the read goes through").toContain(w.stand.secret);
        else {
          expect(seen[0]).toMatch(arm.blockedBy);
          expect(seen[0]).not.toContain(w.stand.secret);
        }
      } finally {
        await api.stop();
      }
    }, 90_000);
  }
});

describe("a planned Pi session, end to end", () => {
  it("the extension's gate blocks reads outside the workspace, allows work inside, and no secret reaches the model", async () => {
    const api = await startScriptedApi();
    const url = api.url;
    try {
      const p = prepare("pi-e2e", url, "pi-coder");
      expect(p.plan.harness).toBe("pi");
      api.replaceScript(
        scriptOf([
          { tool_use: { name: "read", input: { path: join(p.run, "session.json") } } },
          { tool_use: { name: "read", input: { path: "~/../session.json" } } },
          { tool_use: { name: "write", input: { path: "made-by-session.txt", content: "inside\n" } } },
          { tool_use: { name: "read", input: { path: "@inside.txt" } } },
          { text: "turn-finished-pi" },
        ]),
      );
      const r = await runTurn(p, p.prepared, "do the task");
      expect(r.reply, `pi failed: ${explain(r)}`).toBe("turn-finished-pi");
      expect(piReply(r.stdout), "the reply is agent_end's last message in Pi's JSON stream").toEqual({
        reply: "turn-finished-pi\n",
      });
      expect(
        completedCalls("pi-json", r.stdout).map((c) => c.tool),
        "the tripwire reads the write and the read inside as completed; the two blocked reads are errors",
      ).toEqual(["write", "read"]);
      expect(r.runnerLog, "the runner's tripwire saw the gate allow both").toContain(
        "turn 1: tripwire: the gate allowed each of 2 completed tool calls",
      );
      const bodies = api.messageBodies();
      expect(bodies.length).toBe(5);
      const seen = toolResultsIn(bodies.at(-1));
      expect(seen.length).toBe(4);
      expect(seen[0], "the extension blocked session.json").toMatch(/outside the workspace/);
      expect(seen[1], "the extension blocked ~/.. out of the run's home").toMatch(/outside the workspace/);
      expect(seen[3], "a read inside the workspace is allowed").toContain("a file inside the workspace");
      expect(readFileSync(join(p.ws, "made-by-session.txt"), "utf8")).toBe("inside\n");
      for (const b of bodies) {
        expect(b.includes(w.stand.secret), "no stand-in secret reaches the model").toBe(false);
        expect(b.includes(MARKER), "no CLAUDE.md reaches the model (-nc)").toBe(false);
      }
      expect(p.plan.turnEnd.kind).toBe("marker");
      if (p.plan.turnEnd.kind === "marker")
        expect(existsSync(p.plan.turnEnd.file), "the extension wrote the turn marker at agent_end").toBe(true);
    } finally {
      await api.stop();
    }
  }, 90_000);

  it("breaking it on purpose: without the extension, the same read reaches the model and no turn marker is written", async () => {
    const api = await startScriptedApi();
    const url = api.url;
    try {
      const p = prepare("pi-e2e-noext", url, "pi-coder");
      const launch = launchWithArgv(p.prepared, (argv) => withoutFlags(argv, [["-e", argv[argv.indexOf("-e") + 1]!]]));
      api.replaceScript(
        scriptOf([
          { tool_use: { name: "read", input: { path: join(p.run, "session.json") } } },
          { text: "turn-finished-noext" },
        ]),
      );
      const r = await runTurn(p, launch, "do the task");
      expect(piReply(r.stdout), explain(r)).toEqual({ reply: "turn-finished-noext\n" });
      expect(
        checkTripwire(p.plan.tripwire, completedCalls("pi-json", r.stdout), []),
        "the tripwire sees the read complete with no report from a gate",
      ).toMatchObject({ kind: "tripped", tool: "read", reply: "read ran without the gate" });
      expect(r.runnerLog, "and so does the runner's").toMatch(
        /turn 1: tripwire: read \(call .*\) ran without the gate/,
      );
      expect(toolResultsIn(api.messageBodies().at(-1))[0], "with no gate the read goes through").toContain(
        w.stand.secret,
      );
      expect(r.reply, "the runner failed the turn").toMatch(
        /^The turn failed: the harness exited 0 but never wrote its agent_end marker/,
      );
      if (p.plan.turnEnd.kind === "marker")
        expect(existsSync(p.plan.turnEnd.file), "no extension, no marker: the runner would fail this turn").toBe(false);
    } finally {
      await api.stop();
    }
  }, 90_000);
});
