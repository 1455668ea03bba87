// The mutation runner on its fixture project: one runner invocation, one mutant per verdict.
// It proves the runner tells a kill from a survivor, a load error, a crash, a timeout, a stale
// find, a kill by the wrong test and a golden-only kill, and that it leaves the fixture as it was.
// A second run, with --bless-goldens, proves that mode kills only by assertion and names the
// mutant a golden alone guarded. A third, with --both, gives both verdicts in one pass: they must
// be the two separate runs' verdicts.
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { MutationTestResult } from "mutation-testing-report-schema/api";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { MUTATION_HOST_ENV } from "../src/mutation/host-pool.ts";
import { hashDir } from "../src/mutation/tree-copy.ts";
import type { MutantRecord } from "../src/mutation/report.ts";
import { findSchemaProblems } from "../src/mutation/schema-check.ts";

const FIXTURE = join(REPO_ROOT, "contract/fixtures/mutation-project");
const SCRATCH = join(REPO_ROOT, ".scratch", "mutation-fixture");
const REPORTS = join(SCRATCH, "reports");
const BLESSED_REPORTS = join(SCRATCH, "reports-blessed");
const BOTH_REPORTS = join(SCRATCH, "both");

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
  ["fixture-golden-and-assert", "killed (golden only: weaker)", "Killed"],
];

/** The same with goldens blessed away (fixture-loop left out: its 3 s prove nothing new here). */
const EXPECTED_BLESSED: [id: string, verdict: string, status: string][] = [
  ["fixture-dotdot", "killed", "Killed"],
  ["fixture-length", "survived", "Survived"],
  ["fixture-syntax", "invalid-load", "CompileError"],
  ["fixture-crash", "invalid-crash", "RuntimeError"],
  ["fixture-twice", "stale", "Ignored"],
  ["fixture-wrong-test", "killed-by-other", "Killed"],
  // Only its golden noticed: the mode says so and fails on it.
  ["fixture-golden", "golden only: not killed", "Survived"],
  // Its golden failed first; with it blessed away the assertion beside it kills.
  ["fixture-golden-and-assert", "killed", "Killed"],
];

