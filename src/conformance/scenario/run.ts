// Runs one scenario: a real session through the real launcher and runner (the runtime world: a
// stand-in broker, the founder's stand-ins, a data root under a scratch dir outside /tmp), the
// scripted Messages API as the model upstream, the messages sent and their RESULTs awaited, then
// every assertion judged over what was collected. runs/<id>/ keeps the evidence.
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { dirname, join, relative } from "node:path";
import { parseInstance } from "../../core/launch/instance.ts";
import type { EgressRecord } from "../../core/network/egress.ts";
import { egressLogPath } from "../../host/model-proxy.ts";
import { REPO_ROOT } from "../golden.ts";
import { fillPlaceholders } from "../model-script/format.ts";
import { claudeProjectSlug } from "../memory-probe.ts";
import { makeRuntimeWorld, prepareLaunch, start, waitClaimed, type RuntimeWorld } from "../runtime-world.ts";
import { startScriptedApi, type ScriptedApi } from "../scripted-api.ts";
import { judge, kindOf, labelOf, type Verdict, type VerdictKind } from "./assert.ts";
import type { Evidence } from "./evidence.ts";
import { applyBreak, applyFault } from "./knobs.ts";
import type { Scenario } from "./load.ts";
import { fillText, SCENARIO_PLACEHOLDERS, type PlaceholderName } from "./placeholders.ts";

export const RUNS_DIR = join(REPO_ROOT, "runs");

export interface AssertionResult extends Verdict {
  label: string;
  because: string | null;
}

export interface ScenarioResult {
  name: string;
  harness: string;
  seconds: number;
  /** Set when the run could not be set up or carried out: every assertion is then unobserved. */
  problem: string | null;
  assertions: AssertionResult[];
  /** pass when every assertion passed. */
  verdict: "pass" | "fail";
  runDir: string;
}

const MESSAGE_TIMEOUT_MS = 90_000;
const FROM = "pm-scenario";
// Short, so the run's sockets stay under the 107-byte limit of a Unix socket path.
const RUN = "run";

/** The run's placeholder values, every name of SCENARIO_PLACEHOLDERS. */
function valuesOf(w: RuntimeWorld, workspace: string, run: string, extra: { trapPort: number | null; canary: string }): Record<PlaceholderName, string> {
  const home = join(run, "home");
  return {
    workspace, run, home, repo: REPO_ROOT, data_root: w.data, founder_home: w.stand.founderHome,
    workspace_slug: claudeProjectSlug(workspace), trap_port: String(extra.trapPort ?? 0), canary: extra.canary,
    ssh_key: w.stand.files.sshKey, secrets_env: w.stand.files.secretsEnv,
    secrets_env_via_home: `~/${relative(home, w.stand.files.secretsEnv)}`,
    mosaic_state: w.stand.files.mosaicState, git_credentials: w.stand.files.gitCredentials,
    other_workspace: w.stand.files.otherWorkspace, secret: w.stand.secret,
  };
}

const sha256 = (f: string): string | null => (existsSync(f) ? createHash("sha256").update(readFileSync(f)).digest("hex") : null);

/** A TCP listener on the host's loopback that counts the connections it accepts: a network trap. */
async function startTrap(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((c) => {
    n++;
    c.destroy();
  });
  await new Promise<void>((ok, bad) => server.once("error", bad).listen(0, "127.0.0.1", ok));
  return { port: (server.address() as AddressInfo).port, connections: () => n, close: () => new Promise((ok) => server.close(() => ok())) };
}

/** Every regular file under the directories, by path; a file over 1 MiB is read as its first MiB. */
function readTree(dirs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile()) out[f] = readFileSync(f).subarray(0, 1 << 20).toString("utf8");
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

