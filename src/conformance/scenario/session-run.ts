// One session of a scenario, from its launch to its evidence: its own scripted API, the real
// launcher and runner in bwrap, the knobs applied, its files hashed once the launch has written the
// bundle, then its messages and, at the end, everything judged later: replies, requests, the
// broker's record of its run, the egress log, stderr, its HOME and session files, its argv.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { ResolvedInstance } from "../../core/launch/instance.ts";
import type { EgressRecord } from "../../core/network/egress.ts";
import { egressLogPath } from "../../host/model-proxy.ts";
import type { Session } from "../../host/launcher.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { claudeProjectSlug } from "../baselines/memory-probe.ts";
import { fillTemplateVars } from "../stand-ins/model-script/format.ts";
import { waitClaimed, type RuntimeWorld } from "../worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../host/launcher.ts";
import { startScriptedApi, type ScriptedApi } from "../stand-ins/scripted-api.ts";
import type { Evidence } from "./evidence.ts";
import { applyBreak, applyFault } from "./knobs.ts";
import type { LaunchedSession } from "./load.ts";
import { TEMPLATE_VARS, type TemplateVar } from "./template-vars.ts";

const MESSAGE_TIMEOUT_MS = 90_000;

export type Values = Record<TemplateVar, string>;

/** A session's template variable values, every name of TEMPLATE_VARS. */
export function valuesOf(
  w: RuntimeWorld,
  at: { workspace: string; run: string; mainWorkspace: string; mainRun: string },
  extra: { trapPort: number | null; canary: string },
): Values {
  const home = join(at.run, "home");
  return {
    workspace: at.workspace,
    run: at.run,
    home,
    main_workspace: at.mainWorkspace,
    main_run: at.mainRun,
    launch_socket: w.broker.launchSocket,
    repo: REPO_ROOT,
    data_root: w.data,
    founder_home: w.stand.founderHome,
    workspace_slug: claudeProjectSlug(at.workspace),
    trap_port: String(extra.trapPort ?? 0),
    canary: extra.canary,
    ssh_key: w.stand.files.sshKey,
    secrets_env: w.stand.files.secretsEnv,
    secrets_env_via_home: `~/${relative(home, w.stand.files.secretsEnv)}`,
    mosaic_state: w.stand.files.mosaicState,
    git_credentials: w.stand.files.gitCredentials,
    other_workspace: w.stand.files.otherWorkspace,
    secret: w.stand.secret,
  };
}

export const sha256 = (f: string): string | null =>
  existsSync(f) ? createHash("sha256").update(readFileSync(f)).digest("hex") : null;

/** Every regular file under the directories, by path; a file over 1 MiB is read as its first MiB. */
function readTree(dirs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile())
        out[f] = readFileSync(f)
          .subarray(0, 1 << 20)
          .toString("utf8");
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

export interface SessionRunSetup {
  w: RuntimeWorld;
  spec: LaunchedSession;
  /** The resolved instance: its workspace, run and launchedBy set by the caller. */
  instance: ResolvedInstance;
  values: Values;
  hostEnv: Record<string, string>;
  turnTimeoutSeconds: number;
  /** The host files its file_* assertions name, hashed once the launch has written its run directory. */
  fileKeys: readonly string[];
  event: (what: string, extra?: object) => void;
  /** Runs after the launch has written the run directory, before the files are hashed (run_files). */
  afterStart?: () => void;
}

/** What a session leaves once stopped: its part of the evidence, and a problem when it could not be run. */
export type SessionEvidence = Omit<Evidence, "trapConnections" | "standIns">;

export interface SessionRun {
  /** Sends one message from `from` and waits for its RESULT; a runner that exited, or the timeout, ends the wait with none. */
  ask(body: string, from: string): Promise<string | null>;
  /** Stops the session and collects its evidence, writing its logs under `out`. Never throws. */
  finish(out: string): Promise<SessionEvidence>;
}

/** Launches the session and waits for its claim; on any failure nothing is left running and the error is thrown. */
/** What a started session run holds while it runs. */
type Live = { api: ScriptedApi; session: Session; hadProxy: boolean; over: boolean };
type FileHashes = Record<string, { before: string | null; after: string | null }>;

export async function startSessionRun(st: SessionRunSetup): Promise<SessionRun> {
  const replies: Array<string | null> = [];
  const files: FileHashes = {};
  const live = await launchSession(st, files);
  return {
    async ask(body, from) {
      const reply = await waitReply(st, live, replies.length + 1, body, from);
      replies.push(reply);
      return reply;
    },
    async finish(out) {
      mkdirSync(out, { recursive: true });
      const end = await live.session.stop();
      await live.api.stop();
      return collectEvidence(st, live, end, out, replies, files);
    },
  };
}

