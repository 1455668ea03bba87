import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { importGraph } from "../src/host/import-graph.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

// The gate's two callers as they really run: the Claude Code hook as its own node process, with
// the hook JSON on stdin, and the Pi extension loaded by Pi 0.85.1's own extension loader.

const HOOK = join(REPO_ROOT, "src/host/claude-gate.ts");
const PI_LOADER = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/core/extensions/loader.js");

let scratch: ReturnType<typeof makeScratch>;
let ws: string;
let policyFile: string;

beforeAll(() => {
  scratch = makeScratch("gate-hook");
  ws = join(scratch.root, "data/ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  mkdirSync(join(scratch.root, "run/home"), { recursive: true });
  writeFileSync(join(ws, "src/main.ts"), "inside\n");
  writeFileSync(join(scratch.root, "stand-in-secret.env"), "STAND_IN=not-a-real-secret\n");
  symlinkSync(join(scratch.root, "stand-in-secret.env"), join(ws, "env-link"));
  policyFile = join(scratch.root, "run/policy.json");
  writeFileSync(
    policyFile,
    JSON.stringify({
      harness: "claude-code",
      workspace: ws,
      home: join(scratch.root, "run/home"),
      builtInTools: ["Read", "Write", "read", "write"],
      typedTools: ["mcp__mosaic__send_message"],
      network: "none",
      services: [],
      credentials: { set: null },
    }),
  );
});
afterAll(() => scratch.remove());

const hookJson = (tool: string, input: unknown) =>
  JSON.stringify({
    session_id: "live",
    transcript_path: "/dev/null",
    cwd: ws,
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: input,
  });
function runHook(stdin: string, entry = HOOK, policy = policyFile) {
  return spawnSync(process.execPath, [entry, policy], {
    input: stdin,
    encoding: "utf8",
    cwd: ws,
    env: { PATH: process.env.PATH, HOME: join(scratch.root, "run/home") },
    timeout: 20_000,
  });
}

describe("claude-gate hook process", () => {
  const it = liveIt("node 24 to run the hook", existsSync(HOOK) ? null : `${HOOK} is missing`);

  it("blocks a path outside: exit 2, the reason on stderr", () => {
    const r = runHook(hookJson("Read", { file_path: join(ws, "env-link") }));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `mosaic gate: Read file_path: ${JSON.stringify(join(ws, "env-link"))} resolves to ${join(scratch.root, "stand-in-secret.env")}, outside the workspace\n`,
    );
    expect(r.stdout).toBe("");
  });

  it("allows a path inside: exit 0, nothing on stderr (positive control)", () => {
    const r = runHook(hookJson("Read", { file_path: join(ws, "src/main.ts") }));
    expect([r.status, r.stderr]).toEqual([0, ""]);
  });

  it("blocks a tool the policy does not grant, and passes a typed tool", () => {
    expect(runHook(hookJson("WebFetch", { url: "https://example.com" })).status).toBe(2);
    expect(runHook(hookJson("mcp__mosaic__send_message", { to: "pm", text: "hi" })).status).toBe(0);
  });

  it("exits 2 on garbage stdin, on empty stdin, and without its policy", () => {
    for (const stdin of ["garbage", "", '{"tool_name":']) {
      const r = runHook(stdin);
      expect(r.status, JSON.stringify(stdin)).toBe(2);
      expect(r.stderr).toMatch(/^mosaic gate: /);
    }
    const missing = runHook(
      hookJson("Read", { file_path: join(ws, "src/main.ts") }),
      HOOK,
      join(scratch.root, "no-such-policy.json"),
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("the policy could not be read");
  });

  it("exits 2 when it crashes (a module of the gate missing), and 0 from the intact copy", () => {
    // Every file the hook loads, as the launcher binds them: its import graph from the entry.
    const files = importGraph([join(REPO_ROOT, "src/host/claude-gate.ts")]).files.map((f) => relative(REPO_ROOT, f));
    expect(files, "the graph reaches decide()").toContain("src/core/gate/decide.ts");
    const copy = (dir: string) => {
      for (const p of files) cpSync(join(REPO_ROOT, p), join(dir, p), { recursive: true });
      writeFileSync(join(dir, "package.json"), '{"type":"module"}\n');
      return join(dir, "src/host/claude-gate.ts");
    };
    const call = hookJson("Read", { file_path: join(ws, "src/main.ts") });
    expect(runHook(call, copy(join(scratch.root, "intact"))).status).toBe(0);
    const broken = copy(join(scratch.root, "broken"));
    rmSync(join(scratch.root, "broken/src/core/gate/decide.ts"));
    const r = runHook(call, broken);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^mosaic gate: the gate crashed, so it blocks/);
  });
});

