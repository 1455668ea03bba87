// The scenario runner's launch service: what acts on a launch the stand-in broker accepted. The
// broker records each launch call read on its launch socket, with the caller its capability names;
// this starts the declared session of the instance named, launchedBy that caller, and delivers the
// launch's message from it as the first message. A launch nobody declared is a stray, reported as
// a failed row: the broker said it launched, and nothing did.
import { join } from "node:path";
import type { Launch } from "../stand-ins/broker/store.ts";
import type { RuntimeWorld } from "../worlds/runtime-world.ts";
import type { LaunchedSession } from "./load.ts";
import { startSessionRun, type SessionEvidence, type SessionRun, type SessionRunSetup } from "./session-run.ts";

const POLL_MS = 25;

export interface LaunchedRun {
  spec: LaunchedSession;
  /** Its launch, its run (`run-<n>` in launch order) and its values. */
  setup: SessionRunSetup;
  /** Why it could not be launched or carried out; null when it was. */
  problem: string | null;
  evidence: SessionEvidence | null;
}

export interface LaunchService {
  /** Serves the launches recorded so far and waits until each launched session has answered its first message. */
  settle(): Promise<void>;
  /** Stops every launched session and collects its evidence under `<out>/launched/<instance>/`. */
  finish(out: string): Promise<void>;
  runs(): readonly LaunchedRun[];
  /** Launches the service did not serve: an undeclared instance, a second launch of one, or a call from a session other than the launcher. */
  strays(): ReadonlyArray<{ launch: Launch; why: string }>;
}

/** Which declared session answers a recorded launch, or why none does. Pure. */
export function matchLaunch(
  l: Launch,
  launcherRun: string,
  specs: readonly LaunchedSession[],
  served: ReadonlySet<LaunchedSession>,
): { kind: "serve"; spec: LaunchedSession } | { kind: "stray"; why: string } {
  if (l.run !== launcherRun)
    return { kind: "stray", why: `run ${l.run} launched ${l.instance}: only the main session's launches are served` };
  const spec = specs.find((s) => s.instance.instance === l.instance);
  if (spec === undefined)
    return { kind: "stray", why: `${l.by} launched ${l.instance}, which the scenario does not declare under launches` };
  if (served.has(spec)) return { kind: "stray", why: `${l.by} launched ${l.instance} a second time` };
  return { kind: "serve", spec };
}

/** Serves `launcherRun`'s launches with the declared sessions; `setupOf` builds each one's launch. */
export function startLaunchService(
  w: RuntimeWorld,
  launcherRun: string,
  specs: readonly LaunchedSession[],
  setupOf: (spec: LaunchedSession, launch: Launch, run: string) => SessionRunSetup,
): LaunchService {
  let seen = 0;
  const runs: LaunchedRun[] = [];
  const sessions = new Map<LaunchedRun, SessionRun>();
  const tasks: Array<Promise<void>> = [];
  const strays: Array<{ launch: Launch; why: string }> = [];
  let stopped = false;

  const serve = (l: Launch) => {
    const m = matchLaunch(l, launcherRun, specs, new Set(runs.map((r) => r.spec)));
    if (m.kind === "stray") return strays.push({ launch: l, why: m.why });
    const spec = m.spec;
    const run = `run-${runs.length + 1}`;
    const entry: LaunchedRun = { spec, setup: setupOf(spec, l, run), problem: null, evidence: null };
    runs.push(entry);
    tasks.push(
      (async () => {
        const session = await startSessionRun(entry.setup);
        sessions.set(entry, session);
        await session.ask(l.message, l.by);
      })().catch((e: unknown) => {
        entry.problem = (e as Error).message;
        entry.setup.event("problem", { problem: entry.problem });
      }),
    );
  };
  const poll = () => {
    const all = w.broker.state().launches;
    for (; seen < all.length; seen++) serve(all[seen]!);
  };
  const loop = (async () => {
    while (!stopped) {
      poll();
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
  })();

  return {
    async settle() {
      poll();
      await Promise.all(tasks);
    },
    async finish(out) {
      stopped = true;
      await loop;
      await Promise.all(tasks);
      for (const r of runs) {
        const s = sessions.get(r);
        if (s !== undefined) r.evidence = await s.finish(join(out, "launched", r.spec.instance.instance));
      }
    },
    runs: () => runs,
    strays: () => strays,
  };
}
