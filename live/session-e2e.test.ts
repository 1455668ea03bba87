import { realFsView } from "../src/host/fs-view.ts";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { piReply } from "../src/core/runner/decisions.ts";
import { checkTripwire, completedCalls } from "../src/core/runner/tripwire.ts";
import type { Bind } from "../src/core/sandbox/types.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import {
  CLAUDE_BIN,
  planLiveSession,
  runLiveTurn,
  startSessionSetup,
  type LiveSession,
  type SessionSetup,
} from "../src/conformance/worlds/live-session.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import { scriptOf, type Reply } from "../src/conformance/stand-ins/model-script/format.ts";
import type { StandIns } from "../src/conformance/stand-ins/secrets.ts";

// The whole confinement layer at once, with nothing hand-built: decideLaunch() plans a coder from
// the shipped example instances, writeBundle() writes its bundle, and the adapter's own argv runs
// the real Claude Code or Pi inside bwrap from binds()/bwrapArgv() (src/conformance/worlds/live-session.ts).
// The gate runs on every tool call: Claude Code's through the bundle's hook, Pi's through the
// extension. The scripted API records what the model was shown.
const CLAUDE = CLAUDE_BIN;
const hostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap and Claude Code",
  checkoutProblem(REPO_ROOT) ??
    (await import("../src/host/sandbox-probe.ts")).sandboxProblem(hostFacts) ??
    (existsSync(CLAUDE) ? null : `${CLAUDE} missing (npm ci)`),
);

let setup: SessionSetup;
let close: (() => Promise<void>) | undefined;
let stand: StandIns;
const MARKER = `claude-md-marker-${process.pid}`;

beforeAll(async () => {
  const s = await startSessionSetup("e2e", hostFacts);
  ({ setup, close } = s);
  stand = s.world.stand;
});

afterAll(async () => {
  await close?.();
});

type Prepared = LiveSession;

/** Plans, and writes, one launch from a shipped example instance (claude-coder or pi-coder). */
function prepare(name: string, apiUrl: string, example: "claude-coder" | "pi-coder" = "claude-coder"): Prepared {
  const p = planLiveSession(setup, name, apiUrl, example);
  expect(p.gatePackages, "the gate loads no package: Claude Code's sandbox has no node_modules").toEqual([]);
  // Memory files a session's prompt must never carry: the workspace's and HOME's. The parent's is
  // hidden by the sandbox whatever the flags; every location, with each flag's polarity pair, is
  // live/memory.test.ts.
  writeFileSync(join(p.ws, "CLAUDE.md"), `Always mention ${MARKER}.\n`);
  writeFileSync(join(p.ws, "..", "CLAUDE.md"), `Parent memory ${MARKER}.\n`);
  mkdirSync(join(p.home, ".claude"), { recursive: true });
  writeFileSync(join(p.home, ".claude/CLAUDE.md"), `User memory ${MARKER}.\n`);
  writeFileSync(join(p.ws, "inside.txt"), "a file inside the workspace\n");
  writeFileSync(join(p.run, "session.json"), JSON.stringify({ note: `the host's record ${stand.secret}` }) + "\n");
  return p;
}

/** The adapter's command, in the workspace, inside the sandbox, with the message appended. */
function runTurn(p: Prepared, table: Bind[], message: string) {
  return runLiveTurn(p, message, table);
}

