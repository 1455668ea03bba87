// The host matrix (npm run test:matrix): each row of matrix/hosts.ts booted as a real container,
// and in it the project's own checks, as root and as an unprivileged user:
//   the probe and `mosaic-harness plan`, with the verdict the row expects;
//   on a host that refuses, the launcher's refusal event naming the cause, and a control: the same
//   container with the restriction lifted passes the probe;
//   on a host that works, sessions through the real launcher and runner whose effects are asserted
//   (the shell writes in its workspace and cannot read the stand-in secret), and attack-table rows,
//   each blocked and, with its layers removed on purpose, let through.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { DIAGNOSES } from "../src/core/sandbox/diagnose.ts";
import type { Bind } from "../src/core/sandbox/types.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { HOSTS, type HostRow } from "./hosts.ts";
import { MATRIX_ATTACKS } from "./attacks.ts";
import {
  probeSays,
  readHostResults,
  sortResults,
  writeHostResults,
  writeReadmeTable,
  type HostResult,
} from "./results.ts";
import { OPT_CLAUDE, OPT_NODE, runtimeProblem, startHost, type Exec, type Host } from "./runtime.ts";

const problem = await runtimeProblem();
const it = liveIt("a container runtime (npm run test:matrix starts podman)", problem);
const IDENTITIES = ["root", "user"] as const;
/** An example spec with this checkout as its repository: the probe keeps its state under it. */
const planOf = (example: string) => {
  const spec = JSON.stringify({
    ...JSON.parse(readFileSync(join(REPO_ROOT, `scenarios/plan/${example}.json`), "utf8")),
    repo: REPO_ROOT,
  });
  return [
    "sh",
    "-c",
    'printf "%s" "$1" > /tmp/spec.json && exec node src/cli/main.ts plan /tmp/spec.json --json',
    "sh",
    spec,
  ];
};
const PLAN = planOf("pi-coder");

type Plan = { binds: Bind[]; probe: { ok: boolean; bwrapVersion: string | null; problem: string | null } };

function json<T>(r: Exec, what: string): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(
      `${what}: not JSON (exit ${r.exitCode})\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`,
    );
  }
}

/** What each (row, identity) showed, for baselines/hosts.json and the README's Hosts table. */
const results = new Map<string, HostResult>();
const resultOf = (row: HostRow, as: "root" | "user"): HostResult => {
  const key = `${row.id}/${as}`;
  if (!results.has(key))
    results.set(key, {
      row: row.id,
      as,
      bwrap: null,
      usr: "merged",
      probe: "not run",
      sessions: [],
      attacksBlocked: 0,
    });
  return results.get(key)!;
};

function recordProbe(row: HostRow, as: "root" | "user", plan: Plan): void {
  const r = resultOf(row, as);
  r.bwrap = plan.probe.bwrapVersion;
  r.usr = plan.binds.some((b) => b.row === "top-link" && b.inside === "/bin" && b.mode !== "symlink")
    ? "split"
    : "merged";
  r.probe = probeSays(plan.probe.problem);
}

const causeOf = (row: HostRow) => {
  const id = row.expect.kind === "refuses" ? row.expect.cause : null;
  const d = DIAGNOSES.find((x) => x.id === id);
  if (d === undefined) throw new Error(`${row.id}: no diagnosis row ${id}`);
  return d;
};

