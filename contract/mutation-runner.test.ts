// The mutation runner on its fixture project: one runner invocation, one mutant per verdict.
// It proves the runner tells a kill from a survivor, a load error, a crash, a timeout, a stale
// find, a kill by the wrong test and a golden-only kill, and that it leaves the fixture as it was.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { MutationTestResult } from "mutation-testing-report-schema/api";
import { REPO_ROOT } from "../src/conformance/golden.ts";
import { MUTATION_HOST_ENV } from "../src/conformance/mutation/hosts.ts";
import { hashDir } from "../src/conformance/mutation/runner.ts";
import { findSchemaProblems } from "../src/conformance/mutation/schema-check.ts";

const FIXTURE = join(REPO_ROOT, "contract/fixtures/mutation-project");
const SCRATCH = join(REPO_ROOT, ".scratch", "mutation-fixture");
const REPORTS = join(SCRATCH, "reports");

/** Each fixture mutant, the verdict the table must show, and the report status it maps to. */
const EXPECTED: [id: string, verdict: string, status: string][] = [
  ["fixture-dotdot", "killed", "Killed"],
  ["fixture-length", "survived", "Survived"],
  ["fixture-syntax", "invalid-load", "CompileError"],
  ["fixture-crash", "invalid-crash", "RuntimeError"],
  ["fixture-loop", "timeout", "Timeout"],
  ["fixture-twice", "stale", "Ignored"],
  ["fixture-wrong-test", "killed-by-other", "Killed"],
  ["fixture-golden", "killed (golden only: weaker)", "Killed"],
];

let run: { status: number | null; stdout: string; stderr: string };
let report: MutationTestResult;
let before: { src: string; goldens: string };

/** The table rows printed on stdout, by mutant id: [file:line, undoes, killed by, verdict, seconds]. */
function tableRows(stdout: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("| fixture-")) continue;
    const cells = line.slice(2, -2).split(" | ");
    rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

// Inside a mutation run's tree copy this file would start the runner within the runner: slow, and
// it guards no safety line. Everywhere else it runs.
const insideMutationRun = process.env[MUTATION_HOST_ENV] === "1";

beforeAll(() => {
  if (insideMutationRun) return;
  rmSync(SCRATCH, { recursive: true, force: true });
  before = { src: readFileSync(join(FIXTURE, "src/guard.ts"), "utf8"), goldens: hashDir(join(FIXTURE, "goldens")) };
  // A 3 s floor: the loop mutant costs that much, and a normal fixture run (under 1 s on a
  // loaded two-core machine) stays far from it, so no honest mutant is called a timeout.
  const r = spawnSync(
    process.execPath,
    [join(REPO_ROOT, "scripts/mutants.ts"), "--root", FIXTURE, "--reports", REPORTS, "--scratch", join(SCRATCH, "trees"), "--timeout-floor", "3000", "--workers", "2"],
    { encoding: "utf8", timeout: 60_000 },
  );
  run = { status: r.status, stdout: r.stdout, stderr: r.stderr };
  report = JSON.parse(readFileSync(join(REPORTS, "mutation.json"), "utf8")) as MutationTestResult;
}, 70_000);

describe.skipIf(insideMutationRun)("the mutation runner on its fixture project", () => {
  it("gives each fixture mutant its verdict in the table and the report", () => {
    const rows = tableRows(run.stdout);
    const mutants = report.files["src/guard.ts"]!.mutants;
    for (const [id, verdict, status] of EXPECTED) {
      expect(rows.get(id)?.[3], `${id} in the table\n${run.stdout}\n${run.stderr}`).toBe(verdict);
      expect(mutants.find((m) => m.id === id)?.status, `${id} in mutation.json`).toBe(status);
    }
    expect(rows.size).toBe(EXPECTED.length);
  });

  it("writes mutation.json that follows the published mutation-testing-report-schema", () => {
    const schemaFile = join(REPO_ROOT, "node_modules/mutation-testing-report-schema/dist/src/mutation-testing-report-schema.json");
    expect(findSchemaProblems(JSON.parse(readFileSync(schemaFile, "utf8")), report)).toEqual([]);
  });

  it("names the killing test, and for a kill by another test names that one", () => {
    const rows = tableRows(run.stdout);
    expect(rows.get("fixture-dotdot")![2]).toBe("tests/guard.spec.ts > isInside > refuses a path that climbs out with ..");
    expect(rows.get("fixture-wrong-test")![2]).toBe("tests/guard.spec.ts > label > names an outside path");
    expect(rows.get("fixture-length")![2]).toBe("-");
    expect(rows.get("fixture-dotdot")![0]).toBe("src/guard.ts:5");
  });

  it("exits 1 and gives the reason for each mutant an expected test did not kill, and only those", () => {
    expect(run.status).toBe(1);
    const notKilled = run.stdout.split("\n").filter((l) => l.startsWith("NOT KILLED: ")).map((l) => l.slice(12).split(" ")[0]);
    expect(notKilled.sort()).toEqual(["fixture-crash", "fixture-length", "fixture-loop", "fixture-syntax", "fixture-twice", "fixture-wrong-test"]);
    expect(run.stdout).toContain("weaker evidence, killed by a golden only (no assertion names the protection): fixture-golden");
    expect(run.stdout).not.toContain("RUN FAILED");
  });

  it("proved the sentinel on every host before the mutants", () => {
    expect(run.stdout).toMatch(/^[\d.]+s sentinel fixture-dotdot: killed and restored on 2 host\(s\)$/m);
    expect(run.stdout).toMatch(/^[\d.]+s after: the suite is green again$/m);
  });

  it("leaves the fixture's source and goldens as they were, and removes its tree copies", () => {
    expect(readFileSync(join(FIXTURE, "src/guard.ts"), "utf8")).toBe(before.src);
    expect(hashDir(join(FIXTURE, "goldens"))).toBe(before.goldens);
    expect(readdirSync(join(SCRATCH, "trees")), "tree copies left behind").toEqual([]);
  });

  it("writes a diff per mutant that could be applied, and a self-contained HTML report", () => {
    const diff = readFileSync(join(REPORTS, "diffs/fixture-dotdot.diff"), "utf8");
    expect(diff).toContain('-  if (path.split("/").includes("..")) return false; // safety: fixture-dotdot');
    expect(diff).toContain("+   // safety: fixture-dotdot");
    expect(existsSync(join(REPORTS, "diffs/fixture-twice.diff")), "a stale mutant has no diff").toBe(false);
    const html = readFileSync(join(REPORTS, "mutation.html"), "utf8");
    expect(html).toContain("<mutation-test-report-app");
    expect(html).not.toMatch(/<script[^>]*\ssrc=/);
    expect(html).toContain('"fixture-dotdot"');
  });
});
