import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { withoutFlags } from "../src/conformance/controls/argv.ts";
import { launchWithArgv, launchWithSettings } from "../src/conformance/controls/launch.ts";
import { gateCopyWithMutants, launchWithGateCopy } from "../src/conformance/gate/gate-copy.ts";
import {
  CLAUDE_BIN,
  explain,
  prepareLive,
  runLiveTurn,
  type LiveTurn,
} from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { startScriptedApi } from "../src/conformance/stand-ins/scripted-api.ts";
import { toolCallsIn } from "../src/conformance/stand-ins/model-script/resolve.ts";
import { scriptOf, type Reply } from "../src/conformance/stand-ins/model-script/format.ts";

// Glob patterns that name a path outside the workspace through a group, escaped dots or a "\",
// in a real Claude Code session in bwrap through the one launcher. The marker lies outside the
// workspace in the run directory, which the sandbox shows. Three arms: the shipped gate refuses
// each pattern, naming it and its rule; with the pattern rules removed (a copy of the hook with
// their catalog mutants applied) the calls reach Glob, and what Claude Code 2.1.332 lists is
// pinned in baselines/claude-code-glob.json: none reaches the marker, since Glob only filters
// names under the directory it walks; with the hook and --restricted both gone, Glob walking the
// marker's directory lists it (the positive control that the marker is there to be listed).
const hostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap and Claude Code",
  checkoutProblem(REPO_ROOT) ??
    (await import("../src/host/sandbox-probe.ts")).sandboxProblem(hostFacts) ??
    (existsSync(CLAUDE_BIN) ? null : `${CLAUDE_BIN} missing (npm ci)`),
);

const BASELINE_FILE = join(REPO_ROOT, "baselines/claude-code-glob.json");
const MARKER = `glob-marker-${process.pid}.txt`;

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("gate-glob");
});
afterAll(async () => {
  await w?.close();
});

/** The bundle's policy.json changed on purpose. */
function launchWithPolicy(p: PreparedLaunch, edit: (policy: Record<string, unknown>) => object): PreparedLaunch {
  const policy = JSON.parse(p.launch.bundle["policy.json"]!) as Record<string, unknown>;
  return { ...p, launch: { ...p.launch, bundle: { ...p.launch.bundle, "policy.json": JSON.stringify(edit(policy)) } } };
}

/**
 * The launch with Claude Code's Glob granted: in --tools, --allowedTools and the gate's policy. A
 * shipped tool limit never grants it (`find` maps to no Claude Code tool), so the grant is made here.
 */
function withGlob(p: PreparedLaunch): PreparedLaunch {
  const q = launchWithArgv(p, (argv) =>
    argv.map((t, i) => (argv[i - 1] === "--tools" || argv[i - 1] === "--allowedTools" ? `${t},Glob` : t)),
  );
  const r = launchWithPolicy(q, (policy) => ({
    ...policy,
    builtInTools: [...(policy.builtInTools as string[]), "Glob"],
  }));
  expect(r.session.sessionFile.adapter.argv.filter((t) => t.includes("Glob")).length, "Glob granted twice").toBe(2);
  return r;
}

type Setup = { prepared: PreparedLaunch; ws: string; run: string; outside: string };

function prepare(name: string, apiUrl: string): Setup {
  const instance = w.instance("claude-coder", name);
  const ws = instance.workspace;
  mkdirSync(join(ws, "sub"), { recursive: true });
  writeFileSync(join(ws, "sub/in.txt"), "a file inside the workspace\n");
  const prepared = withGlob(prepareLive(w, instance, apiUrl));
  const run = prepared.session.sessionFile.runDir;
  return { prepared, ws, run, outside: join(run, "outside") };
}

/**
 * The marker outside the workspace, and a file named like the marker's directory in a sibling (what
 * a walk of the run directory for that name finds); start() makes the run directory, so this runs
 * after it, and every session uid may list them.
 */
function plant(s: Setup): void {
  for (const [dir, file] of [
    [s.outside, MARKER],
    [join(s.run, "elsewhere"), "outside"],
  ] as const) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, file), "planted outside the workspace\n");
    chmodSync(join(dir, file), 0o644);
  }
}

/**
 * The three patterns aimed at the marker, each with what the shipped gate's refusal names and its
 * key in the baseline (the pattern with the world's paths named).
 */
function attacks(s: Setup): Array<{ pattern: string; names: string; key: string }> {
  const up = relative(s.ws, s.run)
    .split("/")
    .map((seg) => (seg === ".." ? "\\.\\." : seg))
    .join("/");
  return [
    { pattern: `{${s.outside},sub}/*`, names: "(group-holds-slash)", key: "{<run>/outside,sub}/*" },
    {
      pattern: `${up}/outside/*`,
      names: "(dotdot-spelled-after-wildcard)",
      key: "<from the workspace to <run>, each .. as \\.\\.>/outside/*",
    },
    {
      pattern: `${s.outside.replaceAll("/", "\\")}\\*`,
      names: `read with each "\\" as "/", as node's fs.glob does`,
      key: "<<run>/outside, each / as \\>\\*",
    },
  ];
}

