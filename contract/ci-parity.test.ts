// .ci/run rehearses every workflow job on one fresh machine: the job's npm scripts, in its order,
// as its identity (the contract job as an unprivileged user, the root jobs under sudo). What it
// does not run is listed here with why, so the list is the whole difference.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { ciRunScripts, rehearsalGaps, type Exemptions } from "../src/review/ci-parity.ts";
import { jobScripts, type JobScript } from "../src/review/workflow-policy.ts";

const DIR = join(REPO_ROOT, ".github/workflows");
const CI_RUN = readFileSync(join(REPO_ROOT, ".ci/run"), "utf8");

/** What .ci/run does not rehearse, and why. */
const NOT_REHEARSED: Exemptions = {
  "live.yml live": {
    scripts: ["start", "ci:drop-sockets"],
    why: "the scenarios run in the live tier (live/scenarios.test.ts, the same files and runner); the workflow's own `npm start` publishes their JUnit and runs/ as an artifact, which drop-sockets readies",
  },
  "live.yml sweep": {
    scripts: "*",
    why: "a nightly shard of the whole sweep; .ci/run runs the whole sweep in one piece, as root, last",
  },
  "live.yml sweep-merge": { scripts: "*", why: "merges the nightly shards; .ci/run has no shards to merge" },
  "live.yml mutants-merge": { scripts: "*", why: "merges the nightly catalog shards; .ci/run runs the catalog whole" },
  "review-trigger.yml wake": {
    scripts: "*",
    why: "GitHub-only: a workflow_run trigger; the review's steps are proven against recorded GitHub payloads",
  },
  "review.yml review": {
    scripts: "*",
    why: "GitHub-only: reads reviews and posts a status through GitHub's API, proven against recorded payloads (MOSAIC_GITHUB_RECORDED)",
  },
};

const workflows = () =>
  readdirSync(DIR)
    .filter((f) => f.endsWith(".yml"))
    .sort()
    .map((f) => ({ f, jobs: jobScripts(readFileSync(join(DIR, f), "utf8")) }));

describe(".ci/run rehearses the workflows", () => {
  it("every job's npm scripts run in .ci/run in the job's order, as the job's identity, but those listed with why", () => {
    const ci = ciRunScripts(CI_RUN);
    expect(
      workflows().flatMap(({ f, jobs }) => rehearsalGaps(f, jobs, ci, NOT_REHEARSED)),
      "add the step to .ci/run, or list it in NOT_REHEARSED with why",
    ).toEqual([]);
    const jobs = new Set(workflows().flatMap(({ f, jobs }) => Object.keys(jobs).map((j) => `${f} ${j}`)));
    expect(
      Object.keys(NOT_REHEARSED).filter((k) => !jobs.has(k)),
      "an exemption names a job that exists",
    ).toEqual([]);
  });

  it(".ci/run's scripts on a root machine: the user pass as its user, the rest as root; the branch for a caller that is not root is not CI's", () => {
    const ci = ciRunScripts(CI_RUN);
    expect(ci.filter((c) => c.user).map((c) => c.script)).toEqual([
      "typecheck",
      "test:contract",
      "test:selftest",
      "mutants:sweep",
      "goldens:review:catalog",
    ]);
    expect(ci.filter((c) => !c.user).map((c) => c.script)).toEqual([
      "ci:userns",
      "test:live",
      "test:matrix",
      "matrix",
      "matrix",
      "mutants",
      "mutants:sweep",
    ]);
  });
});

describe("rehearsalGaps", () => {
  const step = (script: string, root = false, when: string | null = null): JobScript => ({ script, root, when });
  const ci = ciRunScripts(
    [
      'run_as_user "npm run typecheck"',
      'run_as_user "npm run test:contract"',
      "npm run ci:userns",
      "npm run mutants -- --both",
    ].join("\n"),
  );

  it("control: a job whose steps .ci/run runs in order, as its identity, has no gap; a pull-request-only step is not asked", () => {
    const jobs = {
      contract: [step("typecheck"), step("test:contract")],
      mutants: [
        step("ci:userns", true),
        step("mutants", true, "github.event_name == 'pull_request'"),
        step("mutants", true, "github.event_name != 'pull_request'"),
      ],
    };
    expect(rehearsalGaps("ci.yml", jobs, ci, {})).toEqual([]);
  });

  it("a step .ci/run lacks, one it runs out of order, and one it runs as the wrong identity are each a gap; an exemption answers only its job", () => {
    const jobs = {
      missing: [step("test:live", true)],
      order: [step("test:contract"), step("typecheck")],
      identity: [step("typecheck", true)],
    };
    expect(rehearsalGaps("ci.yml", jobs, ci, {})).toEqual(
      [
        ".ci/run does not run `npm run test:live` as root after the job's earlier steps",
        ".ci/run does not run `npm run typecheck` as its user after the job's earlier steps",
        ".ci/run does not run `npm run typecheck` as root after the job's earlier steps",
      ].map((g, i) => `ci.yml job ${["missing", "order", "identity"][i]}: ${g}`),
    );
    expect(rehearsalGaps("ci.yml", jobs, ci, { "ci.yml missing": { scripts: "*", why: "x" } })).toHaveLength(2);
  });
});