/** Sends one message and waits for its RESULT; a runner that exited, or the timeout, ends the wait with none. */
async function replyTo(w: RuntimeWorld, instance: string, body: string, over: () => boolean): Promise<{ body: string | null; why?: string }> {
  const id = w.broker.deliver(instance, { from: FROM, body });
  for (const t0 = Date.now(); Date.now() - t0 < MESSAGE_TIMEOUT_MS; ) {
    const reply = w.broker.sentTo(FROM).find((m) => m.kind === "result" && m.replyTo === id);
    if (reply !== undefined) return { body: reply.body };
    if (over()) return { body: null, why: "the runner exited before it replied" };
    await new Promise((ok) => setTimeout(ok, 25));
  }
  return { body: null, why: `no reply within ${MESSAGE_TIMEOUT_MS} ms` };
}

/** Runs one scenario and writes runs/<id>/; `id` is the scenario's name, with a repeat's index when repeated. */
export async function runScenario(s: Scenario, opts: { id?: string; runsDir?: string } = {}): Promise<ScenarioResult> {
  const id = opts.id ?? s.name;
  const out = join(opts.runsDir ?? RUNS_DIR, id);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const t0 = Date.now();
  const events: object[] = [];
  const event = (what: string, extra: object = {}) => events.push({ t: Date.now() - t0, event: what, ...extra });
  const w = await makeRuntimeWorld("scn");
  let api: ScriptedApi | null = null;
  let problem: string | null = null;
  const replies: Array<string | null> = [];
  const canary = `stand-in-real-key-${randomUUID()}`;
  const ws = join(w.data, "workspaces/acme", s.name);
  const runDir = join(w.data, "runs", RUN);
  const trap = s.networkTrap ? await startTrap() : null;
  // A neighbour holding the secret in its environment: what a read of /proc/*/environ would find.
  const neighbour = s.neighbourProcess ? spawn("sleep", ["600"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FAKE_TOKEN: w.stand.secret }, stdio: "ignore" }) : null;
  const values = valuesOf(w, ws, runDir, { trapPort: trap?.port ?? null, canary });
  const fileKeys = s.assertions.filter((a) => kindOf(a).startsWith("file_")).map((a) => fillText((a as Record<string, string>)[kindOf(a)]!, values));
  const files: Record<string, { before: string | null; after: string | null }> = {};
  let stderr: string[] = [];
  let hadProxy = false;
  let exit: number | null = null;
  try {
    mkdirSync(ws, { recursive: true, mode: 0o755 });
    for (const [rel, body] of Object.entries(s.workspace.files)) {
      mkdirSync(dirname(join(ws, rel)), { recursive: true });
      writeFileSync(join(ws, rel), fillText(body, values));
    }
    for (const [rel, target] of Object.entries(s.workspace.links)) {
      mkdirSync(dirname(join(ws, fillText(rel, values))), { recursive: true });
      symlinkSync(fillText(target, values), join(ws, fillText(rel, values)));
    }
    const instance = parseInstance({ ...s.instance, workspace: ws, run: RUN, instance: s.name });
    // The fake harness gets a scripted API with no turns too: a model call from its shell is a recorded failure, never a call to the public API.
    const scriptValues = Object.fromEntries(Object.entries(values).filter(([k]) => !SCENARIO_PLACEHOLDERS[k as PlaceholderName].assertionsOnly));
    api = await startScriptedApi({ ...(s.model !== null ? { script: fillPlaceholders(s.model, scriptValues) } : {}), onFailure: (f) => event("model-failure", f) });
    event("model-up", { url: api.url, turns: s.model?.turns.length ?? 0 });
    const hostEnv = { ...w.hostEnv, ANTHROPIC_API_KEY: canary, MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude") };
    const req = w.request(instance, {
      adapter: s.harness === "fake" ? w.request(instance).adapter! : { kind: "harness" },
      hostEnv,
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: s.turnTimeoutSeconds },
      modelUpstream: api.url,
    });
    const prepared = prepareLaunch(req);
    if (prepared.kind === "refuse") throw new Error(`the launcher refused: ${prepared.code}: ${prepared.message}`);
    const p = applyFault(s, ws, REPO_ROOT, applyBreak(s, w, prepared.prepared));
    const session = start(p);
    hadProxy = p.session.sessionFile.model !== null;
    event("launched", { run: RUN, harness: s.harness, break: s.break, fault: s.fault });
    for (const [rel, body] of Object.entries(s.runFiles)) {
      const f = join(runDir, fillText(rel, values));
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(f, fillText(body, values));
    }
    // Hashed once the launch has written the bundle and session.json, before any message: nothing in the sandbox has acted yet.
    for (const f of fileKeys) files[f] = { before: sha256(f), after: null };
    try {
      await waitClaimed(w, session, RUN);
      let over = false;
      void session.exited.then(() => (over = true));
      event("claimed");
      for (const [i, m] of s.messages.entries()) {
        const body = fillText(m.body, values);
        event("message", { n: i + 1, body });
        const reply = await replyTo(w, s.name, body, () => over);
        replies.push(reply.body);
        event(reply.body === null ? "no-reply" : "reply", reply);
      }
    } finally {
      const end = await session.stop();
      event("stopped", { reason: end.reason, end: end.end });
      exit = end.end.kind === "code" ? end.end.code : null;
      stderr = [end.stderr];
      writeFileSync(join(out, "runner.stderr"), end.stderr);
    }
    const turns = join(runDir, "turns");
    if (existsSync(turns)) {
      mkdirSync(join(out, "turns"));
      for (const n of readdirSync(turns).filter((n) => n.endsWith(".stderr")).sort()) {
        copyFileSync(join(turns, n), join(out, "turns", n));
        stderr.push(readFileSync(join(turns, n), "utf8"));
      }
    }
  } catch (e) {
    problem = (e as Error).message;
    event("problem", { problem });
  }
  for (const f of fileKeys) files[f] = { before: files[f]?.before ?? null, after: sha256(f) };
  const egressFile = egressLogPath(w.stateDir, RUN);
  // The proxy writes its log at its first request: a proxy that saw none leaves no file, and an empty log.
  const egress = existsSync(egressFile) ? readFileSync(egressFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as EgressRecord) : hadProxy ? [] : null;
  if (existsSync(egressFile)) copyFileSync(egressFile, join(out, "egress.jsonl"));
  const broker = w.broker.records().filter((r) => r.run === RUN);
  const transcripts = readTree([join(runDir, "home"), join(runDir, "session")]);
  const trapConnections = trap?.connections() ?? null;
  const ev: Evidence = { replies, requests: api?.requests() ?? null, broker, egress, stderr, files, exit, transcripts, trapConnections, standIns: [w.stand.secret, canary] };
  neighbour?.kill("SIGKILL");
  await trap?.close();
  await api?.stop();
  await w.close();

  const assertions = s.assertions.map((a): AssertionResult => {
    const v: Verdict = problem !== null ? { verdict: "unobserved", detail: `the run did not complete: ${problem}` } : judge(a, ev, values);
    return { label: labelOf(a), because: a.because ?? null, ...v };
  });
  const result: ScenarioResult = {
    name: s.name, harness: s.harness, seconds: (Date.now() - t0) / 1000, problem, assertions,
    verdict: assertions.every((a) => a.verdict === "pass") ? "pass" : "fail", runDir: out,
  };
  event("verdict", { verdict: result.verdict });
  writeFileSync(join(out, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(join(out, "requests.json"), JSON.stringify(ev.requests ?? [], null, 2) + "\n");
  // The capabilities were the stand-in broker's and are void now; they are still kept out of the record.
  writeFileSync(join(out, "broker.json"), JSON.stringify(broker.map((r) => ({ ...r, cap: r.cap === null ? null : "<capability>" })), null, 2) + "\n");
  writeFileSync(join(out, "verdict.json"), JSON.stringify(result, null, 2) + "\n");
  return result;
}

/** Counts by verdict, for the summary line. */
export function tally(results: readonly ScenarioResult[]): Record<VerdictKind, number> {
  const t: Record<VerdictKind, number> = { pass: 0, fail: 0, unobserved: 0 };
  for (const r of results) for (const a of r.assertions) t[a.verdict]++;
  return t;
}
