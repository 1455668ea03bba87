// The launcher's lifecycle edges, each by its effect on real processes (seed 000, seed 002):
// stop() signals again every second until the session is gone, because a runner that is pid 1 of
// its namespace ignores a SIGTERM that comes before its handler; recover() finds a session's runner
// before it kills its bwrap, because a runner that outlived its bwrap is no longer bwrap's child.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { withRunnerCommand } from "../src/conformance/controls/argv.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { prepareLaunch, start, type PreparedLaunch, type Session } from "../src/host/launcher.ts";
import { recover } from "../src/host/recover.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { childrenOf, isAlive } from "../src/host/session-procs.ts";

const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("lifecycle");
});
afterAll(async () => w?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function within<T>(p: Promise<T>, ms: number): Promise<T | "still waiting"> {
  return Promise.race([p, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms))]);
}
async function waitFor(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(20)) if (ok()) return;
  throw new Error(`${what}: not within ${ms} ms`);
}
async function gone(pid: number, ms: number): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(20)) if (!isAlive(pid)) return true;
  return !isAlive(pid);
}

function prepared(name: string, extra = {}): PreparedLaunch {
  const p = prepareLaunch(w.request(w.instance("pi-coder", name), extra));
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  return p.prepared;
}

/**
 * A runner that, like the real one before its handler is set, survives the first SIGTERM, and ends
 * on the second. It logs each SIGTERM to <run>/terms, and writes <run>/ready once its trap is set.
 */
const ignoresFirstTerm = (run: string) => [
  "/bin/sh",
  "-c",
  `n=0; trap 'n=$((n+1)); echo "term $n" >> ${run}/terms; [ $n -ge 2 ] && exit 0' TERM; echo ready > ${run}/ready; while :; do sleep 0.1; done`,
];

describe("stop() against a runner that ignores the first SIGTERM (seed 000: again every second until it is gone)", () => {
  const startStubborn = async (name: string): Promise<{ s: Session; run: string }> => {
    const p = prepared(name);
    const run = p.session.spec.runDir;
    const s = await start({
      ...p,
      session: { ...p.session, argv: withRunnerCommand(p.session.argv, ignoresFirstTerm(run)) },
    });
    await waitFor("the stand-in runner set its trap", () => existsSync(join(run, "ready")));
    return { s, run };
  };
  const terms = (run: string) => (existsSync(join(run, "terms")) ? readFileSync(join(run, "terms"), "utf8") : "");

  it("shipped: the first SIGTERM is ignored, the second ends it, and stop() resolves", async () => {
    const { s, run } = await startStubborn("stop-twice");
    try {
      const end = await within(s.stop(), 8000);
      expect(end, "stop() ended a runner that ignored its first SIGTERM").not.toBe("still waiting");
      expect(terms(run), "it took a second SIGTERM").toBe("term 1\nterm 2\n");
      expect(isAlive(s.pid), "bwrap is gone").toBe(false);
    } finally {
      if (isAlive(s.pid)) process.kill(s.pid, "SIGKILL");
    }
  }, 30_000);

  it("control: one SIGTERM alone leaves the session running", async () => {
    const { s, run } = await startStubborn("stop-once");
    try {
      const [runner] = childrenOf(s.pid);
      expect(runner, "bwrap's child, the runner").toBeGreaterThan(0);
      process.kill(runner!, "SIGTERM");
      await sleep(1500);
      expect(terms(run), "the SIGTERM arrived").toBe("term 1\n");
      expect(isAlive(runner!), "and the runner runs on").toBe(true);
      expect(isAlive(s.pid), "and so does its bwrap").toBe(true);
    } finally {
      const end = await within(s.stop(), 8000);
      if (end === "still waiting") process.kill(s.pid, "SIGKILL");
    }
  }, 30_000);
});

