// Live sessions through the one launcher: prepareLaunch() of a shipped example instance in a
// runtime world, a control's edit of the prepared launch where a test needs one, start(), one
// message to the real runner, its reply. With the real Claude Code or Pi as the adapter, the
// scripted API is the upstream of the launcher's model proxy, and what reached it is what the
// model was shown. Two fronts may stand before the harness's own argv, each an edit of the
// adapter's argv made on purpose (launchWithArgv): one seeds HOME, which bwrap makes an empty
// tmpfs, from a read-only copy; one keeps the turn's stdout, of which the reply carries only the
// result.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedInstance } from "../../core/launch/instance.ts";
import {
  prepareLaunch,
  readLaunchInputs,
  start,
  type LaunchEnd,
  type LaunchInputs,
  type LaunchRequest,
  type PreparedLaunch,
  type Session,
} from "../../host/launcher.ts";
import { readHostFacts } from "../../host/host-facts.ts";
import { exposedBind, withBindsBeforeLast } from "../controls/binds.ts";
import { launchWithArgv, launchWithBinds } from "../controls/launch.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { makeRuntimeWorld, waitClaimed, type RuntimeWorld } from "./runtime-world.ts";

export const CLAUDE_BIN = join(REPO_ROOT, "node_modules/.bin/claude");

export type Example = "claude-coder" | "pi-coder";

/** A harness turn may call the model many times: more than the fake adapter's 20 s. */
const HARNESS_TIMINGS = { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 60 };

/** fn in a fresh runtime world, closed after it (baselines:sync). */
export async function withLiveWorld<T>(label: string, fn: (w: RuntimeWorld) => Promise<T>): Promise<T> {
  const w = await makeRuntimeWorld(label);
  try {
    return await fn(w);
  } finally {
    await w.close();
  }
}

/**
 * The host's environment of a harness launch: the world's, Claude Code's binary, and stand-in
 * credentials the proxy adds upstream. `extra` overrides; an undefined value removes.
 */
