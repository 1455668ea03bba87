// Many sessions at once through the real launcher (live/load.test.ts): each with a canary in its
// workspace, each trying every other session's canary, run directory, tool socket and model
// socket; then every one stopped, and what it left on the host counted. A second wave is launched
// by a host process that is then SIGKILLed, and recover() ends it. Used in-process (root) and by
// load-as.ts under another uid; both report a WaveObserved for the test's assertions.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { launchWithBinds } from "../../src/conformance/controls/launch.ts";
import { exposedBind, withBindsBeforeLast } from "../../src/conformance/controls/binds.ts";
import { makeCanary } from "../../src/conformance/traps/canary.ts";
import { ask, waitClaimed, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { LaunchRegistry } from "../../src/host/launch-registry.ts";
import { prepareLaunch, start, type PreparedLaunch, type Session } from "../../src/host/launcher.ts";
import { recover } from "../../src/host/recover.ts";
import { findSessionBwraps, isAlive } from "../../src/host/session-procs.ts";

export type WaveObserved = {
  uid: number;
  runs: string[];
  /** Sessions whose probe read their own canary: the probe works. */
  ownCanaryRead: number;
  /** `<reader> reads <owner>'s <what>`, for every cross-session read that worked. */
  crossings: string[];
  replied: number;
  /** `<run>: <why>` for each session whose probe got no answer naming its own canary. */
  unanswered: string[];
  claims: number;
  releases: number;
  /** Broker calls that succeeded for one run's capability on another run's instance. */
  foreignCalls: string[];
  ends: Record<string, string>;
  /** Processes, cgroups, mount stubs and sockets of the wave still on the host after it ended. */
  leftovers: string[];
};

export type CrashObserved = {
  runs: string[];
  launched: number;
  /** recover()'s runs, in the order it ended them. */
  recovered: string[];
  /** Each run's recorded end reason. */
  ends: Record<string, string | null>;
  /** Lines `ended host-lost <run>` in the launch log, per run. */
  endLines: Record<string, number>;
  /** A second recover() finds these still open: must be none. */
  again: string[];
  leftovers: string[];
};

const TIMINGS = { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 30 };

function prepareOne(w: RuntimeWorld, run: string, extra: Record<string, unknown> = {}): PreparedLaunch {
  const p = prepareLaunch(w.request(w.instance("pi-coder", run), { timings: TIMINGS, ...extra }));
  if (p.kind !== "ready") throw new Error(`${run}: refused: ${p.code}: ${p.message}`);
  return p.prepared;
}

const sockets = (p: PreparedLaunch): Array<[string, string]> => {
  const sf = p.session.sessionFile;
  return [
    ["tool socket", sf.toolSocket.path],
    ...(sf.model ? ([["model socket", sf.model.socket]] as Array<[string, string]>) : []),
  ];
};

/** The shell each session runs: its own canary, then every other's canary, run dir and sockets. */
function probeScript(me: PreparedLaunch, all: readonly PreparedLaunch[]): string {
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const lines = [`printf 'OWN %s\\n' "$(cat canary.txt 2>/dev/null)"`];
  for (const o of all) {
    if (o === me) continue;
    const run = o.req.instance.run;
    lines.push(`printf 'CANARY ${run} %s\\n' "$(cat ${q(join(o.req.instance.workspace, "canary.txt"))} 2>/dev/null)"`);
    lines.push(`[ -e ${q(o.req.runDir)} ] && echo 'SEES ${run} run directory'`);
    for (const [what, path] of sockets(o)) lines.push(`[ -e ${q(path)} ] && echo 'SEES ${run} ${what}'`);
  }
  return `${lines.join("\n")}\ntrue`;
}

/** What of a prepared launch is still on the host. */
function leftoversOf(registry: LaunchRegistry, p: PreparedLaunch): string[] {
  const run = p.req.instance.run;
  const out: string[] = [];
  for (const pid of findSessionBwraps(p.req.runDir)) out.push(`${run}: bwrap ${pid} still running`);
  const rec = registry.get(run);
  for (const c of rec?.cgroups ?? []) if (existsSync(c)) out.push(`${run}: cgroup ${c}`);
  for (const s of rec?.mountStubs ?? []) if (existsSync(s.path)) out.push(`${run}: mount stub ${s.path}`);
  for (const [what, path] of sockets(p)) if (existsSync(path)) out.push(`${run}: ${what} ${path}`);
  // A lock left held keeps the workspace (or the session's uid) from every later launch.
  for (const [what, path] of [
    ["workspace lock", p.session.lock],
    ["session uid lock", p.session.uidLock],
  ] as const)
    if (path !== null && existsSync(path)) out.push(`${run}: ${what} ${path}`);
  return out;
}

/**
 * N sessions at once. `expose` binds one session's workspace into another's sandbox at its own
 * path on purpose (the positive control): exactly that pair's canary row must cross.
 */
export async function runWave(
  w: RuntimeWorld,
  prefix: string,
  n: number,
  expose?: { reader: number; owner: number },
): Promise<WaveObserved> {
  const runs = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  let prepared = runs.map((r) => prepareOne(w, r));
  const canaries = new Map(runs.map((r) => [r, makeCanary(`load-${r}`)]));
  for (const p of prepared)
    writeFileSync(join(p.req.instance.workspace, "canary.txt"), canaries.get(p.req.instance.run)! + "\n");
  if (expose) {
    const owner = prepared[expose.owner]!.req.instance.workspace;
    prepared = prepared.map((p, i) =>
      i === expose.reader ? launchWithBinds(p, (t) => withBindsBeforeLast(t, [exposedBind(owner)])) : p,
    );
  }
  const sessions: Session[] = await Promise.all(prepared.map((p) => start(p)));
  await Promise.all(sessions.map((s, i) => waitClaimed(w, s, runs[i]!, 30_000)));
  const whyNot = new Map<string, string>();
  const replies = await Promise.all(
    prepared.map((p) =>
      ask(w, p.req.instance.instance, probeScript(p, prepared), "pm-load", 60_000).catch((e: Error) => {
        whyNot.set(p.req.instance.run, e.message);
        return "";
      }),
    ),
  );
  const crossings: string[] = [];
  let ownCanaryRead = 0;
  replies.forEach((reply, i) => {
    const me = runs[i]!;
    if (reply.includes(`OWN ${canaries.get(me)}`)) ownCanaryRead++;
    for (const other of runs)
      if (other !== me && reply.includes(canaries.get(other)!)) crossings.push(`${me} reads ${other}'s canary`);
    for (const m of reply.matchAll(/^SEES (\S+) (.+)$/gm)) crossings.push(`${me} reads ${m[1]}'s ${m[2]}`);
  });
  const ended = await Promise.all(sessions.map((s) => s.stop()));
  const registry = new LaunchRegistry(join(w.stateDir, "launches"));
  const mine = w.broker.records().filter((r) => runs.includes(r.run ?? "") && r.outcome === "ok");
  return {
    uid: process.getuid!(),
    runs,
    ownCanaryRead,
    crossings: crossings.sort(),
    replied: replies.filter((r) => r.includes("OWN ")).length,
    unanswered: runs.flatMap((r, i) =>
      replies[i]!.includes("OWN ")
        ? []
        : [`${r}: ${whyNot.get(r) ?? `its reply was ${JSON.stringify(replies[i]!.slice(0, 200))}`}`],
    ),
    claims: mine.filter((r) => r.verb === "role.claim").length,
    releases: mine.filter((r) => r.verb === "role.release").length,
    foreignCalls: mine
      .filter((r) => r.instance !== null && r.instance !== r.run)
      .map((r) => `${r.run} → ${r.instance}: ${r.verb}`),
    ends: Object.fromEntries(ended.map((e, i) => [runs[i]!, e.reason])),
    leftovers: prepared.flatMap((p) => leftoversOf(registry, p)),
  };
}

/** A wave launched by a host process of its own, which is SIGKILLed once all have claimed; then recover(). */
export async function crashWave(w: RuntimeWorld, prefix: string, n: number): Promise<CrashObserved> {
  const runs = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const prepared = runs.map((r) => prepareOne(w, r));
  const files = prepared.map((p, i) => {
    const { bus: _bus, ...req } = p.req;
    const file = join(w.root, `${runs[i]}.json`);
    writeFileSync(file, JSON.stringify(req));
    return file;
  });
  const caps = runs.map((run) => w.broker.issueCapability({ run, instance: run }));
  const host = spawn(process.execPath, [join(REPO_ROOT, "src/conformance/processes/host-process.ts"), ...files], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  host.stdin!.end(caps.join("\n") + "\n");
  let out = "";
  host.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  const claimed = () =>
    runs.every((run) => w.broker.records().some((r) => r.run === run && r.verb === "role.claim" && r.outcome === "ok"));
  for (const t0 = Date.now(); Date.now() - t0 < 60_000 && !claimed(); ) await new Promise((r) => setTimeout(r, 50));
  const launched = out.split("\n").filter((l) => l.startsWith("LAUNCHED ")).length;
  host.kill("SIGKILL");
  await new Promise((r) => host.once("exit", r));
  const registry = new LaunchRegistry(join(w.stateDir, "launches"));
  const recovered = (await recover(registry, w.broker)).map((r) => r.run).filter((r) => runs.includes(r));
  const again = (await recover(registry, w.broker)).map((r) => r.run).filter((r) => runs.includes(r));
  const log = existsSync(join(registry.dir, "launches.log"))
    ? readFileSync(join(registry.dir, "launches.log"), "utf8")
    : "";
  for (let i = 0; i < 100 && prepared.some((p) => findSessionBwraps(p.req.runDir).some(isAlive)); i++)
    await new Promise((r) => setTimeout(r, 20));
  return {
    runs,
    launched,
    recovered,
    ends: Object.fromEntries(runs.map((r) => [r, registry.get(r)?.end?.reason ?? null])),
    endLines: Object.fromEntries(
      runs.map((r) => [r, log.split("\n").filter((l) => l.includes(` ended host-lost ${r} `)).length]),
    ),
    again,
    leftovers: prepared.flatMap((p) => leftoversOf(registry, p)),
  };
}
