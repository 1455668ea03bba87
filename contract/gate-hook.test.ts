import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import { hookOutcome, loadGate, runHook, type GateModules } from "../src/host/claude-gate.ts";
import { readPolicyFile, toolCallVerdict } from "../src/host/pi-extension.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { importGraph } from "../src/host/import-graph.ts";
import { sweepChild } from "./support/sweep-child.ts";

const policy = {
  harness: "claude-code",
  workspace: "/ws",
  home: "/home/s",
  builtInTools: ["Read", "read"],
  typedTools: [],
  network: "none",
  services: [],
  credentials: { set: null },
};
const fs = memoryView({ "/ws/a.txt": "file", "/etc/passwd": "file" });
const hook = (tool: string, input: unknown) =>
  JSON.stringify({
    session_id: "s",
    cwd: "/ws",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: input,
    tool_use_id: "toolu_1",
  });

describe("claude-gate hook", () => {
  it("allows a path inside with exit 0", () => {
    expect(hookOutcome(hook("Read", { file_path: "/ws/a.txt" }), JSON.stringify(policy), decide, fs)).toEqual({
      code: 0,
      call: { call: "toolu_1", tool: "Read", input: { file_path: "/ws/a.txt" } },
    });
  });
  it("blocks a path outside with exit 2 and the reason on stderr", () => {
    const out = hookOutcome(hook("Read", { file_path: "/etc/passwd" }), JSON.stringify(policy), decide, fs);
    expect(out).toEqual({
      code: 2,
      stderr: 'mosaic gate: Read file_path: "/etc/passwd" resolves to /etc/passwd, outside the workspace\n',
      call: { call: "toolu_1", tool: "Read", input: { file_path: "/etc/passwd" } },
    });
  });
  it("bad JSON on stdin exits 2", () => {
    expect(hookOutcome("{not json", JSON.stringify(policy), decide, fs)).toEqual({
      code: 2,
      stderr: "mosaic gate: the hook input is not JSON\n",
    });
    expect(hookOutcome("", JSON.stringify(policy), decide, fs).code).toBe(2);
    expect(hookOutcome("null", JSON.stringify(policy), decide, fs).code).toBe(2);
  });
  it("a missing, unreadable or malformed policy exits 2", () => {
    const call = hook("Read", { file_path: "/ws/a.txt" });
    expect(hookOutcome(call, { unreadable: "ENOENT" }, decide, fs).code).toBe(2);
    expect(hookOutcome(call, "{", decide, fs).code).toBe(2);
    expect(hookOutcome(call, JSON.stringify({ ...policy, workspace: 3 }), decide, fs).code).toBe(2);
  });

  const scratch = makeScratch("gate-hook");
  afterAll(() => scratch.remove());
  it("a crash (a module of the gate that will not load) exits 2; the real modules allow", async () => {
    const ws = join(scratch.root, "ws");
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "a");
    const pol = join(scratch.root, "policy.json");
    writeFileSync(pol, JSON.stringify({ ...policy, workspace: ws }));
    const stdin = async () => hook("Read", { file_path: join(ws, "a.txt") });
    expect(await runHook([pol], stdin, loadGate)).toMatchObject({ code: 0 });
    const missing = async (): Promise<GateModules> => {
      await import(pathToFileURL(join(scratch.root, "no-such-module.ts")).href);
      return loadGate();
    };
    const crashed = await runHook([pol], stdin, missing);
    expect(crashed.code).toBe(2);
    expect(crashed.code === 2 && crashed.stderr).toMatch(
      /^mosaic gate: the gate crashed, so it blocks \(.*no-such-module\.ts/,
    );
    expect(await runHook([], stdin, loadGate), "no policy argument").toEqual({
      code: 2,
      stderr: "mosaic gate: the policy could not be read (no policy file argument)\n",
    });
  });
});

