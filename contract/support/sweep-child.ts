// A contract test's child process that runs repository code (the runner's main.ts, the hook's
// main()), seen by StrykerJS's generated sweep. Outside the sweep this changes nothing: no
// argument, no variable. Under it (the test's worker holds StrykerJS's namespace), the child gets
// the active mutant through the variable StrykerJS's instrumented header reads
// (__STRYKER_ACTIVE_MUTANT__), and a preload that writes the child's mutant coverage to a file at
// its exit; `collect()` adds that coverage to the running test's, so the dry run selects the test
// for every mutant the child reached. A child ended by SIGKILL writes none: end children otherwise.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Counts = Record<string, number>;
type Namespace = {
  activeMutant?: string;
  currentTestId?: string;
  mutantCoverage?: { static: Counts; perTest: Record<string, Counts> };
};

const PRELOAD = join(import.meta.dirname, "sweep-child-preload.ts");
export const COVERAGE_ENV = "MOSAIC_SWEEP_COVERAGE_FILE";

const strykerNamespace = (): Namespace | undefined => (globalThis as { __stryker__?: Namespace }).__stryker__;

type Coverage = { static?: Counts; perTest?: Record<string, Counts> };

/** The child's coverage file, or null when it wrote none (killed, or it reached no instrumented code). */
function readCoverage(file: string): Coverage | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Coverage;
  } catch {
    return null;
  }
}

function add(into: Counts, from: Counts | undefined): void {
  for (const [id, k] of Object.entries(from ?? {})) into[id] = (into[id] ?? 0) + k;
}

let hostIds: Set<string> | undefined;

/** The ids of the mutants StrykerJS put in src/host's files of this (instrumented) copy. */
function hostMutantIds(): Set<string> {
  if (hostIds !== undefined) return hostIds;
  hostIds = new Set();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts"))
        for (const call of readFileSync(p, "utf8").matchAll(/stry(?:MutAct|Cov)_9fa48\(([^)]*)\)/g))
          for (const id of call[1]!.matchAll(/"(\d+)"/g)) hostIds!.add(id[1]!);
    }
  };
  walk(join(import.meta.dirname, "../../src/host"));
  return hostIds;
}

/** What to spawn a node child with: extra node arguments, extra environment, and collect() after it exits. */
export function sweepChild(): { execArgv: string[]; env: Record<string, string>; collect(): void } {
  const ns = strykerNamespace();
  if (ns === undefined) return { execArgv: [], env: {}, collect: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "mosaic-sweep-child-"));
  const file = join(dir, "coverage.json");
  const env: Record<string, string> = { [COVERAGE_ENV]: file };
  if (ns.activeMutant !== undefined) env.__STRYKER_ACTIVE_MUTANT__ = String(ns.activeMutant);
  return {
    execArgv: ["--import", PRELOAD],
    env,
    collect: () => {
      const got = readCoverage(file);
      rmSync(dir, { recursive: true, force: true });
      if (got === null) return;
      const cov = (ns.mutantCoverage ??= { static: {}, perTest: {} });
      const into = ns.currentTestId === undefined ? cov.static : (cov.perTest[ns.currentTestId] ??= {});
      // Only the host shell's mutants: the children run it, and nothing but a child reaches its
      // entry points. A child also loads src/core's tables, whose module-level mutants are static
      // (ignoreStatic leaves them out); counted as this test's, they would run against it alone.
      const host = hostMutantIds();
      const own = (c: Counts | undefined) =>
        Object.fromEntries(Object.entries(c ?? {}).filter(([id]) => host.has(id) && !(id in cov.static)));
      add(into, own(got.static));
      for (const c of Object.values(got.perTest ?? {})) add(into, own(c));
    },
  };
}
