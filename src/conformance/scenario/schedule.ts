// Runs scenario tasks side by side, at most `jobs` at once. Each scenario runs in its own process
// with its own world (scratch root, data root, broker, launcher state, scripted API port), so
// nothing but the machine is shared; results come back in the order the tasks were given, whatever
// order they finished in, so the verdict table is the same at any `jobs`.
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { ScenarioResult } from "./run.ts";

/** Runs every task once, at most `jobs` at a time; `done` hears each as it finishes. */
export async function runPool<T, R>(
  tasks: readonly T[],
  jobs: number,
  run: (task: T, index: number) => Promise<R>,
  done: (result: R, index: number) => void = () => {},
): Promise<R[]> {
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new RangeError(`jobs must be a whole number of 1 or more, got ${jobs}`);
  const results: R[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await run(tasks[i]!, i);
      done(results[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  return results;
}

const CHILD = join(import.meta.dirname, "run-child.ts");

/**
 * One scenario in its own process (run-child.ts). A child that dies or prints no result gives a
 * result whose problem says so, naming its exit and its last stderr: every assertion unobserved.
 */
export function runScenarioInChild(
  file: string,
  id: string,
  placeholder: { name: string; harness: string; assertions: number; runDir: string },
): Promise<ScenarioResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, file, id], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err = (err + d).slice(-4000)));
    const t0 = Date.now();
    child.on("close", (code, signal) => {
      const last = out.trimEnd().split("\n").at(-1) ?? "";
      try {
        const r = JSON.parse(last) as ScenarioResult;
        if (typeof r === "object" && r !== null && Array.isArray(r.assertions)) return resolve(r);
      } catch {
        // no result line: reported below
      }
      const problem = `the scenario's process ended (${signal ?? `exit ${code}`}) without a result: ${err.trim().split("\n").slice(-3).join(" | ")}`;
      resolve({
        name: placeholder.name,
        harness: placeholder.harness,
        seconds: (Date.now() - t0) / 1000,
        problem,
        assertions: Array.from({ length: placeholder.assertions }, (_, i) => ({
          session: placeholder.name,
          label: `assertion ${i + 1}`,
          because: null,
          verdict: "unobserved" as const,
          detail: problem,
        })),
        verdict: "fail",
        runDir: placeholder.runDir,
      });
    });
  });
}
