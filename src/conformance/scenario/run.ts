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
import { judge, kindOf, labelOf, type AssertionVerdict, type AssertionVerdictKind } from "./assert.ts";
import type { Evidence } from "./evidence.ts";
import { startLaunchService, type LaunchService } from "./launch-service.ts";
import type { LaunchedSession, Scenario } from "./load.ts";
import { fillText } from "./template-vars.ts";
import { scenarioVerdict } from "./verdict.ts";
import type { Assertion } from "./schema.ts";
import { startSessionRun, valuesOf, type SessionEvidence, type SessionRun, type Values } from "./session-run.ts";

export const RUNS_DIR = join(REPO_ROOT, "runs");

export interface AssertionResult extends AssertionVerdict {
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
const fileKeysOf = (assertions: readonly Assertion[], values: Values) =>
  assertions
    .filter((a) => kindOf(a).startsWith("file_"))
    .map((a) => fillText((a as Record<string, string>)[kindOf(a)]!, values));

/** Each assertion of one session judged, or unobserved for the reason it could not be. */
function judgeAll(
  session: string,
  prefix: string,
  assertions: readonly Assertion[],
  ev: Evidence | null,
  values: Values,
  problem: string | null,
): AssertionResult[] {
  return assertions.map((a): AssertionResult => {
    const v: AssertionVerdict =
      problem !== null || ev === null
        ? { verdict: "unobserved", detail: problem ?? "no evidence" }
        : judge(a, ev, values);
    return { session, label: `${prefix}${labelOf(a)}`, because: a.because ?? null, ...v };
  });
}

/** Runs one scenario and writes runs/<id>/; `id` is the scenario's name, with a repeat's index when repeated. */
type Stage = Awaited<ReturnType<typeof setUpStage>>;
type EventOf = (session: string) => (what: string, extra?: object) => void;

export async function runScenario(s: Scenario, opts: { id?: string; runsDir?: string } = {}): Promise<ScenarioResult> {
  const out = join(opts.runsDir ?? RUNS_DIR, opts.id ?? s.name);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const t0 = Date.now();
  const events: object[] = [];
  const eventOf: EventOf =
    (session) =>
    (what, extra = {}) =>
      events.push({ t: Date.now() - t0, session, event: what, ...extra });
  const stage = await setUpStage(s);
  const { main, service, problem } = await carryOut(s, stage, eventOf);
  await service?.finish(out);
  const ev = main === null ? null : await main.finish(out);
  // The leak check looks for the host's credential too: a session that held it could send it anywhere.
  const standIns = [stage.w.stand.secret, stage.canary]; // safety: leak-check-drops-canary
  const trapConnections = await tearDownStage(stage);
  const evidenceOf = (e: SessionEvidence | null): Evidence | null =>
    e === null ? null : { ...e, trapConnections, standIns };
  const assertions = judgeScenario(s, stage.values, evidenceOf(ev), service, evidenceOf, problem);
  const result: ScenarioResult = {
    name: s.name,
    harness: harnessesOf(s),
    seconds: (Date.now() - t0) / 1000,
    problem,
    assertions,
    verdict: scenarioVerdict(assertions),
    runDir: out,
  };
  eventOf(s.name)("verdict", { verdict: result.verdict });
  writeFileSync(join(out, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(join(out, "verdict.json"), JSON.stringify(result, null, 2) + "\n");
  return result;
}

/** The runtime world, the scenario's workspace and run paths, its canary, trap and neighbour. */
async function setUpStage(s: Scenario) {
  const w = await makeRuntimeWorld("scn");
  const canary = makeCanary("stand-in-real-key");
  const ws = join(w.data, "workspaces/acme", s.name);
  const runDir = join(w.data, "runs", RUN);
  const trap = s.networkTrap ? await startTrap({ tcp: "127.0.0.1" }) : null;
  // A neighbour holding the secret in its environment: what a read of /proc/*/environ would find.
  const neighbour = s.neighbourProcess
    ? spawn("sleep", ["600"], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FAKE_TOKEN: w.stand.secret },
        stdio: "ignore",
      })
    : null;
  const extra = { trapPort: trap?.port ?? null, canary };
  const values = valuesOf(w, { workspace: ws, run: runDir, mainWorkspace: ws, mainRun: runDir }, extra);
  const hostEnv = {
    ...w.hostEnv,
    ANTHROPIC_API_KEY: canary,
    MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude"),
  };
  return { w, canary, ws, runDir, trap, neighbour, extra, values, hostEnv };
}

/** Ends the neighbour, the trap and the world; returns how many connections reached the trap. */
async function tearDownStage(stage: Stage): Promise<number | null> {
  stage.neighbour?.kill("SIGKILL");
  const trapConnections = stage.trap?.hits() ?? null;
  await stage.trap?.close();
  await stage.w.close();
  return trapConnections;
}

/** Plants the workspace, starts the main session and the launch service, sends every message. A failure is the run's problem, not a throw. */
async function carryOut(
  s: Scenario,
  stage: Stage,
  eventOf: EventOf,
): Promise<{ main: SessionRun | null; service: LaunchService | null; problem: string | null }> {
  const { w, ws, runDir, values, hostEnv } = stage;
  let main: SessionRun | null = null;
  let service: LaunchService | null = null;
  try {
    plantWorkspace(s, ws, values);
    const instance = parseInstance({ ...s.instance, workspace: ws, run: RUN, instance: s.name });
    const plantRunFiles = () => {
      for (const [rel, body] of Object.entries(s.runFiles)) {
        const f = join(runDir, fillText(rel, values));
        mkdirSync(dirname(f), { recursive: true });
        writeFileSync(f, fillText(body, values));
      }
    };
    main = await startSessionRun({
      w,
      spec: s,
      instance,
      values,
      hostEnv,
      turnTimeoutSeconds: s.turnTimeoutSeconds,
      fileKeys: fileKeysOf(s.assertions, values),
      event: eventOf(s.name),
      afterStart: plantRunFiles,
    });
    if (s.launches.length > 0)
      service = startLaunchService(w, RUN, s.launches, (spec, l, run) =>
        launchedSetup(s, stage, eventOf, spec, l.by, run),
      );
    for (const m of s.messages) await main.ask(fillText(m.body, values), FROM);
    await service?.settle();
    return { main, service, problem: null };
  } catch (e) {
    const problem = (e as Error).message;
    eventOf(s.name)("problem", { problem });
    return { main, service, problem };
  }
}

function plantWorkspace(s: Scenario, ws: string, values: Values): void {
  mkdirSync(ws, { recursive: true, mode: 0o755 });
  for (const [rel, body] of Object.entries(s.workspace.files)) {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), fillText(body, values));
  }
  for (const [rel, target] of Object.entries(s.workspace.links)) {
    mkdirSync(dirname(join(ws, fillText(rel, values))), { recursive: true });
    symlinkSync(fillText(target, values), join(ws, fillText(rel, values)));
  }
}

