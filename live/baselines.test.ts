import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { readHostFacts, readBwrapVersion } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { diffFacts, readClaudeFacts, readPiFacts } from "../src/conformance/baselines/baseline-facts.ts";
import {
  BASELINE_SOURCES,
  diffBaselines,
  loadBaseline,
  readBaseline,
  type Baseline,
} from "../src/conformance/baselines/baselines.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";

// The installed binaries against baselines/: versions, option lists and the behaviour the adapters
// rely on (baselines/README.md), each drift named. bwrap is the system's, so its baseline is the
// installed version's file; the options our argv emits are also re-read off the installed --help
// itself, whatever is pinned.
const SYNC = "run npm run baselines:sync and review the diff";
const hostFacts = readHostFacts({ repo: REPO_ROOT });
const bwrapMissing = readBwrapVersion("bwrap") === null ? "bwrap is not on PATH" : null;
const src = (binary: string) => BASELINE_SOURCES.find((s) => s.binary === binary)!;

describe("baselines match the real binaries", () => {
  liveIt("bwrap installed", bwrapMissing)("bwrap: the installed version has a baseline, and it holds", () => {
    const read = readBaseline(src("bwrap"));
    const pinned = loadBaseline("bwrap", read.version);
    expect(
      pinned,
      `no baselines/bwrap/${read.version}.json for the installed bwrap ${read.version}: ${SYNC}`,
    ).not.toBeNull();
    const diff = diffBaselines(pinned!, read);
    if (pinned!.source === "binary")
      expect(diff, `baselines/bwrap/${read.version}.json differs from the installed bwrap: ${SYNC}`).toEqual([]);
    else {
      // Written from documentation: every documented option must be there; a distribution's
      // backported extras are named, not failed, until baselines:sync reads this binary.
      expect(
        diff.filter((d) => !d.startsWith("options in the installed --help but not pinned")),
        `the installed bwrap lacks documented options: ${SYNC}`,
      ).toEqual([]);
      for (const d of diff)
        process.stderr.write(
          `baselines/bwrap/${read.version}.json (from documentation): ${d}; ${SYNC} on this machine to pin it\n`,
        );
    }
  });

  liveIt("bwrap installed", bwrapMissing)(
    "bwrap: every option bwrapArgv() emits is in the installed bwrap's own --help",
    () => {
      const installed = new Set(readBaseline(src("bwrap")).options);
      const used = new Set<string>();
      for (const layout of Object.values(HOST_LAYOUTS)) {
        for (const { spec } of Object.values(ROLE_CASES)) {
          const argv = bwrapArgv(spec, layout.facts, binds(spec, layout.facts, fixtureWorkspaceView(spec)));
          for (const o of argv.slice(1, argv.indexOf("--")).filter((t) => t.startsWith("--"))) used.add(o);
        }
      }
      expect(
        [...used].filter((o) => !installed.has(o)),
        "options our argv emits that the installed bwrap does not list",
      ).toEqual([]);
      expect(used.size, "some options were checked").toBeGreaterThan(5);
    },
  );

  for (const binary of ["claude-code", "pi"]) {
    const s = src(binary);
    liveIt(`${binary} installed`, existsSync(s.command) ? null : `${s.command} is missing (npm ci)`)(
      `${binary}: version and options are the pinned ones`,
      () => {
        const pinned = loadBaseline(binary) as Baseline;
        expect(
          diffBaselines(pinned, readBaseline(s)),
          `baselines/${binary}.json differs from the installed binary: ${SYNC}`,
        ).toEqual([]);
      },
    );
  }
});

describe("the behaviour the adapters rely on is the pinned one", () => {
  const problem =
    checkoutProblem(REPO_ROOT) ??
    sandboxProblem(hostFacts) ??
    (existsSync(src("claude-code").command) && existsSync(src("pi").command)
      ? null
      : "Claude Code or Pi is missing (npm ci)");
  const it = liveIt("bwrap, Claude Code and Pi", problem);
  let w: RuntimeWorld;
  beforeAll(async () => {
    if (problem === null) w = await makeRuntimeWorld("facts");
  });
  afterAll(async () => {
    await w?.close();
  });

  it('Claude Code: --restricted, --setting-sources "", the default tools and the Glob cut, as pinned', async () => {
    const read = await readClaudeFacts(w);
    expect(
      diffFacts("claude-code", loadBaseline("claude-code")?.facts, read),
      `Claude Code's behaviour drifted from baselines/claude-code.json: ${SYNC}`,
    ).toEqual([]);
  }, 120_000);

  it("Pi: what -nc keeps out, as pinned", async () => {
    const read = await readPiFacts(w);
    expect(
      diffFacts("pi", loadBaseline("pi")?.facts, read),
      `Pi's behaviour drifted from baselines/pi.json: ${SYNC}`,
    ).toEqual([]);
  }, 60_000);
});
