import { availableParallelism } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { runProcess } from "../../src/conformance/processes/run-process.ts";

/**
 * `npm start` over the shipped scenarios at --jobs 1 against --jobs = cores, twice each,
 * alternating, and whether the verdict tables agree. Aim: 30 s or less at --jobs = cores.
 */
export async function run(): Promise<void> {
  const cores = availableParallelism();
  const runs: Array<{ jobs: number; seconds: number; table: string }> = [];
  for (const jobs of [1, cores, 1, cores]) {
    const t0 = performance.now();
    const r = await runProcess(
      process.execPath,
      [join(REPO_ROOT, "src/cli/main.ts"), "run", "--json", "--jobs", String(jobs)],
      {
        cwd: REPO_ROOT,
        env: process.env,
        timeoutMs: 900_000,
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`npm start --jobs ${jobs} exited ${r.status}: ${r.stderr.slice(-600)}`);
    const doc = JSON.parse(r.stdout) as {
      scenarios: Array<{ name: string; runs: Array<{ assertions: Array<{ label: string; verdict: string }> }> }>;
    };
    const table = JSON.stringify(
      doc.scenarios.map((s) => [s.name, s.runs.map((x) => x.assertions.map((a) => [a.label, a.verdict]))]),
    );
    runs.push({ jobs, seconds, table });
    console.log(`npm start --jobs ${jobs}: ${seconds.toFixed(1)} s, ${doc.scenarios.length} scenarios`);
  }
  const same = runs.every((r) => r.table === runs[0]!.table);
  const at = (j: number) => runs.filter((r) => r.jobs === j).map((r) => r.seconds);
  const best = (xs: number[]) => Math.min(...xs);
  console.log(
    `--jobs ${cores} against --jobs 1: ${best(at(cores)).toFixed(1)} s against ${best(at(1)).toFixed(1)} s (${(best(at(1)) / best(at(cores))).toFixed(2)}x faster; aim 30 s: ${best(at(cores)) <= 30 ? "met" : "not met"}); verdict tables ${same ? "equal" : "DIFFER"}`,
  );
}
