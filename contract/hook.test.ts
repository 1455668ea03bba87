import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gateHookCommand } from "../src/core/bundle/hook.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/**
 * Runs the planned hook command with a real /bin/sh and this node, a stand-in gate in place of
 * src/host/claude-gate.ts (null: no gate file at all), and returns the exit status.
 */
function runHook(gateBody: string | null): Promise<number | null> {
  const repo = mkdtempSync(join(tmpdir(), "mosaic-hook-"));
  roots.push(repo);
  mkdirSync(join(repo, "src/host"), { recursive: true });
  if (gateBody !== null) writeFileSync(join(repo, "src/host/claude-gate.ts"), gateBody, { mode: 0o600 });
  const cmd = gateHookCommand(process.execPath, repo, join(repo, "policy.json"), join(repo, "no-cache-yet"));
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", cmd], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code));
  });
}

// Claude Code blocks a tool call only on exit 2, so everything but an allowing gate must come out as 2.
describe.concurrent("the Claude Code hook command fails closed under a real shell", () => {
  it("an allowing gate (exit 0) allows: positive control", async () => {
    expect(await runHook("process.exit(0);\n")).toBe(0);
  });
  it("a blocking gate (exit 2) blocks", async () => {
    expect(await runHook("process.exit(2);\n")).toBe(2);
  });
  it("a crashing gate (an uncaught throw) blocks", async () => {
    expect(await runHook(`throw new Error("gate bug");\n`)).toBe(2);
  });
  it("a gate killed by a signal blocks", async () => {
    expect(await runHook(`process.kill(process.pid, "SIGKILL");\n`)).toBe(2);
  });
  it("a missing gate blocks", async () => {
    expect(await runHook(null)).toBe(2);
  });
});
