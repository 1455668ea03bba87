// runScenario's engine in process, without bwrap: the session runs (session-run.ts) and the launch
// service (launch-service.ts) are stand-ins, so what run.ts itself does is seen: the stage it sets up
// (the world, the canary, the trap on 127.0.0.1, the neighbour with the secret, the filled values and
// host environment), what each session is started with (its instance, values, file keys, run files),
// the launched sessions' setups, and how every assertion of every session is judged or left
// unobserved, with each stray launch a fail. The real launcher and runner are the live tier's.
import { readFileSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { connect } from "node:net";
import { basename, join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import type { LaunchService, LaunchedRun } from "../src/conformance/scenario/launch-service.ts";
import { parseScenario, type LaunchedSession, type Scenario } from "../src/conformance/scenario/load.ts";
// Imported statically too, so StrykerJS's vitest runner counts this file among run.ts's tests (it
// runs only the test files that import a mutated file); the runs below use a copy loaded after the
// stand-ins are in place.
import { tally, type ScenarioResult } from "../src/conformance/scenario/run.ts";
import type { SessionEvidence, SessionRun, SessionRunSetup } from "../src/conformance/scenario/session-run.ts";
import type { Launch } from "../src/conformance/stand-ins/broker/store.ts";
import type { RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const SESSION_RUN = "../src/conformance/scenario/session-run.ts";
const LAUNCH_SERVICE = "../src/conformance/scenario/launch-service.ts";
const RUN = "../src/conformance/scenario/run.ts";

/** What one test's stand-in sessions do: started with a setup, they answer and leave evidence. */
type Starter = (st: SessionRunSetup) => Promise<SessionRun>;
type ServiceMaker = (
  w: RuntimeWorld,
  run: string,
  specs: readonly LaunchedSession[],
  setupOf: (spec: LaunchedSession, l: Launch, run: string) => SessionRunSetup,
) => LaunchService;

let starter: Starter = () => Promise.reject(new Error("no starter"));
let serviceMaker: ServiceMaker | null = null;
const started: SessionRunSetup[] = [];
const services: Array<{ w: RuntimeWorld; run: string; specs: readonly LaunchedSession[] }> = [];
let runScenario: (s: Scenario, opts?: { id?: string; runsDir?: string }) => Promise<ScenarioResult>;
const finished = new Map<string, string>();

/** runScenario, which returns a result: what goes wrong in a run is its problem or a verdict, never a throw. */
async function run(s: Scenario, runsDir: string): Promise<ScenarioResult> {
  const p = runScenario(s, { runsDir });
  await expect(p, "runScenario returns its result").resolves.toHaveProperty("verdict");
  return p;
}

const scratch = makeScratch("scenario-run-sweep");
beforeAll(async () => {
  vi.resetModules();
  vi.doMock(SESSION_RUN, async (orig: () => Promise<Record<string, unknown>>) => ({
    ...(await orig()),
    startSessionRun: (st: SessionRunSetup) => {
      started.push(st);
      return starter(st);
    },
  }));
  vi.doMock(LAUNCH_SERVICE, async (orig: () => Promise<Record<string, unknown>>) => ({
    ...(await orig()),
    startLaunchService: (...a: Parameters<ServiceMaker>) => {
      services.push({ w: a[0], run: a[1], specs: a[2] });
      if (serviceMaker === null) throw new Error("no launch service expected");
      return serviceMaker(...a);
    },
  }));
  ({ runScenario } = await import(RUN));
});
afterAll(() => {
  vi.doUnmock(SESSION_RUN);
  vi.doUnmock(LAUNCH_SERVICE);
  vi.resetModules();
  scratch.remove();
});
beforeEach(() => {
  started.length = 0;
  finished.clear();
  services.length = 0;
  serviceMaker = null;
});

/** Evidence of a session that ran: one reply per message asked, nothing else of note. */
const evidence = (replies: Array<string | null>, over: Partial<SessionEvidence> = {}): SessionEvidence => ({
  replies,
  requests: null,
  broker: [],
  egress: null,
  stderr: [],
  runnerLog: "",
  files: {},
  exit: 0,
  transcripts: {},
  argv: null,
  ...over,
});

const HASH = "0123456789abcdef0123";

/** A session that replies `re: <body>`, hashes each file key as unchanged and says where it finished. */
function replying(onAsk: (st: SessionRunSetup, body: string) => Promise<void> | void = () => {}): Starter {
  return async (st) => {
    const replies: string[] = [];
    return {
      async ask(body, from) {
        await onAsk(st, body);
        st.event("asked", { from });
        replies.push(`re: ${body}`);
        return `re: ${body}`;
      },
      async finish(out) {
        finished.set(st.instance.instance, out);
        const files = Object.fromEntries(st.fileKeys.map((f) => [f, { before: HASH, after: HASH }]));
        return evidence(replies, { files, stderr: [`${st.values.canary} ${st.w.stand.secret}`] });
      },
    };
  };
}

/**
 * The live children of this process whose command is sleep and whose environment holds the secret,
 * with their argv, environment and stdio: the run's neighbour, not another test file's (threads
 * share the process).
 */
function sleepChildren(secret: string): Array<{ pid: number; argv: string[]; env: string[]; fds: string[] }> {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(readFileSync(`/proc/${d}/stat`, "utf8"));
        if (m === null || m[1] !== "sleep" || m[2] === "Z" || Number(m[3]) !== process.pid) return [];
        const env = readFileSync(`/proc/${d}/environ`, "utf8").split("\0").filter(Boolean);
        if (!env.includes(`FAKE_TOKEN=${secret}`)) return [];
        return [
          {
            pid: Number(d),
            argv: readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean),
            env,
            fds: [0, 1, 2].map((n) => readlinkSync(`/proc/${d}/fd/${n}`)),
          },
        ];
      } catch {
        return [];
      }
    });
}