describe("a relative policy path names a file the session can write", () => {
  // The gate runs in the harness's working directory, the workspace: a relative policy path would
  // read a policy the session planted there. This one allows everything.
  const scratch = makeScratch("relative-policy");
  afterAll(() => scratch.remove());
  const planted = join(scratch.root, "policy.json");
  writeFileSync(planted, JSON.stringify({ ...policy, workspace: "/", builtInTools: ["Read", "read"] }));
  const rel = relative(process.cwd(), planted);
  const outside = hook("Read", { file_path: "/etc/passwd" });

  it("the hook refuses it and blocks; the same file by its absolute path is read (positive control)", async () => {
    expect(await runHook([rel], async () => outside, loadGate), "a relative policy argument blocks").toEqual({
      code: 2,
      stderr: `mosaic gate: the policy could not be read (${JSON.stringify(rel)} is not an absolute path)\n`,
    });
    expect(
      await runHook([planted], async () => outside, loadGate),
      "positive control: the planted policy, read, allows",
    ).toMatchObject({ code: 0 });
  });
  it("the Pi extension refuses it and blocks every call; by its absolute path it is read (positive control)", () => {
    const source = readPolicyFile({ MOSAIC_POLICY_FILE: rel });
    expect(source, "a relative MOSAIC_POLICY_FILE is not read").toEqual({
      unreadable: `MOSAIC_POLICY_FILE ${JSON.stringify(rel)} is not an absolute path`,
    });
    expect(toolCallVerdict(source, "read", { path: "/etc/passwd" }, fs)?.block).toBe(true);
    expect(
      toolCallVerdict(readPolicyFile({ MOSAIC_POLICY_FILE: planted }), "read", { path: "/etc/passwd" }, fs),
      "positive control: the planted policy allows",
    ).toBeUndefined();
  });
});

describe("pi extension", () => {
  it("blocks every call when the policy cannot be read", () => {
    expect(toolCallVerdict({ unreadable: "MOSAIC_POLICY_FILE is not set" }, "read", { path: "a.txt" }, fs)).toEqual({
      block: true,
      reason: "mosaic gate: the policy could not be read (MOSAIC_POLICY_FILE is not set)",
    });
  });
  it("blocks a path outside and lets a path inside run, through the same decide()", () => {
    expect(toolCallVerdict({ policy }, "read", { path: "/etc/passwd" }, fs)).toEqual({
      block: true,
      reason: 'mosaic gate: read path: "/etc/passwd" resolves to /etc/passwd, outside the workspace',
    });
    expect(toolCallVerdict({ policy }, "read", { path: "a.txt" }, fs)).toBeUndefined();
  });
});