describe("recover() with a runner that outlived its bwrap", () => {
  it("the runner is found before its bwrap is killed, and killed after it: none is left", async () => {
    const inst = w.instance("pi-coder", "outlived");
    const reqFile = join(w.root, "outlived.json");
    // A poll far away: only recover() can end this runner within the test, not its voided capability.
    const { bus: _bus, ...req } = w.request(inst, {
      timings: { pollMs: 60_000, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 5 },
    });
    writeFileSync(reqFile, JSON.stringify(req));
    const cap = w.broker.issueCapability({ run: inst.run, instance: inst.instance });
    const host = spawn(
      process.execPath,
      [join(REPO_ROOT, "src/conformance/processes/host-process.ts"), "--runner-outlives-bwrap", reqFile],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    host.stdin!.end(cap + "\n");
    const line = await new Promise<string>((ok) => host.stdout!.setEncoding("utf8").once("data", (d: string) => ok(d)));
    const bwrap = Number(/LAUNCHED (\d+)/.exec(line)?.[1]);
    expect(bwrap, line).toBeGreaterThan(0);
    await waitFor("the runner's claim", () =>
      w.broker.records().some((r) => r.run === inst.run && r.verb === "role.claim" && r.outcome === "ok"),
    );
    const [runner] = childrenOf(bwrap);
    expect(runner, "bwrap's child, the runner").toBeGreaterThan(0);
    // The runner polls once right after its claim and logs; killed before that, its write to the dead
    // host's stderr pipe could end it first. After it, nothing wakes it for a minute.
    await waitFor("the runner's first poll", () =>
      w.broker.records().some((r) => r.run === inst.run && r.verb === "message.read"),
    );
    await sleep(300);
    host.kill("SIGKILL");
    await new Promise((r) => host.once("exit", r));
    expect(isAlive(runner!), "the runner runs on after its host died").toBe(true);
    try {
      const recovered = await recover(new LaunchRegistry(join(w.stateDir, "launches")), w.broker);
      const mine = recovered.find((r) => r.run === inst.run);
      expect(mine?.killed, "recover() killed the session's bwrap").toEqual([bwrap]);
      expect(mine?.survivors, "the runner outlived its bwrap, and recover() knew it as the session's").toEqual([
        runner,
      ]);
      expect(await gone(runner!, 1000), "recover() killed it").toBe(true);
    } finally {
      for (const pid of [runner!, bwrap]) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    }
  }, 30_000);
});

describe("a session's placeholders at its end", () => {
  it("placeholders the host wrote into while the session ran are kept with their content; the untouched ones go", async () => {
    // A repository without .git/config: its placeholder is a file; absent dotfiles get directories.
    const ws = w.instance("pi-coder", "stub-written").workspace;
    mkdirSync(join(ws, ".git"), { recursive: true });
    writeFileSync(join(ws, ".git/HEAD"), "ref: refs/heads/main\n");
    const p = prepared("stub-written");
    const stubs = p.session.mountStubs;
    const file = stubs.find((s) => s.kind === "file");
    const dir = stubs.find((s) => s.kind === "dir");
    expect([file?.path, dir?.path].every(Boolean), "the plan has a file and a directory placeholder").toBe(true);
    const s = await start(p);
    try {
      await waitFor("bwrap made the placeholders", () => existsSync(file!.path) && existsSync(dir!.path));
      writeFileSync(file!.path, "[core]\n\tbare = false\n");
      writeFileSync(join(dir!.path, "kept"), "the host's\n");
    } finally {
      const end = await within(s.stop(), 8000);
      if (end === "still waiting") process.kill(s.pid, "SIGKILL");
    }
    await s.exited;
    const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "(deleted)");
    expect(read(file!.path), "the host's file is kept whole").toBe("[core]\n\tbare = false\n");
    expect(
      existsSync(dir!.path) ? readdirSync(dir!.path) : "(deleted)",
      "the host's directory is kept with its file",
    ).toEqual(["kept"]);
    expect(
      stubs.filter((x) => x !== file && x !== dir && existsSync(x.path)).map((x) => x.path),
      "every untouched placeholder is gone",
    ).toEqual([]);
  }, 30_000);
});
