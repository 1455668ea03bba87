import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import { hookOutcome, loadGate, runHook, type GateModules } from "../src/host/claude-gate.ts";
import { toolCallVerdict } from "../src/host/pi-extension.ts";
import { memoryView } from "../src/conformance/tree.ts";
import { makeScratch } from "../src/conformance/scratch.ts";

const policy = { harness: "claude-code", workspace: "/ws", home: "/home/s", builtInTools: ["Read", "read"], typedTools: [], network: "none", services: [], credentials: { set: null } };
const fs = memoryView({ "/ws/a.txt": "file", "/etc/passwd": "file" });
const hook = (tool: string, input: unknown) => JSON.stringify({ session_id: "s", cwd: "/ws", hook_event_name: "PreToolUse", tool_name: tool, tool_input: input });

describe("claude-gate hook", () => {
  it("allows a path inside with exit 0", () => {
    expect(hookOutcome(hook("Read", { file_path: "/ws/a.txt" }), JSON.stringify(policy), decide, fs)).toEqual({ code: 0 });
  });
  it("blocks a path outside with exit 2 and the reason on stderr", () => {
    const out = hookOutcome(hook("Read", { file_path: "/etc/passwd" }), JSON.stringify(policy), decide, fs);
    expect(out).toEqual({ code: 2, stderr: 'mosaic gate: Read file_path: "/etc/passwd" resolves to /etc/passwd, outside the workspace\n' });
  });
  it("bad JSON on stdin exits 2", () => {
    expect(hookOutcome("{not json", JSON.stringify(policy), decide, fs)).toEqual({ code: 2, stderr: "mosaic gate: the hook input is not JSON\n" });
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
    expect(await runHook([pol], stdin, loadGate)).toEqual({ code: 0 });
    const missing = async (): Promise<GateModules> => {
      await import(pathToFileURL(join(scratch.root, "no-such-module.ts")).href);
      return loadGate();
    };
    const crashed = await runHook([pol], stdin, missing);
    expect(crashed.code).toBe(2);
    expect(crashed.code === 2 && crashed.stderr).toMatch(/^mosaic gate: the gate crashed, so it blocks \(.*no-such-module\.ts/);
    expect(await runHook([], stdin, loadGate), "no policy argument").toEqual({ code: 2, stderr: "mosaic gate: the policy could not be read (no policy file argument)\n" });
  });
});

describe("pi extension", () => {
  it("blocks every call when the policy cannot be read", () => {
    expect(toolCallVerdict({ unreadable: "MOSAIC_POLICY_FILE is not set" }, "read", { path: "a.txt" }, fs)).toEqual({ block: true, reason: "mosaic gate: the policy could not be read (MOSAIC_POLICY_FILE is not set)" });
  });
  it("blocks a path outside and lets a path inside run, through the same decide()", () => {
    expect(toolCallVerdict({ policy }, "read", { path: "/etc/passwd" }, fs)).toEqual({ block: true, reason: 'mosaic gate: read path: "/etc/passwd" resolves to /etc/passwd, outside the workspace' });
    expect(toolCallVerdict({ policy }, "read", { path: "a.txt" }, fs)).toBeUndefined();
  });
});
