// The gate's host side beyond decide(): the report each decision sends the runner's tripwire
// (gate-report.ts), the Pi extension as Pi loads it (pi-extension.ts's default export), and the
// Claude Code hook as Claude Code runs it (claude-gate.ts: runHook's branches in-process, main() as
// a real process, seen by the sweep through contract/support/sweep-child.ts).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:net";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { GATE_REPORT_TOOL } from "../src/core/runner/tripwire.ts";
import { decide } from "../src/core/gate/decide.ts";
import { hookOutcome, runHook, type GateModules } from "../src/host/claude-gate.ts";
import { inputDigest, reportDecision } from "../src/host/gate-report.ts";
import mosaicGate, { readPolicyFile } from "../src/host/pi-extension.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { importGraph } from "../src/host/import-graph.ts";
import { lineServer } from "./support/line-server.ts";
import { sweepChild } from "./support/sweep-child.ts";

const scratch = makeScratch("gate-sweep");
afterAll(() => scratch.remove());
let n = 0;

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

type Line = { id: unknown; tool: string; args: Record<string, unknown> };

/** A stand-in runner tool socket: every request line kept, answered ok unless `silent`. */
async function toolSocket(silent = false): Promise<{ path: string; server: Server; lines: Line[] }> {
  const path = join(scratch.root, `s${n++}.sock`);
  const lines: Line[] = [];
  const server = await lineServer<Line>(path, (l) => {
    lines.push(l);
    return silent ? undefined : { id: l.id, ok: true, result: null };
  });
  return { path, server, lines };
}

const policy = (workspace: string) => ({
  harness: "claude-code",
  workspace,
  home: "/home/s",
  builtInTools: ["Read", "read"],
  typedTools: [],
  network: "none",
  services: [],
  credentials: { set: null },
});

