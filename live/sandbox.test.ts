import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { sessionEnv } from "../src/core/session/env.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { layOutSession, makeQuietBrokerWorld, type QuietBrokerWorld } from "../src/conformance/worlds/world.ts";
import { runConfined } from "../src/conformance/worlds/sandbox-run.ts";
import { realFsView } from "../src/host/fs-view.ts";
import { withBeforePair, withoutPair } from "../src/conformance/controls/argv.ts";
import { exposedBind, withBindsBeforeLast } from "../src/conformance/controls/binds.ts";

const facts: HostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt("bwrap with user namespaces", checkoutProblem(REPO_ROOT) ?? sandboxProblem(facts));

let world: QuietBrokerWorld;
let spec: SandboxSpec;
const HOST_TMP_MARK = join("/tmp", `mosaic-live-host-tmp-${process.pid}`);

beforeAll(async () => {
  world = await makeQuietBrokerWorld("sandbox", "broker-stand-in\n");
  const repo = join(world.root, "repo");
  const { ws, run } = layOutSession(world, "coder", "{}\n");
  for (const d of [join(repo, "src"), join(repo, "adapters"), join(run, "bundle")]) mkdirSync(d, { recursive: true });
  writeFileSync(join(repo, "src/runner.ts"), "// stand-in runner: the live shell replaces it\n");
  writeFileSync(join(repo, "adapters/adapter.sh"), "exit 0\n");
  writeFileSync(join(repo, "AGENTS.md"), "the checkout beyond the runner files\n");
  writeFileSync(join(run, "bundle/policy.json"), "{}\n");
  writeFileSync(HOST_TMP_MARK, "host tmp\n");
  spec = {
    harness: "pi",
    repo,
    runnerFiles: [join(repo, "src/runner.ts")],
    runner: join(repo, "src/runner.ts"),
    adapter: join(repo, "adapters/adapter.sh"),
    brokerSocket: world.brokerSocket,
    launchSocket: join(world.sockDir, "launch.sock"),
    mayLaunch: false,
    workspace: ws,
    runDir: run,
  };
});

afterAll(async () => {
  spawnSync("rm", ["-f", HOST_TMP_MARK, `/tmp/inside-${process.pid}`]);
  await world?.close();
});

/** Runs a shell script in place of the runner, with the argv built for the spec, and returns its lines. */
async function confinedShell(
  table: Bind[],
  script: string,
  argvEdit: (a: string[]) => string[] = (a) => a,
): Promise<{ status: number | null; out: string; err: string }> {
  const argv = argvEdit(bwrapArgv(spec, facts, table));
  const dd = argv.lastIndexOf("--");
  const r = await runConfined({
    command: [...argv.slice(0, dd + 1), "/bin/sh", "-c", script],
    env: sessionEnv(process.env),
    facts,
    timeoutMs: 20_000,
    asSession: { trees: [spec.workspace, spec.runDir] },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}
const planned = () => binds(spec, facts, realFsView());

/** Each probe prints "name yes|no"; the checks below read them. */
const PROBES = (ws: string, run: string, repo: string) => `
t() { if "$@" >/dev/null 2>&1; then echo "$N yes"; else echo "$N no"; fi; }
N=root-writable t sh -c 'echo x > /written-at-root'
N=usr-writable t sh -c 'echo x > /usr/written'
N=home-is-run t test "$HOME" = "${run}/home"
N=tmpdir-is-tmp t test "$TMPDIR" = /tmp
N=ws-writable t sh -c 'echo from-sandbox > "${ws}/made-inside"'
N=run-writable t sh -c 'echo x > "${run}/turn.done"'
N=tmp-writable t sh -c 'echo x > /tmp/inside-${process.pid}'
N=bundle-writable t sh -c 'echo x > "${run}/bundle/policy.json"'
N=session-writable t sh -c 'echo x > "${run}/session.json"'
N=host-tmp-visible t test -e "${HOST_TMP_MARK}"
N=other-ws-visible t test -e "${ws}/../other/secret.txt"
N=checkout-visible t test -e "${repo}/AGENTS.md"
N=host-home-visible t test -e "${process.env.HOME ?? "/root"}"
N=node-runs t "${facts.node.path}" -e 0
N=pid-1 t test "$$" = 1
`;

function answers(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .trim()
      .split("\n")
      .filter((l) => / (yes|no)$/.test(l))
      .map((l) => l.split(" ") as [string, string]),
  );
}

describe("a real bwrap sandbox built from bwrapArgv()", () => {
  it("confines a shell as the bind table says", async () => {
    const r = await confinedShell(planned(), PROBES(spec.workspace, spec.runDir, spec.repo));
    expect(r.err).toBe("");
    expect(answers(r.out)).toEqual({
      "root-writable": "no",
      "usr-writable": "no",
      "home-is-run": "yes",
      "tmpdir-is-tmp": "yes",
      "ws-writable": "yes",
      "run-writable": "yes",
      "tmp-writable": "yes",
      "bundle-writable": "no",
      "session-writable": "no",
      "host-tmp-visible": "no",
      "other-ws-visible": "no",
      "checkout-visible": "no",
      "host-home-visible": "no",
      "node-runs": "yes",
      "pid-1": "yes",
    });
    // The effect, seen from outside: the workspace write landed, the bundle is unchanged.
    expect(readFileSync(join(spec.workspace, "made-inside"), "utf8")).toBe("from-sandbox\n");
    expect(readFileSync(join(spec.runDir, "bundle/policy.json"), "utf8")).toBe("{}\n");
    expect(existsSync(`/tmp/inside-${process.pid}`), "the private /tmp is a tmpfs, not the host's /tmp").toBe(false);
  });

  it("breaking it on purpose: each removed protection lets exactly its attack through", async () => {
    const script = PROBES(spec.workspace, spec.runDir, spec.repo);
    const good = answers((await confinedShell(planned(), script)).out);

    const noRemount = answers((await confinedShell(planned(), script, withoutPair("--remount-ro", "/"))).out);
    expect(diff(good, noRemount)).toEqual({ "root-writable": "yes" });

    const noBundleRo = answers(
      (
        await confinedShell(
          planned().filter((b) => b.row !== "bundle"),
          script,
        )
      ).out,
    );
    expect(diff(good, noBundleRo)).toEqual({ "bundle-writable": "yes" });
    writeFileSync(join(spec.runDir, "bundle/policy.json"), "{}\n");

    const checkoutBound = answers(
      (await confinedShell(withBindsBeforeLast(planned(), [exposedBind(spec.repo)]), script)).out,
    );
    expect(diff(good, checkoutBound)).toEqual({ "checkout-visible": "yes" });

    const noPrivateTmp = answers(
      (
        await confinedShell(planned().slice(0, -1), script, (a) =>
          withBeforePair(a, "--remount-ro", "/", ["--bind", "/tmp", "/tmp"]),
        )
      ).out,
    );
    expect(diff(good, noPrivateTmp)).toEqual({ "host-tmp-visible": "yes" });
  });
});

function diff(a: Record<string, string>, b: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => a[k] !== v));
}
