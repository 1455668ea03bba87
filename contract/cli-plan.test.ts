import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseCliArgs } from "../src/cli/args.ts";
import { planReport, renderPlanText } from "../src/cli/plan-report.ts";
import { REPO_ROOT, normalise } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import {
  HOST_LAYOUTS,
  ROLE_CASES,
  fixturePlaceholders,
  fixtureWorkspaceView,
} from "../src/conformance/worlds/host-fixtures.ts";

const { spec } = ROLE_CASES["claude-pm"]!;
const facts = HOST_LAYOUTS["merged-usr"]!.facts;

describe("mosaic-harness plan, rendered", () => {
  it("golden: a ready host", async () => {
    const text = renderPlanText(planReport(spec, facts, null, fixtureWorkspaceView(spec)));
    expect(text).toContain("Probe: ok: bubblewrap 0.8.0");
    await matchGolden(
      "cli",
      "plan.claude-pm",
      "txt",
      "`mosaic-harness plan` for a Claude Code PM on merged-usr Debian",
      normalise(text, fixturePlaceholders(spec, facts)),
    );
  });
  it("a failed probe says NOT READY with bwrap's own line", () => {
    const text = renderPlanText(
      planReport(spec, facts, "bwrap: setting up uid map: Permission denied", fixtureWorkspaceView(spec)),
    );
    expect(text.trimEnd().split("\n").at(-1)).toBe("Probe: NOT READY: bwrap: setting up uid map: Permission denied");
  });
});

// The shell around the plan: arguments, file errors and exit codes, run as a real process.
const dir = mkdtempSync(join(tmpdir(), "mosaic-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "src/cli/main.ts"), ...args], {
    encoding: "utf8",
    cwd: REPO_ROOT,
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe("parseCliArgs", () => {
  it.each([
    [["plan", "x.json"], { kind: "plan", file: "x.json", json: false }],
    [["plan", "x.json", "--json"], { kind: "plan", file: "x.json", json: true }],
    [["--help"], { kind: "help" }],
    [[], { kind: "usage-error", message: "no command given" }],
    [["launch"], { kind: "usage-error", message: 'unknown command "launch"' }],
    [["plan", "x.json", "--yaml"], { kind: "usage-error", message: "plan: unknown option --yaml" }],
    [["plan"], { kind: "usage-error", message: "plan: expected exactly one spec file, got 0" }],
    [["plan", "a.json", "b.json"], { kind: "usage-error", message: "plan: expected exactly one spec file, got 2" }],
  ] as const)("%j", (argv, expected) => {
    expect(parseCliArgs(argv)).toEqual(expected);
  });
});

describe("mosaic-harness plan, as a process", () => {
  it("a bad spec exits 2 naming the field and prints no plan", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ...spec, workspace: "relative/ws" }));
    const r = cli("plan", bad);
    expect(r.status).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toContain('workspace: "relative/ws" must be absolute and normalised');
    expect(r.err).toContain("[not-normal-absolute]");
  });
  it("a file that is not JSON exits 2 naming the file", () => {
    const bad = join(dir, "not.json");
    writeFileSync(bad, "{ nope");
    const r = cli("plan", bad);
    expect(r.status).toBe(2);
    expect(r.err).toContain(bad);
  });
});