export function harnessHostEnv(
  w: RuntimeWorld,
  apiUrl: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string | undefined> = {
    ...w.hostEnv,
    MOSAIC_CLAUDE_BIN: CLAUDE_BIN,
    ANTHROPIC_AUTH_TOKEN: "stand-in-proxy-token",
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: "stand-in-api-key",
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** What each world has read of the machine, by the host facts it was read with. */
const machineRead = new WeakMap<RuntimeWorld, Map<string, LaunchInputs>>();

/**
 * prepareLaunch() of a request in the world; a refusal throws. The machine (the binaries' version
 * probes, the sandbox probe) is read once per world and host facts, as a host launching many
 * sessions reads it (readLaunchInputs()); the workspace is read at each call.
 */
export function prepareInWorld(w: RuntimeWorld, req: LaunchRequest): PreparedLaunch {
  const byFacts = machineRead.get(w) ?? new Map<string, LaunchInputs>();
  machineRead.set(w, byFacts);
  const host = readHostFacts({ repo: req.repo, env: { ...req.hostEnv }, stateDir: req.stateDir });
  const key = JSON.stringify([host, req.bwrap ?? null]);
  const inputs = byFacts.get(key) ?? readLaunchInputs(req);
  byFacts.set(key, inputs);
  const p = prepareLaunch(req, inputs);
  if (p.kind !== "ready") throw new Error(`the launcher refused ${req.instance.run}: ${p.code}: ${p.message}`);
  return p.prepared;
}

/**
 * One launch of a shipped example, decided and planned by prepareLaunch() with the real harness
 * as its adapter and the scripted API as its model upstream; a refusal throws. The instance's
 * workspace is read now: plant what the plan must see there first.
 */
export function prepareLive(
  w: RuntimeWorld,
  instance: ResolvedInstance,
  apiUrl: string,
  hostEnv: Record<string, string> = harnessHostEnv(w, apiUrl),
): PreparedLaunch {
  return prepareInWorld(
    w,
    w.request(instance, { adapter: { kind: "harness" }, hostEnv, modelUpstream: apiUrl, timings: HARNESS_TIMINGS }),
  );
}

/** Where the stdout front keeps the turn's stdout, in the run directory. */
export const KEPT_STDOUT = "turns/stdout";

/**
 * The prepared launch with each turn's stdout also kept in `<run>/turns/stdout`, for a test that
 * reads the harness's own event stream (the reply is only its result). The runner still reads the
 * same bytes and judges the turn on them.
 */
export function withKeptStdout(p: PreparedLaunch): PreparedLaunch {
  const file = join(p.session.sessionFile.runDir, KEPT_STDOUT);
  return launchWithArgv(p, (argv) => ["/bin/sh", "-c", '"$@" > "$0"; s=$?; cat "$0"; exit $s', file, ...argv]);
}

/**
 * A directory for what a session's HOME holds when its CLI starts, outside the run directory
 * (start() makes that): under the world's root, readable by the session's uid.
 */
export function homeSeed(w: RuntimeWorld, name: string): string {
  const dir = join(w.root, "home-seeds", name);
  mkdirSync(dir, { recursive: true });
  for (const d of [join(w.root, "home-seeds"), dir]) chmodSync(d, 0o755);
  return dir;
}

/**
 * The prepared launch whose HOME starts as a copy of `seed`, as an earlier turn would have left
 * it: bwrap makes HOME an empty tmpfs, so the seed is bound read-only and a front copies it in
 * before the harness runs.
 */
export function withHomeSeed(p: PreparedLaunch, seed: string): PreparedLaunch {
  const q = launchWithBinds(p, (t) => withBindsBeforeLast(t, [exposedBind(seed)]));
  return launchWithArgv(q, (argv) => ["/bin/sh", "-c", 'cp -R "$0/." "$HOME/" && exec "$@"', seed, ...argv]);
}

export interface LiveTurn {
  /** The runner's reply: the turn's result when it counted, else `The turn failed: <why>`; null when none came. */
  reply: string | null;
  /** Why no reply came (no claim, the runner's end, the timeout); "" with a reply. */
  why: string;
  /** The turn's stdout where withKeptStdout() kept it, else "". */
  stdout: string;
  /** The turn's stderr, `<run>/turns/0001.stderr`. */
  stderr: string;
  /** The runner's own stderr. */
  runnerLog: string;
  end: LaunchEnd;
}

/** The turn's story for an assertion's message. */
export const explain = (t: LiveTurn): string =>
  `reply: ${t.reply?.slice(0, 600) ?? `none (${t.why})`}\nturn stderr: ${t.stderr.slice(0, 800)}\nrunner: ${t.runnerLog.slice(-800)}`;

const FROM = "pm-live";

/**
 * start(), the runner's claim, one message, its reply (or why none came), then the session
 * stopped. `afterStart` runs once start() has made the run directory (a test plants there),
 * `afterClaim` once the runner has read its session.json. Never throws on the session's own
 * failure: a test asserts on what came back. The turn's record goes to `<run>/turns/turn.log`.
 */
export async function runLiveTurn(
  w: RuntimeWorld,
  p: PreparedLaunch,
  message: string,
  hooks: { afterStart?: () => void; afterClaim?: () => void } = {},
  timeoutMs = 90_000,
): Promise<LiveTurn> {
  const sf = p.session.sessionFile;
  const s = await start(p);
  let got: { reply: string | null; why: string };
  try {
    hooks.afterStart?.();
    const claim = await waitClaimed(w, s, sf.run, 30_000).then(
      () => "",
      (e: unknown) => String(e),
    );
    if (claim === "") hooks.afterClaim?.();
    got = claim === "" ? await replyOrEnd(w, s, sf.instance, message, timeoutMs) : { reply: null, why: claim };
  } catch (e) {
    await s.stop();
    throw e;
  }
  const end = await s.stop();
  const turn: LiveTurn = {
    ...got,
    stdout: readIfThere(join(sf.runDir, KEPT_STDOUT)),
    stderr: readIfThere(join(sf.runDir, "turns/0001.stderr")),
    runnerLog: end.stderr,
    end,
  };
  writeFileSync(join(sf.runDir, "turns/turn.log"), `$ ${message}\n${explain(turn)}\n-- stdout\n${turn.stdout}\n`);
  return turn;
}

/** Delivers one message and waits for its RESULT, until the runner exits or the timeout. */
async function replyOrEnd(
  w: RuntimeWorld,
  s: Session,
  instance: string,
  body: string,
  timeoutMs: number,
): Promise<{ reply: string | null; why: string }> {
  let over = false;
  void s.exited.then(() => (over = true));
  const id = w.broker.deliver(instance, { from: FROM, body });
  for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; ) {
    const got = w.broker.sentTo(FROM).find((m) => m.kind === "result" && m.replyTo === id);
    if (got !== undefined) return { reply: got.body, why: "" };
    if (over) return { reply: null, why: "the runner exited before it replied" };
    await new Promise((ok) => setTimeout(ok, 25));
  }
  return { reply: null, why: `no reply within ${timeoutMs} ms` };
}

const readIfThere = (f: string): string => (existsSync(f) ? readFileSync(f, "utf8") : "");