/** One turn whose model calls Glob with each pattern in order; the calls with what the model was shown. */
async function globTurn(
  s: Setup,
  launch: PreparedLaunch,
  api: Awaited<ReturnType<typeof startScriptedApi>>,
  patterns: string[],
  done: string,
) {
  const replies: Reply[] = [
    ...patterns.map((pattern) => ({ tool_use: { name: "Glob", input: { pattern } } })),
    { text: done },
  ];
  api.replaceScript(scriptOf(replies));
  const turn: LiveTurn = await runLiveTurn(w, launch, "find the files", { afterStart: () => plant(s) }, 120_000);
  const bodies = api.messageBodies();
  const calls = toolCallsIn(bodies.at(-1) ?? "{}");
  expect(
    calls.map((c) => c.input.pattern),
    `every Glob call came back; ${explain(turn)}`,
  ).toEqual(patterns);
  return { turn, bodies, shown: calls.map((c) => (c.result ?? "").split("<system-reminder>")[0]!.trim()) };
}

/** What Glob listed, in the baseline's words: the run directory, the workspace and the marker by name. */
const inBaselineWords = (s: Setup, text: string) =>
  text.split(s.run).join("<run>").split(s.ws).join("<ws>").split(MARKER).join("<marker>");

type Baseline = { facts: Record<string, { value: Record<string, string> }> };
const baseline = (): Baseline => JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Baseline;
const PINNED =
  "Claude Code's Glob drifted from baselines/claude-code-glob.json: read the diff and update the file by hand";

describe("Claude Code's Glob: patterns that name a path outside through groups, escapes or a \\", () => {
  it("the shipped gate refuses each, naming the pattern and its rule; near misses run; nothing outside is listed", async () => {
    const api = await startScriptedApi();
    try {
      const s = prepare("glob-shipped", api.url);
      const bad = attacks(s);
      const near = [`{sub,nothing}/*`, `${s.ws}/**`, `../${basename(s.ws)}`];
      const { turn, bodies, shown } = await globTurn(
        s,
        s.prepared,
        api,
        [...bad.map((a) => a.pattern), s.ws, ...near],
        "turn-finished-shipped",
      );
      expect(
        turn.reply,
        `the runner counted the turn: each completed call had the gate's allow; ${explain(turn)}`,
      ).toBe("turn-finished-shipped");
      for (const [i, a] of bad.entries()) {
        expect(shown[i], a.pattern).toMatch(/(^|\]: )mosaic gate: Glob pattern: /);
        expect(shown[i], "the refusal names the pattern").toContain(JSON.stringify(a.pattern));
        expect(shown[i], "and its rule").toContain(a.names);
      }
      expect(shown[3], "the workspace without a wildcard: Glob would walk its parent").toMatch(
        /mosaic gate: Glob pattern: .*its fixed part as Claude Code's Glob cuts it/,
      );
      expect(
        shown.slice(4),
        "near misses run: braces of names, the workspace with /**, a relative name filter",
      ).toEqual(["sub/in.txt", "sub/in.txt", "No files found"]);
      for (const b of bodies) expect(b.includes(MARKER), "the marker never reaches the model").toBe(false);
    } finally {
      await api.stop();
    }
  }, 180_000);

  it("breaking it on purpose: with the pattern rules removed the calls reach Glob, which lists what the baseline pins, never the marker", async () => {
    const api = await startScriptedApi();
    try {
      const s = prepare("glob-rules-removed", api.url);
      const dir = join(w.root, "gate-copies", "rules-removed");
      const entry = gateCopyWithMutants(dir, ["gate-pattern-rules-unchecked", "gate-pattern-backslash-unread"]);
      chmodSync(join(w.root, "gate-copies"), 0o755);
      const bad = attacks(s);
      const { turn, bodies, shown } = await globTurn(
        s,
        launchWithGateCopy(s.prepared, dir, entry),
        api,
        bad.map((a) => a.pattern),
        "turn-finished-removed",
      );
      expect(turn.reply, `the copy's gate allowed and reported each call; ${explain(turn)}`).toBe(
        "turn-finished-removed",
      );
      for (const x of shown) expect(x, "the gate no longer refuses it").not.toContain("mosaic gate");
      const listed = Object.fromEntries(bad.map((a, i) => [a.key, inBaselineWords(s, shown[i]!)]));
      expect(listed, PINNED).toEqual(baseline().facts["glob-pattern-groups-filter-only"]!.value);
      for (const b of bodies) expect(b.includes(MARKER), "Claude Code 2.1.332 lists no marker").toBe(false);
    } finally {
      await api.stop();
    }
  }, 180_000);

  it("positive control: with the hook and --restricted both gone, Glob walking the marker's directory lists it, and a pattern without a wildcard walks its dirname", async () => {
    const api = await startScriptedApi();
    try {
      const s = prepare("glob-unguarded", api.url);
      let launch = launchWithSettings(s.prepared, "the hook removed on purpose", (settings) =>
        JSON.stringify({ ...(JSON.parse(settings) as object), hooks: {} }),
      );
      launch = launchWithArgv(launch, (argv) => withoutFlags(argv, ["--restricted"]));
      const patterns = [`${s.outside}/*`, s.outside];
      const { turn, shown } = await globTurn(s, launch, api, patterns, "turn-finished-unguarded");
      expect(turn.reply, "the runner's tripwire fails a turn whose Glob ran without the gate").toMatch(
        /^The turn failed: .*Glob ran without the gate/,
      );
      const listed = Object.fromEntries(patterns.map((p, i) => [inBaselineWords(s, p), inBaselineWords(s, shown[i]!)]));
      expect(listed, PINNED).toEqual(baseline().facts["glob-walks-its-base"]!.value);
      expect(shown[0], "the marker is there to be listed").toContain(MARKER);
    } finally {
      await api.stop();
    }
  }, 180_000);
});
