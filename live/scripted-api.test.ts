import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { runProcess } from "../src/conformance/processes/run-process.ts";
import { join } from "node:path";
import { afterEach, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { loadModelScript, type Reply } from "../src/conformance/stand-ins/model-script/format.ts";
import { anthropicError, handlersFor } from "../src/conformance/stand-ins/model-script/handlers.ts";
import { startScriptedApi, type ScriptedApi } from "../src/conformance/stand-ins/scripted-api.ts";
import { http } from "msw";

// The real CLIs against the scripted API, unconfined: proves the stream shape both accept, so a
// confined session's failure is the sandbox's doing, not the stream's.
const claudeBin = join(REPO_ROOT, "node_modules/.bin/claude");
const piBin = join(REPO_ROOT, "node_modules/.bin/pi");
const STAND_IN_KEY = "stand-in-api-key-not-a-secret";
const CLI_TIMEOUT_MS = 45_000;

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

async function startApi(turns: Reply[]) {
  const api = await startScriptedApi({ script: loadModelScript({ turns }, { source: "live/scripted-api.test.ts" }) });
  cleanups.push(() => api.stop());
  return { api, url: api.url };
}

const claude = (
  url: string,
  dirs: { home: string; tmp: string; ws: string },
  tools: string,
  timeoutMs = CLI_TIMEOUT_MS,
) =>
  runProcess(
    claudeBin,
    [
      "-p",
      "do the task",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "dontAsk",
      "--allowedTools",
      tools,
      "--tools",
      tools,
      "--setting-sources",
      "",
      "--model",
      "claude-sonnet-4-5",
    ],
    {
      cwd: dirs.ws,
      timeoutMs,
      env: {
        PATH: process.env.PATH,
        HOME: dirs.home,
        TMPDIR: dirs.tmp,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: STAND_IN_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    },
  );

function pi(url: string, dirs: { home: string; ws: string; root: string }) {
  const agentDir = join(dirs.root, "pi-agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: url,
          api: "anthropic-messages",
          apiKey: STAND_IN_KEY,
          models: [{ id: "scripted-model", name: "scripted" }],
        },
      },
    }),
  );
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
  return runProcess(
    piBin,
    [
      "-p",
      "do the task",
      "--provider",
      "scripted",
      "--model",
      "scripted-model",
      "--no-session",
      "--offline",
      "-nc",
      "-ns",
      "-ne",
    ],
    {
      cwd: dirs.ws,
      timeoutMs: CLI_TIMEOUT_MS,
      env: { PATH: process.env.PATH, HOME: dirs.home, PI_CODING_AGENT_DIR: agentDir },
    },
  );
}

function resultLine(stdout: string) {
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((m) => m.type === "result");
}

/** The stand-in key reached the API, and no recorded request holds it in clear. */
function expectKeyRedacted(api: ScriptedApi) {
  expect(api.credentialSeen("x-api-key", STAND_IN_KEY), "the CLI sent the stand-in key").toBe(true);
  expect(api.credentialSeen("x-api-key", "some-other-key")).toBe(false);
  expect(
    JSON.stringify(api.requests().map((r) => r.headers)).includes(STAND_IN_KEY),
    "no header is recorded in clear",
  ).toBe(false);
}

const hasClaude = liveIt("Claude Code installed", existsSync(claudeBin) ? null : `${claudeBin} missing (npm ci)`);
const hasPi = liveIt("Pi installed", existsSync(piBin) ? null : `${piBin} missing (npm ci)`);

describe("the real CLIs accept the scripted Messages API", () => {
  hasClaude("Claude Code: a tool call, then text, reach the result line", async () => {
    const dirs = scratchDirs("claude-api");
    const { api, url } = await startApi([
      {
        tool_use: {
          name: "Write",
          input: { file_path: join(dirs.ws, "answer.txt"), content: "written by the scripted model\n" },
        },
      },
      { text: "scripted-final-reply-7731" },
    ]);
    const r = await claude(url, dirs, "Write");
    const result = resultLine(r.stdout);
    expect(result, `no result line; stderr: ${r.stderr.slice(0, 500)}`).toBeDefined();
    expect(result.result).toBe("scripted-final-reply-7731");
    expect(readFileSync(join(dirs.ws, "answer.txt"), "utf8")).toBe("written by the scripted model\n");
    expect(api.messageBodies().length).toBe(2);
    expect(api.remaining()).toBe(0);
    expect(api.failures()).toEqual([]);
    // HEAD / comes only sometimes; whatever else arrives must have been answered by the script.
    expect(
      api
        .requests()
        .filter((q) => q.served.kind !== "head")
        .map((q) => `${q.method} ${q.url.split("?")[0]} ${q.served.kind}`),
    ).toEqual(["POST /v1/messages turn", "POST /v1/messages turn"]);
    expectKeyRedacted(api);
  });

  hasPi("Pi: a tool call, then text, reach stdout", async () => {
    const dirs = scratchDirs("pi-api");
    const { api, url } = await startApi([
      { tool_use: { name: "write", input: { path: "answer.txt", content: "written by the scripted model\n" } } },
      { text: "scripted-final-reply-4419" },
    ]);
    const r = await pi(url, dirs);
    expect(r.status, `pi failed: ${r.stderr.slice(0, 800)}`).toBe(0);
    expect(r.stdout.trim()).toBe("scripted-final-reply-4419");
    expect(readFileSync(join(dirs.ws, "answer.txt"), "utf8")).toBe("written by the scripted model\n");
    expect(api.messageBodies().length).toBe(2);
    expect(api.remaining()).toBe(0);
    expect(api.failures()).toEqual([]);
    expectKeyRedacted(api);
  });
});