describe("the gate's report to the tripwire", () => {
  it("names the input by the sha256 of its JSON, and an undefined input by that of the word undefined", () => {
    expect(inputDigest({ file_path: "/ws/a" })).toBe(sha('{"file_path":"/ws/a"}'));
    expect(inputDigest(undefined)).toBe(sha("undefined"));
    expect(inputDigest(undefined)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("sends the call, tool, verdict and digest as one gate-report request", async () => {
    const s = await toolSocket();
    try {
      const out = await reportDecision(s.path, { call: "toolu_9", tool: "Read", input: { a: 1 }, allow: false });
      expect(out).toEqual({ ok: true, text: "null" });
      expect(s.lines).toEqual([
        {
          id: s.lines[0]!.id,
          tool: GATE_REPORT_TOOL,
          args: { call: "toolu_9", tool: "Read", allow: false, digest: sha('{"a":1}') },
        },
      ]);
    } finally {
      s.server.close();
    }
  });

  it("gives up after 2 s without an answer, far inside the hook's own 10 s", async () => {
    const s = await toolSocket(true);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const out = reportDecision(s.path, { call: "c", tool: "Read", input: {}, allow: true });
      await vi.advanceTimersByTimeAsync(2000);
      expect(await out).toEqual({
        ok: false,
        text: "refused: the runner's tool socket did not answer within 2000 ms; the call did not complete",
      });
    } finally {
      vi.useRealTimers();
      s.server.close();
    }
  });
});

type Handler = (event: Record<string, unknown>) => unknown;

/** Pi as the extension sees it: the handlers it registers, by event, and the tools it registers. */
function fakePi() {
  const handlers = new Map<string, Handler>();
  const tools: unknown[] = [];
  const pi = {
    on: (event: string, h: Handler) => void handlers.set(event, h),
    registerTool: (t: unknown) => void tools.push(t),
  };
  return { pi, handlers, tools };
}

/** Runs fn with these variables set (undefined: unset), restoring the environment after. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T> | T): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

describe("the Pi extension as Pi loads it", () => {
  it("reads its policy file, or says why not", () => {
    expect(readPolicyFile({})).toEqual({ unreadable: "MOSAIC_POLICY_FILE is not set" });
    expect(readPolicyFile({ MOSAIC_POLICY_FILE: "" })).toEqual({ unreadable: "MOSAIC_POLICY_FILE is not set" });
    const bad = join(scratch.root, "bad-policy.json");
    writeFileSync(bad, "{");
    const r = readPolicyFile({ MOSAIC_POLICY_FILE: bad });
    expect("unreadable" in r && r.unreadable.startsWith(`${bad}: `)).toBe(true);
    expect("unreadable" in r && r.unreadable.length > bad.length + 2).toBe(true);
    const good = join(scratch.root, "good-policy.json");
    writeFileSync(good, JSON.stringify(policy("/ws")));
    expect(readPolicyFile({ MOSAIC_POLICY_FILE: good })).toEqual({ policy: policy("/ws") });
  });

  it("gates each tool call, reports the verdict to the runner, and writes the turn marker at agent_end", async () => {
    const ws = join(scratch.root, "pi-ws");
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "a");
    const pol = join(scratch.root, "pi-policy.json");
    writeFileSync(pol, JSON.stringify({ ...policy(ws), harness: "pi" }));
    const marker = join(scratch.root, "pi-marker");
    const s = await toolSocket();
    const p = fakePi();
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      await withEnv(
        {
          MOSAIC_POLICY_FILE: pol,
          MOSAIC_TOOL_SOCKET: s.path,
          MOSAIC_TURN_MARKER: marker,
          MOSAIC_TOOLS_FILE: undefined,
        },
        async () => {
          mosaicGate(p.pi as never);
          const call = p.handlers.get("tool_call")!;
          expect(
            await call({ toolName: "read", toolCallId: "c1", input: { path: join(ws, "a.txt") } }),
          ).toBeUndefined();
          expect(await call({ toolName: "read", toolCallId: "c2", input: { path: "/etc/passwd" } })).toEqual({
            block: true,
            reason: 'mosaic gate: read path: "/etc/passwd" resolves to /etc/passwd, outside the workspace',
          });
          expect(s.lines.map((l) => [l.tool, l.args])).toEqual([
            [
              GATE_REPORT_TOOL,
              { call: "c1", tool: "read", allow: true, digest: inputDigest({ path: join(ws, "a.txt") }) },
            ],
            [
              GATE_REPORT_TOOL,
              { call: "c2", tool: "read", allow: false, digest: inputDigest({ path: "/etc/passwd" }) },
            ],
          ]);
          p.handlers.get("agent_end")!({});
          expect(readFileSync(marker, "utf8")).toMatch(/^agent_end \d{4}-\d\d-\d\dT[0-9:.]+Z\n$/);
        },
      );
      expect(write).toHaveBeenCalledWith("mosaic extension: no typed tools: MOSAIC_TOOLS_FILE is not set\n");
    } finally {
      write.mockRestore();
      s.server.close();
    }
  });

  it("without a marker path, set or empty, no agent_end handler is registered", async () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      for (const marker of [undefined, ""]) {
        const p = fakePi();
        await withEnv({ MOSAIC_TURN_MARKER: marker, MOSAIC_POLICY_FILE: undefined }, () => mosaicGate(p.pi as never));
        expect([...p.handlers.keys()], String(marker)).toEqual(["tool_call"]);
      }
    } finally {
      write.mockRestore();
    }
  });
});

describe("the Claude Code hook", () => {
  const fs = memoryView({ "/ws/a.txt": "file" });
  const hook = (input: unknown) =>
    JSON.stringify({ tool_name: "Read", tool_input: input, tool_use_id: "toolu_1", hook_event_name: "PreToolUse" });

  it("a policy that is not JSON, or hook input that is not an object, blocks saying which", () => {
    expect(hookOutcome(hook({ file_path: "/ws/a.txt" }), "{", decide, fs)).toEqual({
      code: 2,
      stderr: "mosaic gate: the policy is not JSON\n",
    });
    for (const stdin of ["3", '"Read"', "null", "true"])
      expect(hookOutcome(stdin, JSON.stringify(policy("/ws")), decide, fs), stdin).toEqual({
        code: 2,
        stderr: "mosaic gate: the hook input is not a JSON object\n",
      });
  });

  it("a policy file it cannot read blocks, naming the file and the error's code (or the error)", async () => {
    const modules =
      (thrown: unknown): (() => Promise<GateModules>) =>
      async () => ({
        decide,
        fs,
        readFile: () => {
          throw thrown;
        },
      });
    const stdin = async () => hook({ file_path: "/ws/a.txt" });
    const enoent = Object.assign(new Error("no such file"), { code: "ENOENT" });
    expect(await runHook(["/etc/mosaic/p.json"], stdin, modules(enoent))).toEqual({
      code: 2,
      stderr: "mosaic gate: the policy could not be read (/etc/mosaic/p.json: ENOENT)\n",
    });
    expect(await runHook(["/etc/mosaic/p.json"], stdin, modules("a plain throw"))).toEqual({
      code: 2,
      stderr: "mosaic gate: the policy could not be read (/etc/mosaic/p.json: a plain throw)\n",
    });
  });

  /** The real hook as Claude Code runs it: the hook JSON on stdin, the policy as its argument. */
  function runGate(args: string[], stdin: string, env: Record<string, string>) {
    const sweep = sweepChild();
    const child = spawn(process.execPath, [...sweep.execArgv, join(REPO_ROOT, "src/host/claude-gate.ts"), ...args], {
      env: { PATH: "/usr/bin:/bin", ...env, ...sweep.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    // Written in two pieces: the hook reads stdin to its end.
    child.stdin!.write(stdin.slice(0, 7));
    setTimeout(() => child.stdin!.end(stdin.slice(7)), 5);
    return new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) =>
      child.on("close", (code) => {
        sweep.collect();
        resolve({ code, stderr, stdout });
      }),
    );
  }

  it("as a process: exit 0 allows, exit 2 blocks with the reason on stderr, and each decided call is reported", async () => {
    const ws = join(scratch.root, "hook-ws");
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "a");
    const pol = join(scratch.root, "hook-policy.json");
    writeFileSync(pol, JSON.stringify(policy(ws)));
    const s = await toolSocket();
    try {
      const env = { MOSAIC_TOOL_SOCKET: s.path };
      const allowed = await runGate([pol], hook({ file_path: join(ws, "a.txt") }), env);
      expect(allowed).toEqual({ code: 0, stderr: "", stdout: "" });
      const blocked = await runGate([pol], hook({ file_path: "/etc/passwd" }), env);
      expect(blocked).toEqual({
        code: 2,
        stderr: 'mosaic gate: Read file_path: "/etc/passwd" resolves to /etc/passwd, outside the workspace\n',
        stdout: "",
      });
      expect(s.lines.map((l) => l.args)).toEqual([
        { call: "toolu_1", tool: "Read", allow: true, digest: inputDigest({ file_path: join(ws, "a.txt") }) },
        { call: "toolu_1", tool: "Read", allow: false, digest: inputDigest({ file_path: "/etc/passwd" }) },
      ]);
      // No call to name (input that is not JSON): blocked, and nothing reported.
      const garbled = await runGate([pol], "{not json at all", env);
      expect(garbled).toEqual({ code: 2, stderr: "mosaic gate: the hook input is not JSON\n", stdout: "" });
      expect(s.lines).toHaveLength(2);
    } finally {
      s.server.close();
    }
  });

  it("as a process without a tool socket: the verdict stands, the report is refused quietly", async () => {
    const ws = join(scratch.root, "hook-ws-2");
    mkdirSync(ws);
    const pol = join(scratch.root, "hook-policy-2.json");
    writeFileSync(pol, JSON.stringify(policy(ws)));
    const out = await runGate([pol], hook({ file_path: "/etc/passwd" }), {});
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      'mosaic gate: Read file_path: "/etc/passwd" resolves to /etc/passwd, outside the workspace\n',
    );
  });

  /** The hook's files laid out afresh under the scratch root, some replaced: `over` maps a path to its text. */
  function layout(over: Record<string, string>): string {
    const root = join(scratch.root, `layout${n++}`);
    const files = importGraph([join(REPO_ROOT, "src/host/claude-gate.ts")]).files.map((f) => relative(REPO_ROOT, f));
    for (const f of files) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), over[f] ?? readFileSync(join(REPO_ROOT, f), "utf8"));
    }
    return root;
  }

  it("a report module that will not load changes no verdict: an allowed call still exits 0", async () => {
    const root = layout({
      "src/core/gate/decide.ts": "export function decide() { return { allow: true }; }\n",
      "src/host/gate-report.ts": "export function reportDecision( {\n",
    });
    const pol = join(root, "policy.json");
    writeFileSync(pol, "{}");
    const sweep = sweepChild();
    const child = spawn(process.execPath, [...sweep.execArgv, join(root, "src/host/claude-gate.ts"), pol], {
      env: { PATH: "/usr/bin:/bin", MOSAIC_TOOL_SOCKET: join(scratch.root, "none.sock"), ...sweep.env },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin!.end(hook({ file_path: "/ws/a.txt" }));
    const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)));
    sweep.collect();
    expect([code, stderr]).toEqual([0, ""]);
  });

  it("imported as a module it runs nothing: no stdin read, no exit code set, nothing written", async () => {
    const sweep = sweepChild();
    const gate = join(REPO_ROOT, "src/host/claude-gate.ts");
    const child = spawn(
      process.execPath,
      [
        ...sweep.execArgv,
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(gate)}); console.log(typeof m.runHook);`,
      ],
      { env: { PATH: "/usr/bin:/bin", ...sweep.env }, stdio: ["pipe", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.stdin!.end("{}");
    const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)));
    sweep.collect();
    expect([code, out, err]).toEqual([0, "function\n", ""]);
  });
});