for (const row of HOSTS) {
  describe(`${row.id}: ${row.why}`, () => {
    // One container per identity: what the root arm leaves in the checkout's tmpfs is not the user's.
    for (const as of IDENTITIES) {
      describe(`as ${as}`, () => {
        let host: Host;
        beforeAll(async () => {
          if (problem === null) host = await startHost(row);
        }, 120_000);
        afterAll(async () => host?.stop());

        if (row.expect.kind === "works") {
          it("the probe passes and plan prints the session's binds", async () => {
            const r = await host.exec(PLAN, as);
            const plan = json<Plan>(r, "plan --json");
            recordProbe(row, as, plan);
            expect(plan.probe, r.stderr).toEqual({ ok: true, bwrapVersion: plan.probe.bwrapVersion, problem: null });
            expect(r.exitCode).toBe(0);
            const tops = plan.binds.filter((b) => b.row === "top-link");
            if (row.base === "deb12-split")
              expect(tops.map((b) => [b.inside, b.mode])).toEqual([
                ["/bin", "ro"],
                ["/lib", "ro"],
                ["/lib64", "ro"],
                ["/sbin", "ro"],
              ]);
            else
              expect(
                tops.every((b) => b.mode === "symlink"),
                JSON.stringify(tops),
              ).toBe(true);
            const node = plan.binds.filter((b) => b.row === "node").map((b) => [b.source, b.inside, b.mode]);
            if (row.nodeUnderOpt) {
              expect(node).toEqual([[OPT_NODE, OPT_NODE, "ro"]]);
              // A Claude Code session's plan binds the binary where this host keeps it.
              const claude = await host.exec(planOf("claude-pm"), as);
              const bins = json<Plan>(claude, "plan --json (claude-pm)").binds.filter((b) => b.row === "claude-bin");
              expect(bins.map((b) => [b.source, b.inside, b.mode])).toEqual([[OPT_CLAUDE, OPT_CLAUDE, "ro"]]);
            }
          });
          for (const scenario of row.scenarios) {
            it(`${scenario} runs as a confined session and every assertion passes`, async () => {
              const r = await host.exec(
                ["node", "src/cli/main.ts", "run", "--only", scenario, "--json", "--jobs", "1"],
                as,
              );
              const out = json<{
                scenarios: Array<{
                  runs: Array<{ problem: string | null; assertions: Array<{ label: string; verdict: string }> }>;
                }>;
              }>(r, `run ${scenario}`);
              const run = out.scenarios[0]!.runs[0]!;
              const failed = run.assertions.filter((a) => a.verdict !== "pass");
              expect(failed, `${run.problem ?? ""}\n${r.stderr.slice(-2000)}`).toEqual([]);
              expect(r.exitCode).toBe(0);
              if (scenario === "fake-shell-confined") {
                const labels = run.assertions.map((a) => a.label);
                // The effects this row is about: a write in the workspace, the stand-in never read.
                for (const k of ["file_exists", "reply_not_contains", "turn_failed", "no_standin_leak"])
                  expect(
                    labels.some((l) => l.startsWith(k)),
                    `${k} among ${labels.join(", ")}`,
                  ).toBe(true);
              }
              resultOf(row, as).sessions.push(scenario);
            }, 240_000);
          }
          it(`attack rows ${MATRIX_ATTACKS.join(", ")} are blocked, and each control gets through`, async () => {
            const r = await host.exec(["node", "matrix/inside.ts", "attacks"], as);
            const rows = json<
              Array<{
                id: string;
                blocked: { through: boolean; ran: boolean; out: string };
                control: { through: boolean; out: string } | null;
              }>
            >(r, "inside.ts attacks");
            expect(rows.map((x) => x.id)).toEqual([...MATRIX_ATTACKS]);
            for (const x of rows) {
              expect(x.blocked.ran, `${x.id}: the sandbox ran the attack to its end\n${x.blocked.out}`).toBe(true);
              expect(x.blocked.through, `${x.id} got through with every layer in place\n${x.blocked.out}`).toBe(false);
              if (x.control !== null)
                expect(x.control.through, `${x.id}: the control did not get through\n${x.control.out}`).toBe(true);
            }
            expect(rows.filter((x) => x.control !== null).length, "most rows have a control here").toBeGreaterThan(2);
            resultOf(row, as).attacksBlocked = rows.length;
          }, 300_000);
          if (row.base === "deb12-split") {
            it("control: planned with merged-usr facts, the same host's sandbox does not start", async () => {
              const r = await host.exec(["node", "matrix/inside.ts", "merged-facts"], as);
              const seen = json<{ own: string | null; merged: string | null }>(r, "inside.ts merged-facts");
              expect(seen.own, "with its own facts the probe passes").toBeNull();
              expect(
                seen.merged,
                "with /bin and /lib taken for links into /usr, sh and the loader are gone",
              ).not.toBeNull();
            });
          }
        } else {
          const d = causeOf(row);
          it(`the probe refuses, naming ${d.id} and its fix`, async () => {
            const r = await host.exec(PLAN, as);
            const plan = json<Plan>(r, "plan --json");
            recordProbe(row, as, plan);
            expect(r.exitCode, r.stderr).toBe(3);
            expect(plan.probe.ok).toBe(false);
            expect(
              plan.probe.problem!.startsWith(`${d.cause}: ${d.fix} (bwrap cannot apply `),
              plan.probe.problem!,
            ).toBe(true);
          });
          it("the launcher's refusal event is sandbox-unavailable and names the cause", async () => {
            const r = await host.exec(["node", "matrix/inside.ts", "launch"], as);
            const event = json<{ kind: string; code?: string; message?: string }>(r, "inside.ts launch");
            expect([event.kind, event.code]).toEqual(["refuse", "sandbox-unavailable"]);
            expect(event.message, event.message).toContain(`${d.cause}: ${d.fix}`);
          });
          if (row.procMasked || row.seccompBlocksUserns) {
            it("control: the same container with the restriction lifted passes the probe", async () => {
              const lifted = await startHost(row, "restriction");
              try {
                const r = await lifted.exec(PLAN, as);
                expect(json<Plan>(r, "plan --json").probe, r.stderr).toMatchObject({ ok: true, problem: null });
              } finally {
                await lifted.stop();
              }
            }, 120_000);
          }
        }
      });
    }
  });
}

describe("baselines/hosts.json and the README's Hosts table", () => {
  it("every row showed what baselines/hosts.json says (MATRIX_UPDATE=1 rewrites it for review)", () => {
    const seen = sortResults([...results.values()]);
    expect(seen.length, "every row ran as root and as a user").toBe(HOSTS.length * 2);
    if (process.env.MATRIX_UPDATE === "1") {
      writeHostResults(seen);
      writeReadmeTable(seen);
    }
    expect(seen).toEqual(readHostResults());
  });
});