// The hook's own last resort, as a real process and without the bundle's `|| exit 2` wrapper: the
// real claude-gate.ts (read afresh, so a mutant of it is what runs) beside a decide.ts that
// misbehaves. Claude Code blocks only on exit 2; exit 1 or 13 lets the tool run.
describe("the hook's last-resort handler, as a process without the shell wrapper", () => {
  const gateSource = readFileSync(join(REPO_ROOT, "src/host/claude-gate.ts"), "utf8");
  // Under StrykerJS's in-place sweep the file is instrumented: a protection is no longer the plain
  // text a positive control removes, so those controls run on the real source only (the sweep's own
  // mutants of the same lines stand in for them there).
  const instrumented = gateSource.includes("stryMutAct_9fa48");
  const fsViewSource = readFileSync(join(REPO_ROOT, "src/host/fs-view.ts"), "utf8");
  // Every other file the hook loads (its report to the tripwire among them), unchanged.
  const own = ["src/host/claude-gate.ts", "src/host/fs-view.ts", "src/core/gate/decide.ts"];
  const reportChain = importGraph([join(REPO_ROOT, "src/host/claude-gate.ts")])
    .files.map((f) => relative(REPO_ROOT, f))
    .filter((f) => !own.includes(f))
    .map((f) => ({ f, text: readFileSync(join(REPO_ROOT, f), "utf8") }));
  const roots = makeScratch("gate-last-resort");
  afterAll(() => roots.remove());
  let n = 0;

  /** Lays out claude-gate.ts (optionally with a protection removed) beside a decide.ts, runs it once. */
  function runGate(
    decideSource: string,
    opts: { without?: string; nodeArgs?: string[] } = {},
  ): Promise<{ code: number | null; stderr: string }> {
    const root = join(roots.root, `g${n++}`);
    mkdirSync(join(root, "src/host"), { recursive: true });
    for (const { f, text } of reportChain) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), text);
    }
    let gate = gateSource;
    if (opts.without !== undefined) {
      expect(gate.includes(opts.without), `the protection ${JSON.stringify(opts.without)} is in claude-gate.ts`).toBe(
        true,
      );
      gate = gate.replace(opts.without, "");
    }
    writeFileSync(join(root, "src/host/claude-gate.ts"), gate);
    writeFileSync(join(root, "src/host/fs-view.ts"), fsViewSource);
    writeFileSync(join(root, "src/core/gate/decide.ts"), decideSource);
    const policy = join(root, "policy.json");
    writeFileSync(policy, "{}");
    return new Promise((resolve, reject) => {
      // Under the sweep the child gets the active mutant and hands back its coverage.
      const sweep = sweepChild();
      const child = spawn(
        process.execPath,
        [...sweep.execArgv, ...(opts.nodeArgs ?? []), join(root, "src/host/claude-gate.ts"), policy],
        { stdio: ["pipe", "ignore", "pipe"], env: { ...process.env, ...sweep.env } },
      );
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      // "close", not "exit": stderr may still be in flight when the process exits.
      child.on("close", (code) => {
        sweep.collect();
        resolve({ code, stderr });
      });
      child.stdin.end(hook("Read", { file_path: "/etc/passwd" }));
    });
  }

  const allows = "export function decide() { return { allow: true }; }\n";
  const lateThrow = `export function decide() { setImmediate(() => { throw new Error("a gate bug after the verdict"); }); return { allow: true }; }\n`;
  const neverSettles = `await new Promise(() => {});\n${allows}`;
  const strayRejection = `export function decide() { Promise.reject(new Error("a stray rejection")); return { allow: true }; }\n`;

  it.concurrent("positive control: a decide that allows exits 0", async () => {
    expect((await runGate(allows)).code).toBe(0);
  });
  it.concurrent("an error thrown after the verdict exits 2, not Node's 1", async () => {
    const r = await runGate(lateThrow);
    expect(r.code, "the uncaught-exception handler blocks").toBe(2);
    expect(r.stderr).toContain("mosaic gate: the gate crashed, so it blocks (a gate bug after the verdict)");
    if (!instrumented)
      expect(
        (await runGate(lateThrow, { without: `process.on("uncaughtException", crash);` })).code,
        "positive control: without the handler Node exits 1, which Claude Code does not treat as a block",
      ).toBe(1);
  });
  it.concurrent("a module graph that never settles exits 2, not Node's 13", async () => {
    expect((await runGate(neverSettles)).code, "the exit code is 2 until the verdict is in").toBe(2);
    if (!instrumented)
      expect(
        (await runGate(neverSettles, { without: "process.exitCode = 2;" })).code,
        "positive control: without it Node exits 13",
      ).toBe(13);
  });
  it.concurrent("a stray rejection exits 2 even where Node only warns about it", async () => {
    const warn = { nodeArgs: ["--unhandled-rejections=warn"] };
    const r = await runGate(strayRejection, warn);
    expect(r.code, "the unhandled-rejection handler blocks").toBe(2);
    expect(r.stderr).toContain("mosaic gate: the gate crashed, so it blocks (a stray rejection)");
    if (!instrumented)
      expect(
        (await runGate(strayRejection, { ...warn, without: `process.on("unhandledRejection", crash);` })).code,
        "positive control: without the handler the call is allowed",
      ).toBe(0);
  });
  it.concurrent("a decide.ts that does not load exits 2", async () => {
    const r = await runGate("export function decide( {\n");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mosaic gate: the gate crashed, so it blocks \(/);
  });
});