/** The scripted API, then the launch through the real launcher, with the files hashed before any message; stops what it started if the run cannot be claimed. */
async function launchSession(st: SessionRunSetup, files: FileHashes): Promise<Live> {
  const { w, spec, instance, values } = st;
  // The fake harness gets a scripted API with no turns too: a model call from its shell is a recorded failure, never a call to the public API.
  const scriptValues = Object.fromEntries(
    Object.entries(values).filter(([k]) => !TEMPLATE_VARS[k as TemplateVar].assertionsOnly),
  );
  const api = await startScriptedApi({
    ...(spec.model !== null ? { script: fillTemplateVars(spec.model, scriptValues) } : {}),
    onFailure: (f) => st.event("model-failure", f),
  });
  let session: Session | null = null;
  try {
    st.event("model-up", { url: api.url, turns: spec.model?.turns.length ?? 0 });
    const req = w.request(instance, {
      adapter: spec.harness === "fake" ? w.request(instance).adapter! : { kind: "harness" },
      hostEnv: st.hostEnv,
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: st.turnTimeoutSeconds },
      modelUpstream: api.url,
    });
    const prepared = prepareLaunch(req);
    if (prepared.kind === "refuse") throw new Error(`the launcher refused: ${prepared.code}: ${prepared.message}`);
    const p = applyFault(
      spec,
      instance.workspace,
      REPO_ROOT,
      applyBreak(spec, w, prepared.prepared, instance.workspace, st.hostEnv),
    );
    session = await start(p);
    const live: Live = { api, session, hadProxy: p.session.sessionFile.model !== null, over: false };
    st.event("launched", {
      run: instance.run,
      harness: spec.harness,
      launchedBy: instance.launchedBy,
      break: spec.break,
      fault: spec.fault,
    });
    st.afterStart?.();
    // Hashed once the launch has written the bundle and session.json, before any message: nothing in the sandbox has acted yet.
    for (const f of st.fileKeys) files[f] = { before: sha256(f), after: null };
    await waitClaimed(w, session, instance.run);
    void session.exited.then(() => (live.over = true));
    st.event("claimed");
    return live;
  } catch (e) {
    if (session !== null) await session.stop();
    await api.stop();
    throw e;
  }
}

/** Delivers one message and waits for its RESULT, until the runner exits or the timeout. */
async function waitReply(
  st: SessionRunSetup,
  live: Live,
  n: number,
  body: string,
  from: string,
): Promise<string | null> {
  const { w, instance } = st;
  st.event("message", { n, from, body });
  const id = w.broker.deliver(instance.instance, { from, body });
  let reply: { body: string | null; why?: string } = { body: null, why: `no reply within ${MESSAGE_TIMEOUT_MS} ms` };
  for (const t0 = Date.now(); Date.now() - t0 < MESSAGE_TIMEOUT_MS; ) {
    const got = w.broker.sentTo(from).find((m) => m.kind === "result" && m.replyTo === id);
    if (got !== undefined) {
      reply = { body: got.body };
      break;
    }
    if (live.over) {
      reply = { body: null, why: "the runner exited before it replied" };
      break;
    }
    await new Promise((ok) => setTimeout(ok, 25));
  }
  st.event(reply.body === null ? "no-reply" : "reply", reply);
  return reply.body;
}

/** Everything the assertions judge, read from the ended run and copied into `out`. */
function collectEvidence(
  st: SessionRunSetup,
  live: Live,
  end: Awaited<ReturnType<Session["stop"]>>,
  out: string,
  replies: Array<string | null>,
  files: FileHashes,
): SessionEvidence {
  const { w, instance } = st;
  const runDir = join(w.data, "runs", instance.run);
  st.event("stopped", { reason: end.reason, end: end.end });
  writeFileSync(join(out, "runner.stderr"), end.stderr);
  const stderr = [end.stderr, ...keepTurnStderr(runDir, out)];
  for (const f of st.fileKeys) files[f] = { before: files[f]?.before ?? null, after: sha256(f) };
  const egressFile = egressLogPath(w.stateDir, instance.run);
  // The proxy writes its log at its first request: a proxy that saw none leaves no file, and an empty log.
  const egress = existsSync(egressFile)
    ? readFileSync(egressFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as EgressRecord)
    : live.hadProxy
      ? []
      : null;
  if (existsSync(egressFile)) copyFileSync(egressFile, join(out, "egress.jsonl"));
  const broker = w.broker.records().filter((r) => r.run === instance.run);
  const requests = live.api.requests();
  writeFileSync(join(out, "requests.json"), JSON.stringify(requests, null, 2) + "\n");
  // The capabilities were the stand-in broker's and are void now; they are still kept out of the record.
  writeFileSync(
    join(out, "broker.json"),
    JSON.stringify(
      broker.map((r) => ({ ...r, cap: r.cap === null ? null : "<capability>" })),
      null,
      2,
    ) + "\n",
  );
  const exit = end.end.kind === "code" ? end.end.code : null;
  return {
    replies,
    requests,
    broker,
    egress,
    stderr,
    runnerLog: end.stderr,
    files,
    exit,
    transcripts: readTree([join(runDir, "home"), join(runDir, "session")]),
    argv: live.session.plan.argv,
  };
}

/** Each turn's stderr file, copied into `out/turns`, and its text. */
function keepTurnStderr(runDir: string, out: string): string[] {
  const turns = join(runDir, "turns");
  if (!existsSync(turns)) return [];
  mkdirSync(join(out, "turns"), { recursive: true });
  return readdirSync(turns)
    .filter((n) => n.endsWith(".stderr"))
    .sort()
    .map((n) => {
      copyFileSync(join(turns, n), join(out, "turns", n));
      return readFileSync(join(turns, n), "utf8");
    });
}