/** The local addresses listening on a TCP port, as /proc/net/tcp{,6} show them (hex, kernel order). */
function listeners(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c[1]?.endsWith(`:${hex}`) && c[3] === "0A")
      .map((c) => c[1]!),
  );
}

const knock = (port: number) =>
  new Promise<void>((ok, bad) => {
    const c = connect(port, "127.0.0.1");
    c.on("error", bad);
    c.on("data", () => {});
    c.on("close", () => ok());
  });

const eventsOf = (out: string) =>
  readFileSync(join(out, "events.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => {
      const { t: _t, ...e } = JSON.parse(l) as Record<string, unknown>;
      return e;
    });

const MAIN = `name: engine
description: a session whose run is carried out
harness: fake
instance: { ref: claude-pm }
workspace:
  files: { "notes/a.txt": "in {{workspace}}" }
  links: { "to-run": "{{run}}" }
run_files: { "session/deep/r.txt": "ws {{workspace}}" }
network_trap: true
neighbour_process: true
turn_timeout_seconds: 7
messages:
  - body: "one {{run}}"
  - body: two
assertions:
  - reply_contains: "re: one {{run}}"
    because: the reply carries the message
  - file_unchanged: "{{workspace}}/notes/a.txt"
  - trap_untouched: true
  - no_standin_leak: true
  - file_exists: "{{run}}/x"
  - exit_code: 0
`;

