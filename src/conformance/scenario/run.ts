// Runs one scenario: a real session through the real launcher and runner (the runtime world: a
// stand-in broker, the founder's stand-ins, a data root under a scratch dir outside /tmp), the
// scripted Messages API as the model upstream, the messages sent and their RESULTs awaited, then
// every assertion judged over what was collected. A session the main one launches is started by
// the launch service (launch-service.ts) and judged over its own evidence. runs/<id>/ keeps it all.
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseInstance } from "../../core/launch/instance.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { makeCanary } from "../traps/canary.ts";
import { startTrap } from "../traps/listener.ts";
import { makeRuntimeWorld } from "../worlds/runtime-world.ts";
import { judge, kindOf, labelOf, type Verdict, type VerdictKind } from "./assert.ts";
import type { Evidence } from "./evidence.ts";
import { startLaunchService, type LaunchService } from "./launch-service.ts";
import type { LaunchedSession, Scenario } from "./load.ts";
import { fillText } from "./template-vars.ts";
import type { Assertion } from "./schema.ts";
import { startSessionRun, valuesOf, type SessionEvidence, type SessionRun, type Values } from "./session-run.ts";

export const RUNS_DIR = join(REPO_ROOT, "runs");

export interface AssertionResult extends Verdict {
  /** The session it was judged on: the scenario's name for the main one, the instance for a launched one. */
  session: string;
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

const FROM = "pm-scenario";
// Short, so the run's sockets stay under the 107-byte limit of a Unix socket path.
const RUN = "run";

/** The harnesses a scenario runs, its main session's first: `fake → claude-code` for a PM launching a coder. */
export const harnessesOf = (s: Scenario): string => [s.harness, ...s.launches.map((l) => l.harness)].join(" → ");

/** The host files a session's file_* assertions name, filled. */
const fileKeysOf = (assertions: readonly Assertion[], values: Values) => assertions.filter((a) => kindOf(a).startsWith("file_")).map((a) => fillText((a as Record<string, string>)[kindOf(a)]!, values));

/** Each assertion of one session judged, or unobserved for the reason it could not be. */
function judgeAll(session: string, prefix: string, assertions: readonly Assertion[], ev: Evidence | null, values: Values, problem: string | null): AssertionResult[] {
  return assertions.map((a): AssertionResult => {
    const v: Verdict = problem !== null || ev === null ? { verdict: "unobserved", detail: problem ?? "no evidence" } : judge(a, ev, values);
    return { session, label: `${prefix}${labelOf(a)}`, because: a.because ?? null, ...v };
  });
}

/** Runs one scenario and writes runs/<id>/; `id` is the scenario's name, with a repeat's index when repeated. */
export async function runScenario(s: Scenario, opts: { id?: string; runsDir?: string } = {}): Promise<ScenarioResult> {
  const id = opts.id ?? s.name;
  const out = join(opts.runsDir ?? RUNS_DIR, id);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const t0 = Date.now();
  const events: object[] = [];
  const eventOf = (session: string) => (what: string, extra: object = {}) => events.push({ t: Date.now() - t0, session, event: what, ...extra });
  const event = eventOf(s.name);
  const w = await makeRuntimeWorld("scn");
  let problem: string | null = null;
  const canary = makeCanary("stand-in-real-key");
  const ws = join(w.data, "workspaces/acme", s.name);
  const runDir = join(w.data, "runs", RUN);
  const trap = s.networkTrap ? await startTrap({ tcp: "127.0.0.1" }) : null;
  // A neighbour holding the secret in its environment: what a read of /proc/*/environ would find.
  const neighbour = s.neighbourProcess ? spawn("sleep", ["600"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FAKE_TOKEN: w.stand.secret }, stdio: "ignore" }) : null;
  const extra = { trapPort: trap?.port ?? null, canary };
  const values = valuesOf(w, { workspace: ws, run: runDir, mainWorkspace: ws, mainRun: runDir }, extra);
  const hostEnv = { ...w.hostEnv, ANTHROPIC_API_KEY: canary, MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude") };
  let main: SessionRun | null = null;
  let service: LaunchService | null = null;
  let ev: SessionEvidence | null = null;
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
    const plantRunFiles = () => {
      for (const [rel, body] of Object.entries(s.runFiles)) {
        const f = join(runDir, fillText(rel, values));
        mkdirSync(dirname(f), { recursive: true });
        writeFileSync(f, fillText(body, values));
      }
    };
    main = await startSessionRun({ w, spec: s, instance, values, hostEnv, turnTimeoutSeconds: s.turnTimeoutSeconds, fileKeys: fileKeysOf(s.assertions, values), event, afterStart: plantRunFiles });
    if (s.launches.length > 0) {
      service = startLaunchService(w, RUN, s.launches, (spec: LaunchedSession, l, run) => {
        const name = spec.instance.instance;
        const lws = join(w.data, "workspaces/acme", name);
        mkdirSync(lws, { recursive: true, mode: 0o755 });
        const lvalues = valuesOf(w, { workspace: lws, run: join(w.data, "runs", run), mainWorkspace: ws, mainRun: runDir }, extra);
        // launchedBy is the caller the broker's capability names, not what the scenario says.
        const linstance = parseInstance({ ...spec.instance, workspace: lws, run, launchedBy: l.by });
        return { w, spec, instance: linstance, values: lvalues, hostEnv, turnTimeoutSeconds: s.turnTimeoutSeconds, fileKeys: fileKeysOf(spec.assertions, lvalues), event: eventOf(name) };
      });
    }
    for (const m of s.messages) await main.ask(fillText(m.body, values), FROM);
    await service?.settle();
  } catch (e) {
    problem = (e as Error).message;
    event("problem", { problem });
  }
  await service?.finish(out);
  if (main !== null) ev = await main.finish(out);
  neighbour?.kill("SIGKILL");
  const standIns = [w.stand.secret, canary];
  const trapConnections = trap?.hits() ?? null;
  await trap?.close();
  await w.close();

