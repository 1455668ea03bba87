// A real Pi turn and a real Claude Code turn, confined through the launcher and runner, against
// the same turn unconfined, interleaved so drift hits both alike. The model is the scripted
// Messages API, one text turn per session, through the host's model proxy in both arms. A turn is
// the message delivered to its RESULT, after the claim; it includes the runner's wait for its next
// poll (pollMs 100, as the scenarios), up to 100 ms in either arm. A start is start() to the
// claim: the host's setup (bundle, gate cache, proxy, cgroup), the spawn and the runner's claim.
//
// Unconfined is the same prepared launch with bwrap's part of argv left out: the same runner
// (setpriv, prlimit, the execute-only node, the pids cgroup), the same broker, proxy, bundle and
// harness argv, on the host. It leaves out, so the ratio prices exactly these:
// - bwrap itself: the namespaces (user, pid, ipc, net), every bind and tmpfs, --cap-drop, the
//   seccomp filter, --disable-userns, --new-session;
// - the private network: the runner's model port is on the host's loopback, moved from 8787 to a
//   free port (8787 may be taken there), so ANTHROPIC_BASE_URL and Pi's models.json name that
//   port (the manifest's digest of models.json is then stale; nothing checks it at run time);
// - the tmpfs HOME and /tmp: HOME is the run's home/ on disk, TMPDIR a private directory on disk,
//   both set for the runner and the harness as bwrap's --setenv would.
import { freePort } from "../../src/conformance/processes/free-port.ts";
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { LaunchEnd, PreparedLaunch } from "../../src/host/launcher.ts";
import { childrenOf } from "../../src/host/session-procs.ts";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { scriptOf } from "../../src/conformance/stand-ins/model-script/format.ts";
import { ask, makeRuntimeWorld, waitClaimed, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../src/host/launcher.ts";
import { startScriptedApi } from "../../src/conformance/stand-ins/scripted-api.ts";

const ROUNDS = 5;
const REPLY = "bench turn done";
const HARNESSES = [
  { label: "pi", example: "pi-coder", tag: "p" },
  { label: "claude-code", example: "claude-coder", tag: "c" },
] as const;

type Timing = { start: number; turn: number };

export async function run(): Promise<void> {
  const w = await makeRuntimeWorld("bench-cli");
  const results: Array<{ label: string; confined: Timing[]; plain: Timing[] }> = [];
  try {
    for (const h of HARNESSES) {
      const r = { label: h.label, confined: [] as Timing[], plain: [] as Timing[] };
      results.push(r);
      for (let i = 0; i < ROUNDS; i++) {
        // The order flips each round, so neither arm always runs on a warmer cache.
        for (const confined of i % 2 === 0 ? [true, false] : [false, true]) {
          const t = await oneTurn(w, h.example, `${h.tag}${confined ? "c" : "u"}${i}`, confined);
          (confined ? r.confined : r.plain).push(t);
          process.stderr.write(
            `${h.label} round ${i + 1}/${ROUNDS} ${confined ? "confined  " : "unconfined"}: start to claim ${t.start.toFixed(0)} ms, turn ${t.turn.toFixed(0)} ms\n`,
          );
        }
      }
    }
  } finally {
    await w.close();
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const line = (what: string, c: number[], u: number[]) =>
    console.log(
      `${what}: confined ${med(c).toFixed(0)} ms, unconfined ${med(u).toFixed(0)} ms (${(med(c) / med(u)).toFixed(2)}x), medians of ${c.length}`,
    );
  for (const r of results) {
    line(
      `${r.label} turn, message to RESULT`,
      r.confined.map((t) => t.turn),
      r.plain.map((t) => t.turn),
    );
    line(
      `${r.label} session start, start() to claim`,
      r.confined.map((t) => t.start),
      r.plain.map((t) => t.start),
    );
  }
}

/** One session with its own scripted API: launched, claimed, one message to its RESULT, stopped. */
async function oneTurn(w: RuntimeWorld, example: string, name: string, confined: boolean): Promise<Timing> {
  const api = await startScriptedApi({ script: scriptOf([{ text: REPLY }], `the ${name} bench script`) });
  try {
    const hostEnv = {
      ...w.hostEnv,
      ANTHROPIC_API_KEY: "stand-in-bench-key",
      MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude"),
    };
    const req = w.request(w.instance(example, name, { instance: name }), {
      adapter: { kind: "harness" },
      hostEnv,
      modelUpstream: api.url,
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 60 },
    });
    const p = prepareLaunch(req);
    if (p.kind !== "ready") throw new Error(`${name}: the launcher refused: ${p.code}: ${p.message}`);
    const prepared = confined ? p.prepared : unconfined(p.prepared, await freePort(), join(w.root, "tmp", name));
    const t0 = performance.now();
    const s = await start(prepared);
    let end: LaunchEnd | null = null;
    try {
      await waitClaimed(w, s, name, 30_000);
      const t1 = performance.now();
      const reply = await ask(w, name, "say the bench words", "pm-bench", 90_000);
      const t2 = performance.now();
      checkArm(name, s.pid, confined);
      if (reply.trim() !== REPLY)
        throw new Error(`${name}: unexpected reply ${JSON.stringify(reply)}; runner: ${s.stderr()}`);
      if (api.failures().length > 0 || api.remaining() !== 0)
        throw new Error(`${name}: the scripted API was not called as scripted: ${JSON.stringify(api.failures())}`);
      return { start: t1 - t0, turn: t2 - t1 };
    } finally {
      end = confined ? await s.stop() : await stopUnconfined(s.pid, s.exited);
      const left = processesNaming(s.runDir);
      if (left.length > 0) {
        for (const pid of left) process.kill(pid, "SIGKILL");
        throw new Error(`${name}: processes outlived the session (killed): ${left.join(", ")}; ${end.reason}`);
      }
    }
  } finally {
    await api.stop();
  }
}

/** The same launch with bwrap left out, on the host: see the top of this file for what that drops. */
function unconfined(p: PreparedLaunch, port: number, tmp: string): PreparedLaunch {
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const url = `http://127.0.0.1:${port}`;
  const sf = p.session.sessionFile;
  const home = `${p.req.runDir}/home`;
  const bundle = { ...p.launch.bundle };
  if (bundle["models.json"] !== undefined) {
    const models = JSON.parse(bundle["models.json"]) as { providers: Record<string, { baseUrl: string }> };
    for (const prov of Object.values(models.providers)) prov.baseUrl = url;
    bundle["models.json"] = JSON.stringify(models, null, 2) + "\n";
  }
  const adapterEnv = {
    ...sf.adapter.env,
    TMPDIR: tmp,
    ...(sf.adapter.env.ANTHROPIC_BASE_URL !== undefined ? { ANTHROPIC_BASE_URL: url } : {}),
  };
  const argv = p.session.argv;
  return {
    ...p,
    launch: { ...p.launch, bundle },
    session: {
      ...p.session,
      argv: argv.slice(argv.lastIndexOf("--") + 1),
      env: { ...p.session.env, HOME: home, TMPDIR: tmp },
      sessionFile: {
        ...sf,
        adapter: { ...sf.adapter, env: adapterEnv },
        model: sf.model === null ? null : { ...sf.model, port },
      },
    },
  };
}

/** The arm is what it says: confined, the spawned process is bwrap and its runner has a network of its own; unconfined, it is the runner on the host's. */
function checkArm(name: string, pid: number, confined: boolean): void {
  const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]!;
  const runner = confined ? childrenOf(pid)[0] : pid;
  const sameNet = runner !== undefined && readlinkSync(`/proc/${runner}/ns/net`) === readlinkSync("/proc/self/ns/net");
  if (confined ? !argv0.endsWith("bwrap") || runner === undefined || sameNet : !sameNet)
    throw new Error(
      `${name}: not the ${confined ? "confined" : "unconfined"} arm: pid ${pid} runs ${argv0}, runner ${runner} ${sameNet ? "shares" : "does not share"} the host's network`,
    );
}

/** Unconfined the spawned process is the runner itself (sh, setpriv and prlimit exec it): SIGTERM, then SIGKILL after 10 s. */
async function stopUnconfined(pid: number, exited: Promise<LaunchEnd>): Promise<LaunchEnd> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 10_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Host processes whose argv or environment names the run directory: none may outlive its session. */
function processesNaming(runDir: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const text = readFileSync(`/proc/${d}/cmdline`, "utf8") + readFileSync(`/proc/${d}/environ`, "utf8");
      if (text.includes(runDir)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}
