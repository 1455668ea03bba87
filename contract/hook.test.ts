import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gateHookCommand, shQuote } from "../src/core/bundle/hook.ts";

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

// The hook command quotes the node, repo and policy paths for /bin/sh. The launch facts' paths are
// not validated (docs/launch.md, Limits), so a quote or $(...) in one must stay part of the name.
describe("the hook command's quoting under a real shell", () => {
  const hostile = 'it\'s $(touch pwned) `touch pwned2` "x"';

  /** Runs the hook command for a repo at a hostile path; what the stand-in gate got, and whether the path ran. */
  function runQuoted(build: (repo: string, policy: string) => string): {
    status: number | null;
    argv: unknown;
    policy: string;
    pwned: boolean;
  } {
    const root = mkdtempSync(join(tmpdir(), "mosaic-quote-"));
    roots.push(root);
    const repo = join(root, hostile);
    mkdirSync(join(repo, "src/host"), { recursive: true });
    const record = join(root, "argv.json");
    writeFileSync(
      join(repo, "src/host/claude-gate.ts"),
      `require("node:fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`,
    );
    const policy = join(repo, "policy.json");
    const r = spawnSync("/bin/sh", ["-c", build(repo, policy)], { cwd: root, stdio: "ignore" });
    const argv: unknown = existsSync(record) ? JSON.parse(readFileSync(record, "utf8")) : null;
    return {
      status: r.status,
      argv,
      policy,
      pwned: existsSync(join(root, "pwned")) || existsSync(join(root, "pwned2")),
    };
  }

  it("a path with ' $( ) ` and \" reaches the gate as one argument, and nothing in it runs", () => {
    const r = runQuoted((repo, policy) => gateHookCommand(process.execPath, repo, policy, join(repo, "cache")));
    expect(r.pwned, "no command in the path ran").toBe(false);
    expect(r.argv, "the gate got the policy path whole").toEqual([r.policy]);
    expect(r.status).toBe(0);
    expect(shQuote("it's"), "a ' is closed, escaped and reopened").toBe("'it'\\''s'");
    // Positive control: quoting without escaping the ' lets the path's $(...) run.
    const naive = (w: string) => `'${w}'`;
    const bad = runQuoted((repo, policy) =>
      [process.execPath, `${repo}/src/host/claude-gate.ts`, policy].map(naive).join(" "),
    );
    expect(bad.pwned, "positive control: unescaped, the command substitution in the path runs").toBe(true);
  });
});