type Handler = (event: unknown, ctx: unknown) => Promise<unknown> | unknown;
async function loadWithPi(env: string | undefined, marker?: string): Promise<Handler> {
  return (await loadExtensionWithPi(env, marker)).get("tool_call")![0]!;
}
async function loadExtensionWithPi(env: string | undefined, marker?: string): Promise<Map<string, Handler[]>> {
  const { loadExtensions } = (await import(pathToFileURL(PI_LOADER).href)) as {
    loadExtensions: (
      paths: string[],
      cwd: string,
    ) => Promise<{ errors: unknown[]; extensions: { handlers: Map<string, Handler[]> }[] }>;
  };
  const saved = { policy: process.env.MOSAIC_POLICY_FILE, marker: process.env.MOSAIC_TURN_MARKER };
  const set = (k: string, v: string | undefined) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
  set("MOSAIC_POLICY_FILE", env);
  set("MOSAIC_TURN_MARKER", marker);
  try {
    const r = await loadExtensions([join(REPO_ROOT, "src/host/pi-extension.ts")], ws);
    expect(r.errors).toEqual([]);
    const handlers = r.extensions[0]!.handlers;
    expect(handlers.get("tool_call")?.length).toBe(1);
    return handlers;
  } finally {
    set("MOSAIC_POLICY_FILE", saved.policy);
    set("MOSAIC_TURN_MARKER", saved.marker);
  }
}
const toolCall = (toolName: string, input: unknown) => ({ type: "tool_call", toolCallId: "t1", toolName, input });

describe("pi extension, loaded by Pi 0.85.1's own loader", () => {
  const it = liveIt(
    "Pi 0.85.1 (devDependency @earendil-works/pi-coding-agent)",
    existsSync(PI_LOADER) ? null : `${PI_LOADER} is missing: run npm ci`,
  );

  it("blocks a path outside with {block, reason} and lets a path inside run", async () => {
    const h = await loadWithPi(policyFile);
    expect(await h(toolCall("read", { path: "env-link" }), {})).toEqual({
      block: true,
      reason: `mosaic gate: read path: "env-link" from the workspace's real path, resolves to ${join(scratch.root, "stand-in-secret.env")}, outside the workspace`,
    });
    expect(await h(toolCall("read", { path: "src/main.ts" }), {})).toBeUndefined();
    expect(
      await h(toolCall("read", { path: "@src/main.ts" }), {}),
      "the raw input Pi hands the handler",
    ).toBeUndefined();
  }, 30_000);

  it("writes the turn marker at agent_end, and registers no agent_end without MOSAIC_TURN_MARKER", async () => {
    const marker = join(scratch.root, "run/turn.done");
    const handlers = await loadExtensionWithPi(policyFile, marker);
    expect(existsSync(marker)).toBe(false);
    for (const h of handlers.get("agent_end") ?? []) await h({ type: "agent_end", messages: [] }, {});
    expect(readFileSync(marker, "utf8")).toMatch(/^agent_end \d{4}-/);
    expect(
      (await loadExtensionWithPi(policyFile)).get("agent_end"),
      "positive control: no marker path, no handler",
    ).toBeUndefined();
  }, 30_000);

  it("blocks every call when MOSAIC_POLICY_FILE is missing", async () => {
    const h = await loadWithPi(undefined);
    expect(await h(toolCall("read", { path: "src/main.ts" }), {})).toEqual({
      block: true,
      reason: "mosaic gate: the policy could not be read (MOSAIC_POLICY_FILE is not set)",
    });
  }, 30_000);
});
