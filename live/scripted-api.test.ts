import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { runProcess } from "../src/conformance/run-process.ts";
import { join } from "node:path";
import { afterEach, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden.ts";
import { liveIt } from "../src/conformance/live-gate.ts";
import { makeScratch } from "../src/conformance/scratch.ts";
import { ScriptedApi, type ScriptedReply } from "../src/conformance/scripted-api.ts";

// The real CLIs against the scripted API, unconfined: proves the stream shape both accept, so a
// confined session's failure is the sandbox's doing, not the stream's.
const claudeBin = join(REPO_ROOT, "node_modules/.bin/claude");
const piBin = join(REPO_ROOT, "node_modules/.bin/pi");
const STAND_IN_KEY = "stand-in-api-key-not-a-secret";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function scratchDirs(label: string) {
  const scratch = makeScratch(label);
  cleanups.push(() => scratch.remove());
  const [home, tmp, ws] = ["home", "tmp", "ws"].map((d) => join(scratch.root, d)) as [string, string, string];
  for (const d of [home, tmp, ws]) mkdirSync(d, { recursive: true });
  return { home, tmp, ws, root: scratch.root };
}

async function startApi(replies: ScriptedReply[]) {
  const api = new ScriptedApi(replies);
  const url = await api.start();
  cleanups.push(() => api.stop());
  return { api, url };
}

describe("the real CLIs accept the scripted Messages API", () => {
  liveIt("Claude Code installed", existsSync(claudeBin) ? null : `${claudeBin} missing (npm ci)`)("Claude Code: a tool call, then text, reach the result line", async () => {
    const { home, tmp, ws } = scratchDirs("claude-api");
    const { api, url } = await startApi([
      { kind: "tool_use", name: "Write", input: { file_path: join(ws, "answer.txt"), content: "written by the scripted model\n" } },
      { kind: "text", text: "scripted-final-reply-7731" },
    ]);
    const r = await runProcess(claudeBin, ["-p", "write the answer", "--output-format", "stream-json", "--verbose", "--permission-mode", "dontAsk", "--allowedTools", "Write", "--tools", "Write", "--setting-sources", "", "--model", "claude-sonnet-4-5"], {
      cwd: ws,
      timeoutMs: 45_000,
      env: { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: STAND_IN_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    });
    const result = r.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((m) => m.type === "result");
    expect(result, `no result line; stderr: ${r.stderr.slice(0, 500)}`).toBeDefined();
    expect(result.result).toBe("scripted-final-reply-7731");
    expect(readFileSync(join(ws, "answer.txt"), "utf8")).toBe("written by the scripted model\n");
    expect(api.messageBodies().length).toBe(2);
    expect(api.remaining()).toBe(0);
  });

  liveIt("Pi installed", existsSync(piBin) ? null : `${piBin} missing (npm ci)`)("Pi: a tool call, then text, reach stdout", async () => {
    const { home, ws, root } = scratchDirs("pi-api");
    const { api, url } = await startApi([
      { kind: "tool_use", name: "write", input: { path: "answer.txt", content: "written by the scripted model\n" } },
      { kind: "text", text: "scripted-final-reply-4419" },
    ]);
    const agentDir = join(root, "pi-agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { scripted: { baseUrl: url, api: "anthropic-messages", apiKey: STAND_IN_KEY, models: [{ id: "scripted-model", name: "scripted" }] } } }));
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
    const r = await runProcess(piBin, ["-p", "write the answer", "--provider", "scripted", "--model", "scripted-model", "--no-session", "--offline", "-nc", "-ns", "-ne"], {
      cwd: ws,
      timeoutMs: 45_000,
      env: { PATH: process.env.PATH, HOME: home, PI_CODING_AGENT_DIR: agentDir },
    });
    expect(r.status, `pi failed: ${r.stderr.slice(0, 800)}`).toBe(0);
    expect(r.stdout.trim()).toBe("scripted-final-reply-4419");
    expect(readFileSync(join(ws, "answer.txt"), "utf8")).toBe("written by the scripted model\n");
    expect(api.messageBodies().length).toBe(2);
  });
});