  const evidenceOf = (e: SessionEvidence | null): Evidence | null => (e === null ? null : { ...e, trapConnections, standIns });
  const assertions = judgeAll(s.name, "", s.assertions, evidenceOf(ev), values, problem === null ? null : `the run did not complete: ${problem}`);
  for (const spec of s.launches) {
    const name = spec.instance.instance;
    const r = service?.runs().find((x) => x.spec === spec);
    const why = problem !== null ? `the run did not complete: ${problem}` : r === undefined ? `${s.name} never launched ${name}` : r.problem === null ? null : `the launched session did not complete: ${r.problem}`;
    assertions.push(...judgeAll(name, `${name}: `, spec.assertions, evidenceOf(r?.evidence ?? null), r?.setup.values ?? values, why));
  }
  for (const stray of service?.strays() ?? []) assertions.push({ session: s.name, label: `launch ${stray.launch.instance}`, because: "a launch the broker accepted must start a session", verdict: "fail", detail: stray.why });
  const result: ScenarioResult = {
    name: s.name, harness: harnessesOf(s), seconds: (Date.now() - t0) / 1000, problem, assertions,
    verdict: assertions.every((a) => a.verdict === "pass") ? "pass" : "fail", runDir: out,
  };
  event("verdict", { verdict: result.verdict });
  writeFileSync(join(out, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(join(out, "verdict.json"), JSON.stringify(result, null, 2) + "\n");
  return result;
}

/** Counts by verdict, for the summary line. */
export function tally(results: readonly ScenarioResult[]): Record<VerdictKind, number> {
  const t: Record<VerdictKind, number> = { pass: 0, fail: 0, unobserved: 0 };
  for (const r of results) for (const a of r.assertions) t[a.verdict]++;
  return t;
}