describe("a reply made from the tool results the request carried", () => {
  hasClaude("Claude Code: the final text echoes what the Read tool returned", async () => {
    const dirs = scratchDirs("claude-echo");
    writeFileSync(join(dirs.ws, "note.txt"), "echo-marker-5521\n");
    const { api, url } = await startApi([
      { tool_use: { name: "Read", input: { file_path: join(dirs.ws, "note.txt") } } },
      { text_from_tool_results: { template: "saw: {{last_tool_result}}" } },
    ]);
    const r = await claude(url, dirs, "Read");
    const result = resultLine(r.stdout);
    expect(result, `no result line; stderr: ${r.stderr.slice(0, 500)}`).toBeDefined();
    expect(result.result).toMatch(/^saw: .*echo-marker-5521/s);
    expect(api.failures()).toEqual([]);
  });

  // Both arms of one branch, so the branch is shown to decide on the result and not to be fixed.
  for (const [content, expected] of [
    ["branch-marker-8810 present\n", "found-the-marker"],
    ["nothing of note\n", "no-marker"],
  ] as const) {
    hasPi(`Pi: a branch on the read's result answers ${expected}`, async () => {
      const dirs = scratchDirs("pi-branch");
      writeFileSync(join(dirs.ws, "note.txt"), content);
      const { api, url } = await startApi([
        { tool_use: { name: "read", input: { path: "note.txt" } } },
        {
          when_tool_result_contains: "branch-marker-8810",
          then: { text: "found-the-marker" },
          else: { text: "no-marker" },
        },
      ]);
      const r = await pi(url, dirs);
      expect(r.status, `pi failed: ${r.stderr.slice(0, 800)}`).toBe(0);
      expect(r.stdout.trim()).toBe(expected);
      expect(api.failures()).toEqual([]);
    });
  }
});

describe("a script that runs out is a recorded failure, not a hang", () => {
  const ranOut = (api: ScriptedApi) => {
    expect(api.remaining()).toBe(0);
    expect(api.failures().map((f) => [f.kind, f.method, f.url.split("?")[0]])).toEqual([
      ["unmatched", "POST", "/v1/messages"],
    ]);
    expect(api.failures()[0]!.message).toContain("no turn left");
  };

  hasClaude("Claude Code: the call after the last turn gets an error at once and the CLI ends", async () => {
    const dirs = scratchDirs("claude-out");
    const { api, url } = await startApi([
      { tool_use: { name: "Write", input: { file_path: join(dirs.ws, "a.txt"), content: "a\n" } } },
    ]);
    const r = await claude(url, dirs, "Write");
    expect(r.timedOut, "the CLI ended by itself").toBe(false);
    ranOut(api);
    expect(api.messageBodies().length, "no retry after the failure").toBe(2);
    const result = resultLine(r.stdout);
    expect(result?.is_error, `stdout: ${r.stdout.slice(-500)}`).toBe(true);
    expect(result.result, "the failure reaches the CLI's own output").toContain("no turn left");
  });

  // What keeps it from hanging is `x-should-retry: false` on the error: without it Claude Code
  // retries the 500 with backoff (past 40 s, measured). The same run-out with the header removed
  // on purpose is still retrying when a short timeout kills it.
  hasClaude(
    "breaking it on purpose: without x-should-retry, Claude Code retries the error instead of ending",
    async () => {
      const dirs = scratchDirs("claude-out-retry");
      const script = loadModelScript(
        { turns: [{ tool_use: { name: "Write", input: { file_path: join(dirs.ws, "a.txt"), content: "a\n" } } }] },
        { source: "live/scripted-api.test.ts" },
      );
      const api = await startScriptedApi({
        handlers: (rec) => {
          const hs = handlersFor(script, rec);
          const retryable = http.post("*/v1/messages", () => {
            const r = anthropicError(500, "api_error", "scripted API: no turn left (retryable on purpose)");
            r.headers.delete("x-should-retry");
            return r;
          });
          return [...hs.slice(0, -1), retryable, hs.at(-1)!];
        },
      });
      cleanups.push(() => api.stop());
      const r = await claude(api.url, dirs, "Write", 8_000);
      expect(api.messageBodies().length, "the error was retried").toBeGreaterThanOrEqual(3);
      expect(r.timedOut, "still retrying when the timeout struck").toBe(true);
    },
  );

  hasPi("Pi: the call after the last turn gets an error at once and the CLI ends", async () => {
    const dirs = scratchDirs("pi-out");
    const { api, url } = await startApi([{ tool_use: { name: "write", input: { path: "a.txt", content: "a\n" } } }]);
    const r = await pi(url, dirs);
    expect(r.timedOut, "the CLI ended by itself").toBe(false);
    ranOut(api);
    expect(api.messageBodies().length, "no retry after the failure").toBe(2);
    expect(r.status, `stdout: ${r.stdout.slice(-300)} stderr: ${r.stderr.slice(-300)}`).not.toBe(0);
    expect(r.stderr, "the failure reaches the CLI's own output").toContain("no turn left");
  });
});