/** The setup of a session the main one launched: its own workspace and values. */
function launchedSetup(s: Scenario, stage: Stage, eventOf: EventOf, spec: LaunchedSession, by: string, run: string) {
  const { w, ws, runDir, extra, hostEnv } = stage;
  const name = spec.instance.instance;
  const lws = join(w.data, "workspaces/acme", name);
  mkdirSync(lws, { recursive: true, mode: 0o755 });
  const lvalues = valuesOf(
    w,
    { workspace: lws, run: join(w.data, "runs", run), mainWorkspace: ws, mainRun: runDir },
    extra,
  );
  // launchedBy is the caller the broker's capability names, not what the scenario says.
  const linstance = parseInstance({ ...spec.instance, workspace: lws, run, launchedBy: by });
  return {
    w,
    spec,
    instance: linstance,
    values: lvalues,
    hostEnv,
    turnTimeoutSeconds: s.turnTimeoutSeconds,
    fileKeys: fileKeysOf(spec.assertions, lvalues),
    event: eventOf(name),
  };
}

/** Every assertion of the main session and of each launched one, and a fail for each stray launch. */
function judgeScenario(
  s: Scenario,
  values: Values,
  main: Evidence | null,
  service: LaunchService | null,
  evidenceOf: (e: SessionEvidence | null) => Evidence | null,
  problem: string | null,
): AssertionResult[] {
  const assertions = judgeAll(
    s.name,
    "",
    s.assertions,
    main,
    values,
    problem === null ? null : `the run did not complete: ${problem}`,
  );
  for (const spec of s.launches) {
    const name = spec.instance.instance;
    const r = service?.runs().find((x) => x.spec === spec);
    const why =
      problem !== null
        ? `the run did not complete: ${problem}`
        : r === undefined
          ? `${s.name} never launched ${name}`
          : r.problem === null
            ? null
            : `the launched session did not complete: ${r.problem}`;
    assertions.push(
      ...judgeAll(name, `${name}: `, spec.assertions, evidenceOf(r?.evidence ?? null), r?.setup.values ?? values, why),
    );
  }
  for (const stray of service?.strays() ?? [])
    assertions.push({
      session: s.name,
      label: `launch ${stray.launch.instance}`,
      because: "a launch the broker accepted must start a session",
      verdict: "fail",
      detail: stray.why,
    });
  return assertions;
}

/** Counts by verdict, for the summary line. */
export function tally(results: readonly ScenarioResult[]): Record<AssertionVerdictKind, number> {
  const t: Record<AssertionVerdictKind, number> = { pass: 0, fail: 0, unobserved: 0 };
  for (const r of results) for (const a of r.assertions) t[a.verdict]++;
  return t;
}
