// runScenario's own verdict, in process and without a sandbox: a run that cannot be carried out
// (here the workspace cannot be planted, before anything launches) judges every assertion of every
// session unobserved with the reason, fails, ends what it started, and writes runs/<id>/.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseScenario } from "../src/conformance/scenario/load.ts";
import { RUNS_DIR, harnessesOf, runScenario, tally, type ScenarioResult } from "../src/conformance/scenario/run.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("scenario-run");
afterAll(() => scratch.remove());

const TEXT = `name: stuck
description: a PM whose workspace cannot be planted
harness: fake
instance: { ref: claude-pm }
workspace:
  files: { a: "x" }
  links: { a: /etc }
network_trap: true
neighbour_process: true
messages:
  - body: go
assertions:
  - reply_contains: done
    because: the turn ends
  - trap_untouched: true
launches:
  - harness: claude-code
    instance: { ref: claude-coder }
    model:
      turns:
        - text: done
    assertions:
      - reply_contains: done
`;

/** Live (not zombie) children of this process whose command is sleep: the neighbour a run starts. */
function sleepChildren(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(stat);
        return m !== null && m[1] === "sleep" && m[2] !== "Z" && Number(m[3]) === process.pid ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

describe("a scenario run that cannot be carried out", () => {
  it("judges every assertion unobserved with the reason, fails, ends its neighbour and writes its run directory", async () => {
    const s = parseScenario(TEXT, "/scenarios/stuck.yaml");
    const runsDir = join(scratch.root, "runs");
    const out = join(runsDir, "stuck-2");
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "stale.txt"), "from an earlier run");
    const before = sleepChildren();
    const r = await runScenario(s, { id: "stuck-2", runsDir });
    const left = sleepChildren().filter((p) => !before.includes(p));
    for (const p of left) process.kill(p, "SIGKILL");
    expect(left, "the neighbour is ended").toEqual([]);
    expect(r.problem).toMatch(/^EEXIST: file already exists, symlink '\/etc' -> '.*\/workspaces\/acme\/stuck\/a'$/);
    const why = `the run did not complete: ${r.problem}`;
    expect(r).toEqual({
      name: "stuck",
      harness: "fake → claude-code",
      seconds: expect.any(Number),
      problem: r.problem,
      assertions: [
        {
          session: "stuck",
          label: "reply_contains done",
          because: "the turn ends",
          verdict: "unobserved",
          detail: why,
        },
        { session: "stuck", label: "trap_untouched", because: null, verdict: "unobserved", detail: why },
        {
          session: "acme-coder",
          label: "acme-coder: reply_contains done",
          because: null,
          verdict: "unobserved",
          detail: why,
        },
      ],
      verdict: "fail",
      runDir: out,
    } satisfies ScenarioResult);
    expect(r.seconds).toBeGreaterThanOrEqual(0);
    expect(r.seconds).toBeLessThan(60);
    expect(existsSync(join(out, "stale.txt")), "the run directory starts empty").toBe(false);
    expect(JSON.parse(readFileSync(join(out, "verdict.json"), "utf8"))).toEqual(r);
    const events = readFileSync(join(out, "events.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { t: number; session: string; event: string });
    expect(events.map(({ t: _t, ...e }) => e)).toEqual([
      { session: "stuck", event: "problem", problem: r.problem },
      { session: "stuck", event: "verdict", verdict: "fail" },
    ]);
    expect(events.every((e) => e.t >= 0 && e.t < 60_000)).toBe(true);
  });
});

describe("a scenario run without a trap or a neighbour", () => {
  const text = TEXT.replace("network_trap: true\n", "")
    .replace("neighbour_process: true\n", "")
    .replace("  - trap_untouched: true\n", "")
    .replace("name: stuck", "name: contract-stuck-run");
  const s = parseScenario(text, "/scenarios/contract-stuck-run.yaml");
  const check = (r: ScenarioResult, out: string) => {
    expect(r.runDir).toBe(out);
    expect(r.verdict).toBe("fail");
    expect(r.assertions.map((a) => a.detail)).toEqual([
      `the run did not complete: ${r.problem}`,
      `the run did not complete: ${r.problem}`,
    ]);
    expect(readFileSync(join(out, "verdict.json"), "utf8")).toBe(`${JSON.stringify(r, null, 2)}\n`);
    const events = readFileSync(join(out, "events.jsonl"), "utf8");
    expect(events.endsWith("}\n")).toBe(true);
    expect(events.split("\n")).toHaveLength(3);
  };
  it("makes a run directory whose parents do not exist yet, named after the scenario", async () => {
    const runsDir = join(scratch.root, "fresh", "runs");
    check(await runScenario(s, { runsDir }), join(runsDir, "contract-stuck-run"));
  });
  it("writes under the repository's runs/ by default", async () => {
    const out = join(RUNS_DIR, "contract-stuck-run");
    expect(RUNS_DIR).toBe(join(REPO_ROOT, "runs"));
    try {
      check(await runScenario(s), out);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("a scenario's harnesses and the run's tally", () => {
  it("names the main session's harness, then each launched one's", () => {
    const s = parseScenario(TEXT, "/scenarios/stuck.yaml");
    expect(harnessesOf(s)).toBe("fake → claude-code");
    expect(harnessesOf({ ...s, launches: [] })).toBe("fake");
  });
  it("counts every assertion of every result by verdict", () => {
    const res = (...v: Array<"pass" | "fail" | "unobserved">) =>
      ({ assertions: v.map((verdict) => ({ verdict })) }) as unknown as ScenarioResult;
    expect(tally([res("pass", "fail"), res("unobserved", "pass", "unobserved")])).toEqual({
      pass: 2,
      fail: 1,
      unobserved: 2,
    });
    expect(tally([])).toEqual({ pass: 0, fail: 0, unobserved: 0 });
  });
});
