// `mosaic-harness run`: loads every scenario first (a bad one stops the run before any session),
// checks the sandbox can be set up, runs each scenario as a real session, prints the verdict.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, resolve } from "node:path";
import { checkoutProblem } from "../conformance/tiers/live-gate.ts";
import {
  formatScenarioError,
  loadScenario,
  ScenarioError,
  scenarioFiles,
  type Scenario,
} from "../conformance/scenario/load.ts";
import { renderJunit, renderSummary, renderTable, type ScenarioRuns } from "../conformance/scenario/report.ts";
import { RUNS_DIR, harnessesOf, type ScenarioResult } from "../conformance/scenario/run.ts";
import { runPool, runScenarioInChild } from "../conformance/scenario/schedule.ts";
import { runExitCode } from "../conformance/scenario/verdict.ts";
import { readHostFacts } from "../host/host-facts.ts";
import { sandboxProblem } from "../host/sandbox-probe.ts";
import type { CliCommand } from "./args.ts";

/** The checkout this CLI runs from: scenarios, the runner and node_modules are read from it. */
const REPO_ROOT = resolve(import.meta.dirname, "../..");

type RunCommand = Extract<CliCommand, { kind: "run" }>;

function filesOf(paths: readonly string[]): string[] {
  if (paths.length === 0) return scenarioFiles();
  return paths.flatMap((p) => {
    const abs = resolve(p);
    return statSync(abs, { throwIfNoEntry: false })?.isDirectory() ? scenarioFiles(abs) : [abs];
  });
}

export async function runCommand(cmd: RunCommand): Promise<number> {
  let scenarios: Array<Scenario & { file: string }>;
  try {
    scenarios = filesOf(cmd.paths).map((f) => ({ ...loadScenario(f), file: f }));
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    console.error(`mosaic-harness run: ${formatScenarioError(e)}`);
    return 2;
  }
  if (cmd.only !== null) {
    const unknown = cmd.only.filter((id) => !scenarios.some((s) => s.name === id));
    if (unknown.length > 0) {
      console.error(
        `mosaic-harness run: --only: no scenario named ${unknown.join(", ")} (have ${scenarios.map((s) => s.name).join(", ")})`,
      );
      return 2;
    }
    scenarios = scenarios.filter((s) => cmd.only!.includes(s.name));
  }
  if (scenarios.length === 0) {
    console.error("mosaic-harness run: no scenario to run");
    return 2;
  }
  const problem = checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT }));
  if (problem !== null) {
    console.error(`mosaic-harness run: the sandbox cannot be set up: ${problem}`);
    return 3;
  }
  const progress = (line: string) => (cmd.json ? process.stderr : process.stdout).write(line);
  const jobs = cmd.jobs ?? availableParallelism();
  // Every (scenario, repeat) is a task; each has its own world, and results come back in task order.
  const tasks = scenarios.flatMap((s) => Array.from({ length: cmd.repeat }, (_, i) => ({ s, k: i + 1 })));
  progress(`${tasks.length} scenario run${tasks.length === 1 ? "" : "s"}, up to ${jobs} at once\n`);
  const results: ScenarioResult[] = await runPool(
    tasks,
    jobs,
    ({ s, k }) => {
      const id = cmd.repeat === 1 ? s.name : `${s.name}.${k}`;
      return runScenarioInChild(s.file, id, {
        name: s.name,
        harness: harnessesOf(s),
        assertions: s.assertions.length + s.launches.reduce((n, l) => n + l.assertions.length, 0),
        runDir: join(RUNS_DIR, id),
      });
    },
    (r, i) => {
      const { s, k } = tasks[i]!;
      progress(
        `${r.verdict === "pass" ? "ok  " : "FAIL"} ${s.name} (${r.harness}${cmd.repeat > 1 ? `, run ${k}/${cmd.repeat}` : ""}) ${r.seconds.toFixed(1)} s\n`,
      );
    },
  );
  const all: ScenarioRuns[] = scenarios.map((s, n) => ({
    name: s.name,
    harness: harnessesOf(s),
    runs: results.slice(n * cmd.repeat, (n + 1) * cmd.repeat),
  }));
  if (cmd.json) process.stdout.write(JSON.stringify({ scenarios: all }, null, 2) + "\n");
  else process.stdout.write("\n" + renderTable(all) + "\n" + renderSummary(all));
  if (cmd.junit !== null) {
    mkdirSync(dirname(resolve(cmd.junit)), { recursive: true });
    writeFileSync(resolve(cmd.junit), renderJunit(all));
  }
  return runExitCode(all);
}