describe("a scenario run carried out", () => {
  it("sets up its stage, starts its session with it, judges the session's evidence and keeps its run", async () => {
    const s = parseScenario(MAIN, "/scenarios/engine.yaml");
    const seen: Record<string, unknown> = {};
    starter = replying(async (st, body) => {
      if (body !== "two") return;
      // While the session runs: the stage as the scenario asked for it.
      const port = Number(st.values.trap_port);
      seen.listeners = listeners(port);
      seen.sleep = sleepChildren(st.w.stand.secret);
      st.afterStart?.();
      seen.runFile = readFileSync(join(st.values.run, "session/deep/r.txt"), "utf8");
      await knock(port);
    });
    const runsDir = join(scratch.root, "runs");
    const r = await run(s, runsDir);
    const out = join(runsDir, "engine");
    expect(started).toHaveLength(1);
    const st = started[0]!;
    const w = st.w;
    const ws = join(w.data, "workspaces/acme", "engine");
    const runDir = join(w.data, "runs", "run");
    expect(basename(w.root)).toMatch(/^scn-/);
    expect(st.spec).toBe(s);
    expect(st.instance).toMatchObject({ instance: "engine", workspace: ws, run: "run", role: "pm", business: "acme" });
    expect(st.values).toMatchObject({
      workspace: ws,
      run: runDir,
      main_workspace: ws,
      main_run: runDir,
      secret: w.stand.secret,
    });
    const canary = st.values.canary;
    expect(canary).toMatch(/^stand-in-real-key-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Number(st.values.trap_port)).toBeGreaterThan(0);
    expect(st.hostEnv).toEqual({
      ...w.hostEnv,
      ANTHROPIC_API_KEY: canary,
      MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude"),
    });
    expect(st.turnTimeoutSeconds).toBe(7);
    expect(st.fileKeys).toEqual([`${ws}/notes/a.txt`, `${runDir}/x`]);
    // The trap listens on the loopback address alone.
    const hex = Number(st.values.trap_port).toString(16).toUpperCase().padStart(4, "0");
    expect(seen.listeners).toEqual([`0100007F:${hex}`]);
    // The neighbour: a sleep of 600 s, its environment the PATH and the secret, its stdio /dev/null.
    const sleeps = seen.sleep as ReturnType<typeof sleepChildren>;
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]!.argv).toEqual(["sleep", "600"]);
    expect(sleeps[0]!.env.sort()).toEqual([`FAKE_TOKEN=${w.stand.secret}`, `PATH=${process.env.PATH}`].sort());
    expect(sleeps[0]!.fds).toEqual(["/dev/null", "/dev/null", "/dev/null"]);
    expect(sleepChildren(w.stand.secret).map((c) => c.pid)).not.toContain(sleeps[0]!.pid);
    // The workspace and the run files, planted with the values filled.
    expect(seen.runFile).toBe(`ws ${ws}`);
    expect(finished).toEqual(new Map([["engine", out]]));
    expect(r).toEqual({
      name: "engine",
      harness: "fake",
      seconds: expect.any(Number),
      problem: null,
      assertions: [
        {
          session: "engine",
          label: "reply_contains re: one {{run}}",
          because: "the reply carries the message",
          verdict: "pass",
          detail: "reply 1 of 2 contains it",
        },
        {
          session: "engine",
          label: "file_unchanged {{workspace}}/notes/a.txt",
          because: null,
          verdict: "pass",
          detail: `sha256 ${HASH.slice(0, 12)} before and after`,
        },
        {
          session: "engine",
          label: "trap_untouched",
          because: null,
          verdict: "fail",
          detail: "1 connection reached the trap",
        },
        {
          session: "engine",
          label: "no_standin_leak",
          because: null,
          verdict: "fail",
          detail: "a stand-in value is in: stderr (2 values)",
        },
        {
          session: "engine",
          label: "file_exists {{run}}/x",
          because: null,
          verdict: "pass",
          detail: expect.any(String),
        },
        { session: "engine", label: "exit_code 0", because: null, verdict: "pass", detail: "exit 0" },
      ],
      verdict: "fail",
      runDir: out,
    } satisfies ScenarioResult);
    expect(services).toEqual([]);
    expect(eventsOf(out)).toEqual([
      { session: "engine", event: "asked", from: "pm-scenario" },
      { session: "engine", event: "asked", from: "pm-scenario" },
      { session: "engine", event: "verdict", verdict: "fail" },
    ]);
  });

  it("plants the workspace's files and links with the values filled, in a workspace that may already exist", async () => {
    // The stand-ins' other workspace already holds a file: a scenario of that name plants beside it.
    const s = parseScenario(MAIN.replace("name: engine", "name: other"), "/scenarios/other.yaml");
    let planted: Record<string, string> = {};
    starter = replying((st) => {
      const ws = st.values.workspace;
      planted = {
        file: readFileSync(join(ws, "notes/a.txt"), "utf8"),
        link: readlinkSync(join(ws, "to-run")),
        mode: (statSync(ws).mode & 0o777).toString(8),
        other: readFileSync(st.values.other_workspace, "utf8"),
      };
    });
    const r = await run(s, join(scratch.root, "runs"));
    expect(r.problem).toBeNull();
    const st = started[0]!;
    expect(planted).toEqual({
      file: `in ${st.values.workspace}`,
      link: st.values.run,
      mode: "755",
      other: `another workspace ${st.w.stand.secret}\n`,
    });
  });
});