describe("a planned Claude Code session, end to end", () => {
  it("the gate blocks reads outside the workspace, allows work inside, and no secret or memory file reaches the model", async () => {
    const api = await startScriptedApi();
    const url = api.url;
    try {
      const p = prepare("coder-e2e", url);
      const replies: Reply[] = [
        { tool_use: { name: "Read", input: { file_path: join(p.run, "session.json") } } },
        { tool_use: { name: "Read", input: { file_path: stand.files.sshKey } } },
        { tool_use: { name: "Write", input: { file_path: join(p.ws, "made-by-session.txt"), content: "inside\n" } } },
        { tool_use: { name: "Read", input: { file_path: join(p.ws, "inside.txt") } } },
        { text: "turn-finished-e2e" },
      ];
      api.replaceScript(scriptOf(replies));
      const r = await runTurn(p, binds(p.spec, p.facts, realFsView()), "do the task");
      const result = r.stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((m) => m.type === "result");
      expect(result?.result, `no result line; stderr: ${r.stderr.slice(0, 800)}`).toBe("turn-finished-e2e");

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
        expect(b.includes(stand.secret), "no stand-in secret reaches the model").toBe(false);
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
        if (arm.dropHook) {
          const settingsFile = join(p.plan.bundleDir, "settings.json");
          writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(settingsFile, "utf8")), hooks: {} }));
        }
        const plan = arm.dropRestricted
          ? { ...p.plan, adapter: { ...p.plan.adapter, argv: p.plan.adapter.argv.filter((t) => t !== "--restricted") } }
          : p.plan;
        api.replaceScript(
          scriptOf([
            { tool_use: { name: "Read", input: { file_path: join(p.run, "session.json") } } },
            { text: "turn-finished-arm" },
          ]),
        );
        const r = await runTurn({ ...p, plan }, binds(p.spec, p.facts, realFsView()), "do the task");
        expect(r.stdout, r.stderr.slice(0, 800)).toContain("turn-finished-arm");
        const seen = toolResultsIn(api.messageBodies().at(-1));
        if (arm.blockedBy === null)
          expect(seen[0], "with both layers gone the read goes through").toContain(stand.secret);
        else {
          expect(seen[0]).toMatch(arm.blockedBy);
          expect(seen[0]).not.toContain(stand.secret);
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
      const r = await runTurn(p, binds(p.spec, p.facts, realFsView()), "do the task");
      expect(r.status, `pi failed: ${r.stderr.slice(0, 800)}`).toBe(0);
      expect(piReply(r.stdout), "the reply is agent_end's last message in Pi's JSON stream").toEqual({
        reply: "turn-finished-pi\n",
      });
      expect(
        completedCalls("pi-json", r.stdout).map((c) => c.tool),
        "the tripwire reads the write and the read inside as completed; the two blocked reads are errors",
      ).toEqual(["write", "read"]);
      const bodies = api.messageBodies();
      expect(bodies.length).toBe(5);
      const seen = toolResultsIn(bodies.at(-1));
      expect(seen.length).toBe(4);
      expect(seen[0], "the extension blocked session.json").toMatch(/outside the workspace/);
      expect(seen[1], "the extension blocked ~/.. out of the run's home").toMatch(/outside the workspace/);
      expect(seen[3], "a read inside the workspace is allowed").toContain("a file inside the workspace");
      expect(readFileSync(join(p.ws, "made-by-session.txt"), "utf8")).toBe("inside\n");
      for (const b of bodies) {
        expect(b.includes(stand.secret), "no stand-in secret reaches the model").toBe(false);
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
      const argv = p.plan.adapter.argv;
      const e = argv.indexOf("-e");
      const plan = { ...p.plan, adapter: { ...p.plan.adapter, argv: [...argv.slice(0, e), ...argv.slice(e + 2)] } };
      api.replaceScript(
        scriptOf([
          { tool_use: { name: "read", input: { path: join(p.run, "session.json") } } },
          { text: "turn-finished-noext" },
        ]),
      );
      const r = await runTurn({ ...p, plan }, binds(p.spec, p.facts, realFsView()), "do the task");
      expect(piReply(r.stdout), r.stderr.slice(0, 800)).toEqual({ reply: "turn-finished-noext\n" });
      expect(
        checkTripwire(p.plan.tripwire, completedCalls("pi-json", r.stdout), []),
        "the tripwire sees the read complete with no report from a gate",
      ).toMatchObject({ kind: "tripped", tool: "read", reply: "read ran without the gate" });
      expect(toolResultsIn(api.messageBodies().at(-1))[0], "with no gate the read goes through").toContain(
        stand.secret,
      );
      if (p.plan.turnEnd.kind === "marker")
        expect(existsSync(p.plan.turnEnd.file), "no extension, no marker: the runner would fail this turn").toBe(false);
    } finally {
      await api.stop();
    }
  }, 90_000);
});