let run: { status: number | null; stdout: string; stderr: string };
let report: MutationTestResult;
let blessed: { status: number | null; stdout: string; stderr: string };
let blessedReport: MutationTestResult;
let both: { status: number | null; stdout: string; stderr: string };
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
  const mutants = (...args: string[]) => {
    const r = spawnSync(
      process.execPath,
      [
        join(REPO_ROOT, "scripts/mutants.ts"),
        "--root",
        FIXTURE,
        "--scratch",
        join(SCRATCH, "trees"),
        "--timeout-floor",
        "3000",
        "--workers",
        "2",
        // These runs prove verdicts, not reuse: the cache has its own runs below.
        "--no-cache",
        ...args,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  run = mutants("--reports", REPORTS);
  report = JSON.parse(readFileSync(join(REPORTS, "mutation.json"), "utf8")) as MutationTestResult;
  blessed = mutants(
    "--reports",
    BLESSED_REPORTS,
    "--bless-goldens",
    "--only",
    EXPECTED_BLESSED.map(([id]) => id).join(","),
  );
  blessedReport = JSON.parse(readFileSync(join(BLESSED_REPORTS, "mutation.json"), "utf8")) as MutationTestResult;
  both = mutants("--reports", BOTH_REPORTS, "--both", "--only", EXPECTED_BLESSED.map(([id]) => id).join(","));
}, 150_000);

/** A report's status per mutant id. */
const statuses = (r: MutationTestResult): Map<string, string> =>
  new Map(r.files["src/guard.ts"]!.mutants.map((m) => [m.id, m.status]));
const readReport = (dir: string) => JSON.parse(readFileSync(join(dir, "mutation.json"), "utf8")) as MutationTestResult;
/** A table's rows without the seconds column, which differs from run to run. */
const stable = (rows: Map<string, string[]>, ids: readonly string[]) =>
  ids.map((id) => [id, ...(rows.get(id)?.slice(0, 4) ?? ["(no row)"])]);

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
    const schemaFile = join(
      REPO_ROOT,
      "node_modules/mutation-testing-report-schema/dist/src/mutation-testing-report-schema.json",
    );
    expect(findSchemaProblems(JSON.parse(readFileSync(schemaFile, "utf8")), report)).toEqual([]);
  });

  it("names the killing test, and for a kill by another test names that one", () => {
    const rows = tableRows(run.stdout);
    expect(rows.get("fixture-dotdot")![2]).toBe(
      "tests/guard.spec.ts > isInside > refuses a path that climbs out with ..",
    );
    expect(rows.get("fixture-wrong-test")![2]).toBe("tests/guard.spec.ts > label > names an outside path");
    expect(rows.get("fixture-length")![2]).toBe("-");
    expect(rows.get("fixture-dotdot")![0]).toBe("src/guard.ts:5");
  });

  it("exits 1 and gives the reason for each mutant an expected test did not kill, and only those", () => {
    expect(run.status).toBe(1);
    const notKilled = run.stdout
      .split("\n")
      .filter((l) => l.startsWith("NOT KILLED: "))
      .map((l) => l.slice(12).split(" ")[0]);
    expect(notKilled.sort()).toEqual([
      "fixture-crash",
      "fixture-length",
      "fixture-loop",
      "fixture-syntax",
      "fixture-twice",
      "fixture-wrong-test",
    ]);
    expect(run.stdout).toContain(
      "weaker evidence, killed by a golden only (no assertion names the protection): fixture-golden, fixture-golden-and-assert\n",
    );
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

  describe("with --bless-goldens", () => {
    it("kills only by assertion: each mutant's verdict in the table and the report", () => {
      const rows = tableRows(blessed.stdout);
      const mutants = blessedReport.files["src/guard.ts"]!.mutants;
      for (const [id, verdict, status] of EXPECTED_BLESSED) {
        expect(rows.get(id)?.[3], `${id} in the bless-mode table\n${blessed.stdout}\n${blessed.stderr}`).toBe(verdict);
        expect(mutants.find((m) => m.id === id)?.status, `${id} in the bless-mode mutation.json`).toBe(status);
      }
      expect(rows.size).toBe(EXPECTED_BLESSED.length);
      expect(rows.get("fixture-golden-and-assert")![2]).toBe(
        "tests/guard.spec.ts > limits > golden, then the invariant beside it",
      );
    });

    it("fails on a mutant a golden alone guarded, naming the golden it rewrote, and passes the one an assertion killed", () => {
      expect(blessed.status).toBe(1);
      expect(blessed.stdout).toContain("goldens blessed away (only an assertion kills)");
      expect(blessed.stdout, "fixture-golden-and-assert's golden was rewritten and its assertion killed it").toContain(
        "goldens blessed away: 1 killed mutant(s) also changed a golden",
      );
      const notKilled = blessed.stdout.split("\n").filter((l) => l.startsWith("NOT KILLED: "));
      expect(notKilled.map((l) => l.slice(12).split(" ")[0]).sort()).toEqual([
        "fixture-crash",
        "fixture-golden",
        "fixture-length",
        "fixture-syntax",
        "fixture-twice",
        "fixture-wrong-test",
      ]);
      expect(notKilled.find((l) => l.includes("fixture-golden "))).toMatch(
        /golden only: no assertion noticed, only goldens\/rules\.txt changed/,
      );
      expect(blessed.stdout).toContain(
        "golden only, with goldens blessed away no assertion kills them (npm run goldens:update would bless each): fixture-golden\n",
      );
      expect(blessed.stdout, "the unmutated tree's goldens matched: nothing was blessed before or after").not.toContain(
        "RUN FAILED",
      );
      expect(blessed.stdout).toMatch(/^[\d.]+s after: the suite is green again$/m);
    });

    it("--both: one pass gives each mutant the verdicts of the two separate runs, in the table and in both reports", () => {
      const ids = EXPECTED_BLESSED.map(([id]) => id);
      const [ordinaryPart, blessedPart] = both.stdout.split("== the same mutants with goldens blessed away");
      expect(
        blessedPart,
        `the bless-mode table follows the ordinary one\n${both.stdout}\n${both.stderr}`,
      ).toBeDefined();
      expect(stable(tableRows(ordinaryPart!), ids)).toEqual(stable(tableRows(run.stdout), ids));
      expect(stable(tableRows(blessedPart!), ids)).toEqual(stable(tableRows(blessed.stdout), ids));
      const ordinary = statuses(report);
      const blessedAway = statuses(blessedReport);
      expect([...statuses(readReport(BOTH_REPORTS))].sort()).toEqual(ids.map((id) => [id, ordinary.get(id)]).sort());
      expect([...statuses(readReport(`${BOTH_REPORTS}-blessed`))].sort()).toEqual(
        ids.map((id) => [id, blessedAway.get(id)]).sort(),
      );
      expect(both.status, "either mode's failures fail the run").toBe(1);
      expect(both.stdout).toMatch(
        /^\[ ?\d\/8\] fixture-golden: killed \(golden only: weaker\) by .*; goldens blessed away: golden only: not killed \(/m,
      );
      expect(both.stdout).not.toContain("RUN FAILED");
    });

    it("wrote the blessed goldens into the tree copies only: the fixture's goldens are as they were", () => {
      expect(hashDir(join(FIXTURE, "goldens"))).toBe(before.goldens);
      expect(readFileSync(join(FIXTURE, "goldens/rules.txt"), "utf8")).toBe("no ..\ninside the root only\n");
      expect(readdirSync(join(SCRATCH, "trees")), "tree copies left behind").toEqual([]);
    });
  });
});

// The verdict cache end to end, on a copy of the fixture: a kill is kept, reused with nothing run,
// and run again once one byte of its killer's test file changes. A survivor is never kept.
describe.skipIf(insideMutationRun)("the verdict cache on a copy of the fixture project", () => {
  const project = join(SCRATCH, "cached-project");
  const cacheFile = join(SCRATCH, "cache.json");
  const runs: { status: number | null; stdout: string }[] = [];
  beforeAll(() => {
    rmSync(project, { recursive: true, force: true });
    cpSync(FIXTURE, project, { recursive: true });
    const mutants = (only: string) => {
      const r = spawnSync(
        process.execPath,
        [
          join(REPO_ROOT, "scripts/mutants.ts"),
          ...["--root", project, "--scratch", join(SCRATCH, "cache-trees"), "--reports", join(SCRATCH, "cache-r")],
          ...["--timeout-floor", "3000", "--workers", "1", "--cache", cacheFile, "--only", only],
        ],
        { encoding: "utf8", timeout: 60_000 },
      );
      return { status: r.status, stdout: `${r.stdout}\n${r.stderr}` };
    };
    runs.push(mutants("fixture-dotdot,fixture-length"));
    runs.push(mutants("fixture-dotdot,fixture-length"));
    appendFileSync(join(project, "tests/guard.spec.ts"), "// one byte more\n");
    runs.push(mutants("fixture-dotdot"));
    // A case the killer reads at run time, by a name no quoted path gives.
    appendFileSync(join(project, "tests/guard.cases"), "/ws/b/../../../root\n");
    runs.push(mutants("fixture-dotdot"));
  }, 200_000);

  it("the first run runs both, keeps the kill and not the survivor", () => {
    const [first] = runs;
    expect(first!.stdout, first!.stdout).toContain("cache: 0 of 2 verdict(s) reused");
    expect(first!.status).toBe(1);
    expect(Object.keys(JSON.parse(readFileSync(cacheFile, "utf8")).entries)).toEqual(["fixture-dotdot"]);
  });

  it("the second reuses the kill, says so in the table, and runs the survivor again", () => {
    const second = runs[1]!;
    expect(second.stdout, second.stdout).toContain("cache: 1 of 2 verdict(s) reused");
    expect(tableRows(second.stdout).get("fixture-dotdot")?.[3]).toMatch(/^killed \(cached from [0-9a-f]{12}\)$/);
    expect(tableRows(second.stdout).get("fixture-length")?.[3]).toBe("survived");
    expect(second.stdout).toMatch(/fixture-length: no verdict stored/);
    expect(second.status, "the survivor still fails the run").toBe(1);
  });

  it("one byte more in the killer's test file runs the mutant again, naming the file", () => {
    const third = runs[2]!;
    expect(third.stdout, third.stdout).toContain("cache: 0 of 1 verdict(s) reused");
    expect(third.stdout).toContain("fixture-dotdot: killer test file tests/guard.spec.ts changed");
    expect(third.stdout).toContain("test host(s) ready");
    expect(tableRows(third.stdout).get("fixture-dotdot")?.[3]).toBe("killed");
    expect(third.status).toBe(0);
  });

  it("a file the killer read at run time, which no import or quoted path names, is in the key its run recorded: a change to it runs the mutant again, naming it", () => {
    const fourth = runs[3]!;
    expect(fourth.stdout, fourth.stdout).toContain("cache: 0 of 1 verdict(s) reused");
    expect(fourth.stdout).toContain("fixture-dotdot: recorded load tests/guard.cases changed");
    expect(tableRows(fourth.stdout).get("fixture-dotdot")?.[3]).toBe("killed");
    expect(fourth.status).toBe(0);
  });
});

/**
 * A change that weakens fixture-dotdot's killer and brings a kill of its own for it: one the
 * engine's keyOf made over the change's final tree, as a hostile pull request would. The engine
 * must run the mutant (and so fail the run) wherever the forged kill lies; the control makes the
 * same steps with a harmless edit, and passes.
 */
describe.skipIf(insideMutationRun)("forged verdicts on git clones of the fixture project", () => {
  const ROOT = join(SCRATCH, "forged");
  const XDG = join(ROOT, "xdg");
  // The sentinel is another mutant: fixture-dotdot's own killer is the one the change weakens.
  const WEAK = 'expect(isInside("/ws", "/etc")).toBe(false);';
  const HARMLESS = 'expect(isInside("/ws", "/ws/../etc")).toBe(false); // reworded';
  const runs = new Map<string, { status: number | null; stdout: string }>();
  const cacheBytes = new Map<string, string>();

  /** The fixture as a git repository: main, then a change to the killer (weakening or harmless). */
  function layChange(name: string, killerLine: string): string {
    const project = join(ROOT, name);
    rmSync(project, { recursive: true, force: true });
    cpSync(FIXTURE, project, { recursive: true });
    const git = (...a: string[]) =>
      execFileSync("git", ["-C", project, "-c", "user.name=t", "-c", "user.email=t@invalid", ...a], {
        encoding: "utf8",
      });
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "main");
    git("tag", "base");
    const spec = join(project, "tests/guard.spec.ts");
    writeFileSync(
      spec,
      readFileSync(spec, "utf8")
        // The run-time cases go too: with them the killer would still kill.
        .replace('for (const p of climbing()) expect(isInside("/ws", p), p).toBe(false);', "")
        .replace('expect(isInside("/ws", "/ws/../etc")).toBe(false);', killerLine),
    );
    git("commit", "-qam", "the change");
    return project;
  }

  /** A cache holding a kill of fixture-dotdot keyed over the project's tree as it is now. */
  async function forge(project: string, file: string): Promise<void> {
    const { loadCatalog } = await import("../src/mutation/load.ts");
    const { keyOf, makeKeyReader } = await import("../src/mutation/cache-key.ts");
    const { emptyCache, storeVerdicts, writeCache } = await import("../src/mutation/cache.ts");
    const { readKeyFacts } = await import("../src/mutation/cache-run.ts");
    const m = loadCatalog(project).mutants.find((x) => x.id === "fixture-dotdot")!;
    const tree = makeKeyReader(project);
    const record: MutantRecord = {
      mutant: m,
      line: 5,
      site: { kind: "found", offset: 0, startLine: 5, endLine: 5 },
      verdict: { kind: "killed", by: [m.killedBy[0]!], evidence: "assertion", message: "forged" },
      seconds: 0,
      testsRun: [m.killedBy[0]!],
      loads: { files: [], folders: [] },
    };
    const cache = emptyCache();
    storeVerdicts(cache, keyOf(tree, m, readKeyFacts()), { id: m.id, ordinary: record }, tree);
    writeCache(file, cache);
  }

  const mutants = (project: string, ...args: string[]) => {
    const r = spawnSync(
      process.execPath,
      [
        join(REPO_ROOT, "scripts/mutants.ts"),
        ...["--root", project, "--scratch", join(ROOT, "trees"), "--reports", join(ROOT, "r")],
        ...["--timeout-floor", "3000", "--workers", "1", "--sentinel", "fixture-golden", ...args],
      ],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, XDG_CACHE_HOME: XDG } },
    );
    return { status: r.status, stdout: `${r.stdout}\n${r.stderr}` };
  };

  beforeAll(async () => {
    rmSync(ROOT, { recursive: true, force: true });
    for (const [name, line] of [
      ["committed", WEAK],
      ["committed-control", HARMLESS],
    ] as const) {
      const project = layChange(name, line);
      const file = join(project, "reports/mutant-cache.json");
      await forge(project, file);
      execFileSync("git", ["-C", project, "-c", "user.name=t", "-c", "user.email=t@invalid", "add", "-f", file]);
      execFileSync("git", [
        "-C",
        project,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@invalid",
        "commit",
        "-qm",
        "its own verdicts",
      ]);
      runs.set(name, mutants(project, "--only", "fixture-dotdot"));
      if (name === "committed")
        runs.set(
          "committed-named",
          mutants(project, "--only", "fixture-dotdot", "--cache", "reports/mutant-cache.json"),
        );
    }
    for (const [name, line] of [
      ["since", WEAK],
      ["since-control", HARMLESS],
    ] as const) {
      const project = layChange(name, line);
      const file = join(ROOT, `${name}-cache.json`);
      await forge(project, file);
      cacheBytes.set(name, readFileSync(file, "utf8"));
      runs.set(name, mutants(project, "--since", "base", "--cache", file));
      cacheBytes.set(`${name}-after`, readFileSync(file, "utf8"));
    }
  }, 240_000);

  it("a kill committed under reports/ is never read: the weakened mutant runs and fails the run", () => {
    const run = runs.get("committed")!;
    expect(run.stdout, run.stdout).not.toContain("cached from");
    expect(tableRows(run.stdout).get("fixture-dotdot")?.[3]).toBe("survived");
    expect(run.status).toBe(1);
    const named = runs.get("committed-named")!;
    expect(named.stdout).toMatch(/--cache reports\/mutant-cache\.json: .* lies inside the checkout/);
    expect(named.status).toBe(2);
  });

  it("control: the same steps with a harmless edit pass, the mutant killed by running it", () => {
    const run = runs.get("committed-control")!;
    expect(run.stdout, run.stdout).not.toContain("cached from");
    expect(tableRows(run.stdout).get("fixture-dotdot")?.[3]).toBe("killed");
    expect(run.status).toBe(0);
  });

  it("--since runs what it selects, though a stored kill answers for the change's tree, and keeps no verdict", () => {
    const run = runs.get("since")!;
    expect(run.stdout, run.stdout).toContain("--since base: fixture-dotdot (its killer test file changed)");
    expect(run.stdout).not.toContain("cached from");
    expect(tableRows(run.stdout).get("fixture-dotdot")?.[3]).toBe("survived");
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("NOT KILLED: fixture-dotdot");
    // The fixture's other mutants run too (no stored kill answers them) and fail as they are made to.
    const control = runs.get("since-control")!;
    expect(tableRows(control.stdout).get("fixture-dotdot")?.[3], control.stdout).toBe("killed");
    expect(control.stdout).not.toContain("NOT KILLED: fixture-dotdot");
    for (const name of ["since", "since-control"])
      expect(cacheBytes.get(`${name}-after`), `${name}: the cache is as it was`).toBe(cacheBytes.get(name));
  });
});