describe("a run that fails after its session started", () => {
  it("stops the session and leaves its assertions unobserved with the reason, not judged", async () => {
    const s = parseScenario(MAIN.replace("name: engine", "name: broke"), "/scenarios/broke.yaml");
    starter = async (st) => ({
      ask: () => Promise.reject(new Error("the runner went away")),
      finish: async (out) => {
        finished.set("broke", out);
        return evidence(["re: one"], {
          files: Object.fromEntries(st.fileKeys.map((f) => [f, { before: HASH, after: HASH }])),
        });
      },
    });
    const runsDir = join(scratch.root, "runs");
    const r = await run(s, runsDir);
    expect(r.problem).toBe("the runner went away");
    expect(finished).toEqual(new Map([["broke", join(runsDir, "broke")]]));
    expect(r.assertions.map((a) => [a.verdict, a.detail])).toEqual(
      Array.from({ length: 6 }, () => ["unobserved", "the run did not complete: the runner went away"]),
    );
  });
});

const LAUNCHING = `name: boss
description: a PM that launches
harness: fake
instance: { ref: claude-pm }
turn_timeout_seconds: 9
messages:
  - body: go
assertions:
  - reply_contains: "re: go"
launches:
  - harness: claude-code
    instance: { ref: claude-coder }
    model:
      turns:
        - text: done
    assertions:
      - reply_contains: "{{workspace}}"
      - file_absent: "{{workspace}}/gone"
      - exit_code: 0
`;

/** The scenario with its one declared launch copied under each name. */
function launching(names: string[]): Scenario {
  const s = parseScenario(LAUNCHING, "/scenarios/boss.yaml");
  const l = s.launches[0]!;
  return { ...s, launches: names.map((n) => ({ ...l, instance: { ...l.instance, instance: n } })) };
}

