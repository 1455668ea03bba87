// One arm of live/model-proxy-isolation.test.ts, as its own host process: the real launcher, two
// fake-adapter sessions (an attacker and another session) whose model calls go through the real
// runner and this host's proxies to a scripted upstream. The attacker's shell sends the review's
// two findings to its model port: HEAD / with a Trailer header, and 28 MiB of {}. The host then
// reports on itself (its memory, its event loop's longest stall), on the other session's model
// call, on the attacker's own next call, and on what the upstream received.
// `node live/support/model-proxy-as.ts <root> shipped|control`. In `control` the attacker's socket
// is served instead by live/support/in-process-proxy.ts (the old design's failure mode, in a
// process of its own so this host can report on it); the other session keeps the shipped proxy.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { scriptOf } from "../../src/conformance/stand-ins/model-script/format.ts";
import { startScriptedApi } from "../../src/conformance/stand-ins/scripted-api.ts";
import { ask, launchAndClaim, makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { runSockets } from "../../src/core/runner/run-paths.ts";

export type IsolationObserved = {
  uid: number;
  arm: string;
  /** The attacker's shell: what each request got (a status line, a status, or an error). */
  attacker: { headTrailer: string; empties: string; callAfter: string };
  /** The other session's plain model call, after the attack. */
  other: string;
  /** What the upstream received: method, path, and whether a Trailer header came with it. */
  upstream: Array<{ method: string; url: string; trailer: boolean; bytes: number }>;
  host: { rssGrowth: number; maxLagMs: number };
  /** The control's in-process proxy: how it ended after the Trailer request, and its stall and memory under the {} body. */
  inProcess: { afterTrailer: string; maxLagMs: number; peakRss: number } | null;
};

const [root, arm] = process.argv.slice(2) as [string, "shipped" | "control"];

const ATTACK = String.raw`
import { connect } from "node:net";
const which = process.argv[2];
const raw = (bytes) => new Promise((ok) => {
  const c = connect(8787, "127.0.0.1");
  let got = "";
  c.on("data", (d) => (got += d));
  c.on("error", (e) => ok("error " + e.code));
  c.on("close", () => ok(got.split("\r\n")[0] || "closed with no answer"));
  c.write(bytes);
  setTimeout(() => c.destroy(), 10000);
});
const post = async (body) => {
  try {
    const r = await fetch("http://127.0.0.1:8787/v1/messages", { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(60000) });
    await r.text();
    return String(r.status);
  } catch (e) { return "error " + (e.cause?.code ?? e.name); }
};
let out;
if (which === "trailer") out = await raw("HEAD / HTTP/1.1\r\nhost: 127.0.0.1\r\ntrailer: x-checksum\r\nconnection: close\r\n\r\n");
if (which === "empties") out = await post('{"model":"m","max_tokens":8,"messages":[' + "{},".repeat((28 * 1024 * 1024) / 3) + "{}]}");
if (which === "call") out = await post(JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }));
console.log("RESULT " + out);
`;

const w = await makeRuntimeWorld("isolation", { root });
// The host's state (the seccomp program, the runner's node) is this identity's own.
w.hostEnv.MOSAIC_STATE_DIR = w.stateDir;
const api = await startScriptedApi({
  script: scriptOf(Array.from({ length: 6 }, (_, i) => ({ text: `answer ${i}` }))),
});
const TIMINGS = { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 120 };
const launchOne = async (name: string) => {
  const inst = w.instance("pi-coder", name, { instance: name });
  writeFileSync(join(inst.workspace, "attack.mjs"), ATTACK);
  const req = w.request(inst, {
    modelUpstream: api.url,
    hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: "stand-in-real-key-isolation" },
    timings: TIMINGS,
  });
  return { run: req.runDir, session: await launchAndClaim(w, req) };
};
const attacker = await launchOne("attacker");
const other = await launchOne("other");
const turn = async (instance: string, what: string) =>
  (
    (await ask(w, instance, `node attack.mjs ${what}`, "pm-isolation", 150_000))
      .split("\n")
      .find((l) => l.startsWith("RESULT ")) ?? "RESULT (no result)"
  ).slice(7);

/** The control's stand-in on the attacker's socket: started, and asked for its report. */
function inProcessProxy(): {
  child: ChildProcess;
  ready: Promise<void>;
  stderr: () => string;
  report: () => Promise<string | null>;
} {
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "live/support/in-process-proxy.ts"), runSockets(attacker.run).model, api.url],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const until = async (f: () => boolean) => {
    for (let t0 = Date.now(); !f() && Date.now() - t0 < 15_000 && child.exitCode === null; )
      await new Promise((r) => setTimeout(r, 20));
  };
  return {
    child,
    ready: until(() => lines.includes("listening")),
    stderr: () => stderr.slice(0, 600),
    report: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return null;
      child.stdin!.write("report\n");
      await until(() => lines.some((l) => l.startsWith("REPORT ")));
      return lines.find((l) => l.startsWith("REPORT "))?.slice(7) ?? null;
    },
  };
}

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
let maxLagMs = 0;
let last = performance.now();
const sampler = setInterval(() => {
  const now = performance.now();
  maxLagMs = Math.max(maxLagMs, now - last - 50);
  last = now;
}, 50);
const rss0 = rss();
let inProcess: IsolationObserved["inProcess"] = null;
let headTrailer: string;
let empties: string;
if (arm === "control") {
  const first = inProcessProxy();
  await first.ready;
  headTrailer = await turn("attacker", "trailer");
  await new Promise((r) => setTimeout(r, 300));
  const ended = first.child.exitCode !== null || first.child.signalCode !== null;
  const afterTrailer = ended ? `ended (exit ${first.child.exitCode}): ${first.stderr()}` : "alive";
  const second = inProcessProxy();
  await second.ready;
  empties = await turn("attacker", "empties");
  const r = JSON.parse((await second.report()) ?? '{"maxLagMs":-1,"peakRss":-1}') as {
    maxLagMs: number;
    peakRss: number;
  };
  inProcess = { afterTrailer, ...r };
  second.child.kill("SIGKILL");
} else {
  headTrailer = await turn("attacker", "trailer");
  empties = await turn("attacker", "empties");
}
const otherCall = await turn("other", "call");
const callAfter = arm === "shipped" ? await turn("attacker", "call") : "(not asked: the control's stand-in is gone)";
clearInterval(sampler);
const observed: IsolationObserved = {
  uid: process.getuid?.() ?? -1,
  arm,
  attacker: { headTrailer, empties, callAfter },
  other: otherCall,
  upstream: api.requests().map((r) => ({
    method: r.method,
    url: r.url,
    trailer: r.headers.trailer !== undefined,
    bytes: r.body.length,
  })),
  host: { rssGrowth: rss() - rss0, maxLagMs: Math.round(maxLagMs) },
  inProcess,
};
await attacker.session.stop();
await other.session.stop();
await api.stop();
await w.close();
process.stdout.write(JSON.stringify(observed) + "\n");
process.exit(0);
