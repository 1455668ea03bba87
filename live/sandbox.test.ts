import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { RUNNER_ENTRY } from "../src/core/session/plan-session.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { start, type PreparedLaunch } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { prepareInWorld, runLiveTurn } from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { makeScratch, SHARED_SCRATCH_BASE } from "../src/conformance/worlds/scratch.ts";
import { withBeforePair, withRunnerCommand, withoutPair } from "../src/conformance/controls/argv.ts";
import { exposedBind, withBindsBeforeLast, withoutRow } from "../src/conformance/controls/binds.ts";
import { launchWithBinds, launchWithBwrapArgv } from "../src/conformance/controls/launch.ts";

// Seed 002's confined shell, through the one launcher: prepareLaunch() plans a pi-coder session
// with the fake adapter, start() runs the real runner as pid 1 of the sandbox planned from
// binds()/bwrapArgv(), and the probes go as one message's body, which the fake adapter runs in sh
// in a turn. What only pid 1 sees (its own HOME and TMPDIR) is read by a shell in the runner's
// place. Each control removes one protection from the prepared launch before start().
const facts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt("bwrap with user namespaces", checkoutProblem(REPO_ROOT) ?? sandboxProblem(facts));

let w: RuntimeWorld;
let scratch: ReturnType<typeof makeScratch>;
const HOST_TMP_MARK = join("/tmp", `mosaic-live-host-tmp-${process.pid}`);

beforeAll(async () => {
  // Outside the checkout: the control that binds the whole checkout must not also bind this world.
  scratch = makeScratch("sandbox", SHARED_SCRATCH_BASE);
  w = await makeRuntimeWorld("sandbox", { root: scratch.root });
  writeFileSync(HOST_TMP_MARK, "host tmp\n");
});

afterAll(async () => {
  spawnSync("rm", ["-f", HOST_TMP_MARK, `/tmp/inside-${process.pid}`]);
  await w?.close();
  scratch?.remove();
});

let sessions = 0;
/** A pi-coder session with the fake adapter, planned by prepareLaunch(). */
const planned = (): PreparedLaunch => prepareInWorld(w, w.request(w.instance("pi-coder", `box-${++sessions}`)));

/** The script as one message's body, run by the fake adapter's shell in a turn of the real runner; its reply is the script's lines. */
async function confinedShell(
  p: PreparedLaunch,
  script: (p: PreparedLaunch) => string,
): Promise<{ out: string; err: string; why: string }> {
  const t = await runLiveTurn(w, p, script(p), {}, 30_000);
  return { out: t.reply ?? "", err: t.stderr, why: `${t.why} ${t.runnerLog.slice(-600)}` };
}

/** The script in the runner's place (pid 1, behind setpriv and prlimit), its lines on stderr: what only pid 1 sees. */
async function runnerPlaceShell(p: PreparedLaunch, script: string): Promise<string> {
  const s = await start(launchWithBwrapArgv(p, (a) => withRunnerCommand(a, ["/bin/sh", "-c", `{\n${script}\n} >&2`])));
  const ended = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
  return (ended ?? (await s.stop())).stderr;
}

/** Each probe prints "name yes|no"; the checks below read them. */
const PROBES = (p: PreparedLaunch) => {
  const { workspace: ws, runDir: run } = p.session.spec;
  return `
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
N=other-ws-visible t test -e "${w.stand.files.otherWorkspace}"
N=checkout-visible t test -e "${REPO_ROOT}/README.md"
N=host-home-visible t test -e "${process.env.HOME ?? "/root"}"
N=node-runs t "${p.facts.node.path}" -e 0
N=pid-1 t sh -c 'tr "\\0" " " < /proc/1/cmdline | grep -q "${RUNNER_ENTRY}"'
`;
};

/** What the runner's own place sees: it is pid 1, with the HOME and TMPDIR bwrap set for it. */
const RUNNER_PROBES = (p: PreparedLaunch) => `
t() { if "$@" >/dev/null 2>&1; then echo "$N yes"; else echo "$N no"; fi; }
N=runner-pid-1 t test "$$" = 1
N=runner-home-is-run t test "$HOME" = "${p.session.spec.runDir}/home"
N=runner-tmpdir-is-tmp t test "$TMPDIR" = /tmp
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
    const p = planned();
    const { workspace: ws, runDir: run } = p.session.spec;
    const r = await confinedShell(p, PROBES);
    expect(r.err, r.why).toBe("");
    expect(answers(r.out), r.why).toEqual({
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
    // The effect, seen from outside: the workspace write landed, the bundle is as the launcher wrote it.
    expect(readFileSync(join(ws, "made-inside"), "utf8")).toBe("from-sandbox\n");
    expect(readFileSync(join(run, "bundle/policy.json"), "utf8")).toBe(p.launch.bundle["policy.json"]);
    expect(existsSync(`/tmp/inside-${process.pid}`), "the private /tmp is a tmpfs, not the host's /tmp").toBe(false);
    const q = planned();
    expect(answers(await runnerPlaceShell(q, RUNNER_PROBES(q))), "pid 1's own environment").toEqual({
      "runner-pid-1": "yes",
      "runner-home-is-run": "yes",
      "runner-tmpdir-is-tmp": "yes",
    });
  });

  it("breaking it on purpose: each removed protection lets exactly its attack through", async () => {
    const good = answers((await confinedShell(planned(), PROBES)).out);

    const noRemount = answers(
      (await confinedShell(launchWithBwrapArgv(planned(), withoutPair("--remount-ro", "/")), PROBES)).out,
    );
    expect(diff(good, noRemount)).toEqual({ "root-writable": "yes" });

    const noBundleRo = answers(
      (
        await confinedShell(
          launchWithBinds(planned(), (t) => withoutRow(t, "bundle")),
          PROBES,
        )
      ).out,
    );
    expect(diff(good, noBundleRo)).toEqual({ "bundle-writable": "yes" });

    const checkoutBound = answers(
      (
        await confinedShell(
          launchWithBinds(planned(), (t) => withBindsBeforeLast(t, [exposedBind(REPO_ROOT)])),
          PROBES,
        )
      ).out,
    );
    expect(diff(good, checkoutBound)).toEqual({ "checkout-visible": "yes" });

    const noPrivateTmp = answers(
      (
        await confinedShell(
          launchWithBwrapArgv(
            launchWithBinds(planned(), (t) => t.slice(0, -1)),
            (a) => withBeforePair(a, "--remount-ro", "/", ["--bind", "/tmp", "/tmp"]),
          ),
          PROBES,
        )
      ).out,
    );
    expect(diff(good, noPrivateTmp)).toEqual({ "host-tmp-visible": "yes" });
  });
});

function diff(a: Record<string, string>, b: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => a[k] !== v));
}