describe("a run whose main session launches others", () => {
  it("sets each launched session up in its own workspace and judges it on its own evidence and values", async () => {
    const s = launching(["coder-a", "coder-b", "coder-c", "coder-d"]);
    // coder-c is declared and never launched.
    const [a, b, , d] = s.launches as [LaunchedSession, LaunchedSession, LaunchedSession, LaunchedSession];
    const setups = new Map<string, SessionRunSetup>();
    const stray = { launch: { by: "acme-pm", run: "run-9", instance: "nobody", message: "hi" }, why: "undeclared" };
    let settled = 0;
    const made: boolean[] = [];
    serviceMaker = (_w, _run, _specs, setupOf) => {
      const runs: LaunchedRun[] = [];
      return {
        async settle() {
          settled++;
          // Served in the order b, a, d: c is never launched; the runs are listed in reverse.
          for (const [spec, run] of [
            [b, "run-1"],
            [a, "run-2"],
            [d, "run-3"],
          ] as const) {
            const setup = setupOf(
              spec,
              { by: "acme-pm", run: "run", instance: spec.instance.instance, message: "m" },
              run,
            );
            setups.set(spec.instance.instance, setup);
            made.push(statSync(setup.values.workspace).isDirectory());
            const lws = setup.values.workspace;
            runs.unshift({
              spec,
              setup,
              problem: spec === b ? "its claim never came" : null,
              evidence:
                spec === d
                  ? null
                  : evidence([`made in ${lws}`], {
                      files: { [`${lws}/gone`]: { before: null, after: null } },
                    }),
            });
          }
        },
        async finish(out) {
          finished.set("service", out);
        },
        runs: () => runs,
        strays: () => [stray],
      };
    };
    starter = replying();
    const runsDir = join(scratch.root, "runs");
    const r = await run(s, runsDir);
    expect(r.problem).toBeNull();
    expect(settled).toBe(1);
    expect(finished.get("service")).toBe(join(runsDir, "boss"));
    const main = started[0]!;
    expect(services).toEqual([{ w: main.w, run: "run", specs: s.launches }]);
    const sa = setups.get("coder-a")!;
    const lws = join(main.w.data, "workspaces/acme", "coder-a");
    expect(sa.w).toBe(main.w);
    expect(sa.spec).toBe(a);
    expect(sa.instance).toMatchObject({
      instance: "coder-a",
      workspace: lws,
      run: "run-2",
      launchedBy: "acme-pm",
      role: "coder",
    });
    expect(sa.values).toMatchObject({
      workspace: lws,
      run: join(main.w.data, "runs", "run-2"),
      main_workspace: main.values.workspace,
      main_run: main.values.run,
      trap_port: "0",
      canary: main.values.canary,
    });
    expect(made).toEqual([true, true, true]);
    expect(sa.hostEnv).toBe(main.hostEnv);
    expect(sa.turnTimeoutSeconds).toBe(9);
    expect(sa.fileKeys).toEqual([`${lws}/gone`]);
    expect(started).toHaveLength(1);
    const unobserved = (session: string, detail: string) =>
      ["reply_contains {{workspace}}", "file_absent {{workspace}}/gone", "exit_code 0"].map((label) => ({
        session,
        label: `${session}: ${label}`,
        because: null,
        verdict: "unobserved" as const,
        detail,
      }));
    expect(r.assertions).toEqual([
      { session: "boss", label: "reply_contains re: go", because: null, verdict: "pass", detail: expect.any(String) },
      {
        session: "coder-a",
        label: "coder-a: reply_contains {{workspace}}",
        because: null,
        verdict: "pass",
        detail: "reply 1 of 1 contains it",
      },
      {
        session: "coder-a",
        label: "coder-a: file_absent {{workspace}}/gone",
        because: null,
        verdict: "pass",
        detail: "absent after the session",
      },
      {
        session: "coder-a",
        label: "coder-a: exit_code 0",
        because: null,
        verdict: "pass",
        detail: "exit 0",
      },
      ...unobserved("coder-b", "the launched session did not complete: its claim never came"),
      ...unobserved("coder-c", "boss never launched coder-c"),
      ...unobserved("coder-d", "no evidence"),
      {
        session: "boss",
        label: "launch nobody",
        because: "a launch the broker accepted must start a session",
        verdict: "fail",
        detail: "undeclared",
      },
    ] satisfies ScenarioResult["assertions"]);
    expect(r.verdict).toBe("fail");
    expect(tally([r])).toEqual({ pass: 4, fail: 1, unobserved: 9 });
  });

  it("a launched session's workspace may already exist", async () => {
    const s = launching(["other"]);
    let setup: SessionRunSetup | null = null;
    serviceMaker = (_w, _run, specs, setupOf) => ({
      async settle() {
        setup = setupOf(specs[0]!, { by: "acme-pm", run: "run", instance: "other", message: "m" }, "run-1");
      },
      async finish() {},
      runs: () => [],
      strays: () => [],
    });
    starter = replying();
    const r = await run(s, join(scratch.root, "runs"));
    expect(r.problem).toBeNull();
    expect(setup!.values.workspace).toBe(join(started[0]!.w.data, "workspaces/acme/other"));
    expect(r.assertions.map((x) => x.detail)).toEqual([
      expect.any(String),
      ...Array.from({ length: 3 }, () => "boss never launched other"),
    ]);
  });

  it("a run that fails before the launches settle leaves every launched session's assertions unobserved with its reason", async () => {
    const s = launching(["coder-a"]);
    serviceMaker = (_w, _run, specs, setupOf) => {
      const setup = setupOf(specs[0]!, { by: "acme-pm", run: "run", instance: "coder-a", message: "m" }, "run-1");
      return {
        settle: () => Promise.reject(new Error("settling broke")),
        async finish() {},
        runs: () => [{ spec: specs[0]!, setup, problem: null, evidence: evidence(["x"]) }],
        strays: () => [],
      };
    };
    starter = replying();
    const r = await run(s, join(scratch.root, "runs"));
    expect(r.problem).toBe("settling broke");
    expect(r.assertions.map((x) => [x.session, x.verdict, x.detail])).toEqual(
      ["boss", "coder-a", "coder-a", "coder-a"].map((n) => [
        n,
        "unobserved",
        "the run did not complete: settling broke",
      ]),
    );
  });
});

describe("the neighbour's PATH", () => {
  it("is /usr/bin:/bin when the runner's own environment has none", async () => {
    const s = parseScenario(MAIN.replace("name: engine", "name: nopath"), "/scenarios/nopath.yaml");
    let env: string[] = [];
    starter = replying((st) => {
      env = sleepChildren(st.w.stand.secret)[0]?.env ?? [];
    });
    const saved = process.env.PATH;
    delete process.env.PATH;
    try {
      await run(s, join(scratch.root, "runs"));
    } finally {
      process.env.PATH = saved;
    }
    expect(env).toContain("PATH=/usr/bin:/bin");
  });
});
