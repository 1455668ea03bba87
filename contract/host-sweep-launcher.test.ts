// The launcher's lifecycle in-process, without bwrap: prepareLaunch() probes with a stand-in bwrap
// that exits 0, and start() runs a prepared plan whose command is a plain shell in bwrap's place
// (as the live tier's positive controls change a prepared plan). Everything around the command is
// the launcher's own: the run directory, session.json, the model proxy, the capability on stdin, the
// launch record, the end at the command's exit, and stop().
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gateCompileCacheDir } from "../src/core/bundle/hook.ts";
import { MosaicError } from "../src/core/errors.ts";
import { launchEndReason } from "../src/core/session/exit.ts";
import { FAKE_ADAPTER, makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import {
  launch,
  prepareLaunch,
  sessionRunnerFiles,
  start,
  type LaunchRequest,
  type PreparedLaunch,
} from "../src/host/launcher.ts";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { RUNNER_ENTRY } from "../src/core/session/plan-session.ts";
import { workspaceLockPath } from "../src/core/session/host-plan.ts";
import { asUserCaller } from "./support/launch-edits.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";

let w: RuntimeWorld;
let up: Server;
let upUrl = "";
const upSeen: string[] = [];
beforeAll(async () => {
  w = await makeRuntimeWorld("lsweep");
  up = createServer((req, res) => {
    upSeen.push(`${req.method} ${req.url} ${req.headers["x-api-key"] ?? ""}`);
    res.writeHead(200);
    res.end();
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  upUrl = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => up.close(() => r()));
  await w?.close();
});

type Bus = { issued: Array<{ run: string; instance: string }>; ended: string[] };
function request(name: string, extra: Partial<LaunchRequest> = {}): { req: LaunchRequest; bus: Bus } {
  const bus: Bus = { issued: [], ended: [] };
  const req = w.request(w.instance("pi-coder", name), {
    bwrap: "/bin/true",
    hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: "host-real-key" },
    modelUpstream: upUrl,
    bus: {
      issueCapability: (b) => {
        bus.issued.push(b);
        return `cap-${name}`;
      },
      endRun: (run) => void bus.ended.push(run),
    },
    ...extra,
  });
  return { req, bus };
}

/**
 * The one launch prepared in full (the probes cost a second or two); the others are renamed copies.
 * Prepared by the first test that needs it, not in a hook, so the sweep counts prepareLaunch() as
 * that test's code.
 */
let prepared0: PreparedLaunch | undefined;
function base(): PreparedLaunch {
  if (prepared0 === undefined) {
    const p = prepareLaunch(request("lsw-a").req);
    if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
    prepared0 = p.prepared;
  }
  return prepared0;
}

/**
 * The base plan for another run: every path and name of run lsw-a renamed (same length, so every
 * socket path still fits), with its own workspace and bus.
 */
function prepared(name: string): { p: PreparedLaunch; req: LaunchRequest; bus: Bus } {
  expect(name).toHaveLength(5);
  const rename = <T>(x: T): T => JSON.parse(JSON.stringify(x).replaceAll("lsw-a", name)) as T;
  const { req, bus } = request(name);
  const b = base();
  const session = rename(b.session);
  const p: PreparedLaunch = {
    req: { ...req, instance: rename(b.req.instance), runDir: rename(b.req.runDir) },
    launch: rename(b.launch),
    facts: b.facts,
    // The lock is named by the workspace's digest, which a rename of its text does not reach.
    session: { ...session, lock: workspaceLockPath(req.stateDir, session.sessionFile.workspace) },
  };
  return { p, req: p.req, bus };
}

/** The prepared plan with a shell in bwrap's place. */
const withCommand = (p: PreparedLaunch, script: string): PreparedLaunch => ({
  ...p,
  session: { ...p.session, argv: ["/bin/sh", "-c", script] },
});

function headModel(socket: string): Promise<number> {
  return new Promise((ok, fail) => {
    const r = httpRequest(
      { socketPath: socket, method: "HEAD", path: "/", headers: { "x-api-key": "placeholder" } },
      (res) => {
        res.resume();
        res.on("end", () => ok(res.statusCode!));
      },
    );
    r.on("error", fail);
    r.end();
  });
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe("sessionRunnerFiles", () => {
  it("a pi session loads the runner and the Pi extension, a Claude Code session the gate and the MCP server", () => {
    const rel = (h: "pi" | "claude-code") => sessionRunnerFiles(REPO_ROOT, h).map((f) => f.slice(REPO_ROOT.length + 1));
    const pi = rel("pi");
    const claude = rel("claude-code");
    expect(pi).toContain(RUNNER_ENTRY);
    expect(pi).toContain("src/host/pi-extension.ts");
    expect(pi).not.toContain("src/host/claude-gate.ts");
    expect(pi).not.toContain("src/host/mcp-server.ts");
    expect(claude).toContain(RUNNER_ENTRY);
    expect(claude).toContain("src/host/claude-gate.ts");
    expect(claude).toContain("src/host/mcp-server.ts");
    expect(claude).not.toContain("src/host/pi-extension.ts");
  });
});

describe("launch() and prepareLaunch()", () => {
  it("a refusal comes back as decided, with nothing of the run on disk", async () => {
    // A checkout without Pi: refused before any probe runs a binary.
    const { req } = request("l-refused", { repo: w.root });
    const p = await launch(req);
    expect(p).toEqual({
      kind: "refuse",
      code: "preflight",
      message: expect.stringContaining(`pi: ${join(w.root, "node_modules/.bin/pi")} does not exist`),
    });
    expect(existsSync(req.runDir)).toBe(false);
  });
});

describe("prepareLaunch() reads the request", () => {
  it("the probe runs the request's bwrap: one that fails refuses the launch as sandbox-unavailable", async () => {
    const { req } = request("l-nobwr", { bwrap: "/bin/false" });
    expect(await launch(req)).toMatchObject({ kind: "refuse", code: "sandbox-unavailable" });
    expect(existsSync(req.runDir)).toBe(false);
  });

  it("the plan carries the request's timings and binds its fake adapter's script", () => {
    expect(base().session.sessionFile).toMatchObject({
      pollMs: 100,
      brokerRetries: 5,
      brokerTimeoutSeconds: 2,
      turnTimeoutSeconds: 20,
    });
    expect(base().session.binds.some((b) => b.source === FAKE_ADAPTER)).toBe(true);
  });
});

describe("start() without bwrap", () => {
  it("runs the command with the session's environment, hands the capability on stdin, and ends the run at its exit", async () => {
    const { p, req, bus } = prepared("lsw-b");
    const run = req.runDir;
    const model = p.session.sessionFile.model!;
    const script = [
      `cat > "${run}/home/cap"`,
      `env > "${run}/home/env"`,
      `echo "from the runner" >&2`,
      `i=0; while [ ! -e "${run}/home/go" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`,
      "exit 3",
    ].join("; ");
    // A plan with a gate cache (Claude Code's) has it warmed in its bundle; the command is the same shell.
    const gateCache = { dir: gateCompileCacheDir(p.launch.bundleDir), node: p.facts.node.path };
    const s = await start(withCommand({ ...p, session: { ...p.session, gateCache } }, script));
    expect(readdirSync(gateCompileCacheDir(p.launch.bundleDir)).length, "the gate's cache is warm").toBeGreaterThan(0);
    expect(s.run).toBe(req.instance.run);
    expect(s.runDir).toBe(run);
    expect(s.pid).toBeGreaterThan(0);
    expect(s.plan.sessionFile).toEqual(p.session.sessionFile);
    expect(bus.issued).toEqual([{ run: req.instance.run, instance: req.instance.instance }]);

    for (const d of ["", "turns", "session", "session/pi-agent", "sock", "home"])
      expect(mode(join(run, d)), d).toBe(0o700);
    expect(readFileSync(join(run, "session.json"), "utf8")).toBe(JSON.stringify(p.session.sessionFile, null, 2) + "\n");
    expect(mode(join(run, "session.json"))).toBe(0o600);
    for (const [name, text] of Object.entries(p.launch.bundle))
      expect(readFileSync(join(p.launch.bundleDir, name), "utf8"), `bundle ${name}`).toBe(text);
    const models = p.launch.bundle["models.json"];
    if (models !== undefined) {
      const f = join(p.launch.adapter.env.PI_CODING_AGENT_DIR!, "models.json");
      expect(readFileSync(f, "utf8")).toBe(models);
      expect(mode(f)).toBe(0o600);
    }
    expect(mode(model.socket), "the model socket").toBe(0o600);
    const records = new LaunchRegistry(join(req.stateDir, "launches"));
    expect(records.get(req.instance.run)).toMatchObject({
      run: req.instance.run,
      instance: req.instance.instance,
      runDir: run,
      pid: s.pid,
      mountStubs: p.session.mountStubs,
      workspace: req.instance.workspace,
      quarantine: join(req.stateDir, "quarantine", req.instance.run),
      end: null,
    });
    expect(records.get(req.instance.run)!.startedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    // The model proxy serves the session's socket with the host's credential, logging to the state dir.
    expect(await headModel(model.socket)).toBe(200);
    expect(upSeen).toContain("HEAD / host-real-key");
    const log = join(req.stateDir, "egress", `${req.instance.run}.jsonl`);
    expect(readFileSync(log, "utf8")).toContain('"outcome":"allowed"');

    for (let i = 0; i < 2500 && !existsSync(join(run, "home", "env")); i++) await new Promise((r) => setTimeout(r, 2));
    // The command runs: a root caller's session is counted in its own cgroups from its first process.
    const cgroups = records.get(req.instance.run)!.cgroups;
    if (p.facts.uid === 0) {
      expect(cgroups.length, "a root caller's session has its cgroups").toBeGreaterThan(0);
      for (const c of cgroups)
        expect(readFileSync(join(c, "cgroup.procs"), "utf8").split("\n")).toContain(String(s.pid));
    } else expect(cgroups).toEqual([]);
    writeFileSync(join(run, "home", "go"), "");
    const end = await s.exited;
    expect(end).toEqual({
      end: { kind: "code", code: 3 },
      reason: launchEndReason(3),
      stderr: "from the runner\n",
      workspace: { verdict: "clean", workspace: req.instance.workspace },
    });
    expect(s.stderr()).toBe("from the runner\n");
    expect(readFileSync(join(run, "home", "cap"), "utf8")).toBe(`${JSON.stringify({ cap: "cap-lsw-b" })}\n`);
    const env = Object.fromEntries(
      readFileSync(join(run, "home", "env"), "utf8")
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    for (const k of ["PWD", "SHLVL", "_"]) delete env[k];
    expect(env, "the session's environment and nothing else").toEqual(p.session.env);
    expect(bus.ended).toEqual([req.instance.run]);
    expect(existsSync(p.session.sessionFile.toolSocket.path), "the tool socket is removed").toBe(false);
    expect(existsSync(model.socket), "the proxy is closed").toBe(false);
    for (const c of cgroups) expect(existsSync(c), `cgroup ${c} removed`).toBe(false);
    expect(records.get(req.instance.run)).toMatchObject({
      end: { reason: launchEndReason(3), detail: "exit 3" },
      check: { verdict: "clean", workspace: req.instance.workspace },
    });
    expect(await s.stop(), "stop() after the end is the end").toEqual(end);
  });

  it("stop() signals the runner, bwrap's child, again every second until it is gone; a workspace finding goes to the run's quarantine", async () => {
    const { p, req } = prepared("lsw-c");
    const run = req.runDir;
    const ws = req.instance.workspace;
    const runner = join(w.root, "runner-ignores-one-term.sh");
    writeFileSync(
      runner,
      `n=0; trap 'n=$((n+1)); echo term >> ${run}/home/terms; [ $n -ge 2 ] && exit 0' TERM; touch ${run}/home/ready; i=0; while [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done\n`,
      { mode: 0o755 },
    );
    const s = await start(
      withCommand(p, `cat > /dev/null; touch ${ws}/suid; chmod 4755 ${ws}/suid; sh ${runner} & wait $!`),
    );
    const records = new LaunchRegistry(join(req.stateDir, "launches"));
    for (let i = 0; i < 2500 && !existsSync(join(run, "home", "ready")); i++)
      await new Promise((r) => setTimeout(r, 2));
    expect(existsSync(gateCompileCacheDir(p.launch.bundleDir)), "a Pi plan warms no gate cache").toBe(false);
    const end = await s.stop();
    expect(readFileSync(join(run, "home", "terms"), "utf8"), "a second SIGTERM after the first was ignored").toBe(
      "term\nterm\n",
    );
    expect(end.end).toEqual({ kind: "code", code: 0 });
    expect(end.reason).toBe(launchEndReason(0));
    const quarantine = join(req.stateDir, "quarantine", req.instance.run);
    expect(end.workspace).toMatchObject({ workspace: ws, quarantine });
    expect(existsSync(join(quarantine, "report.json"))).toBe(true);
    expect(records.get(req.instance.run)!.end).toMatchObject({ reason: launchEndReason(0), detail: "exit 0" });
  });

  it("a runner killed by a signal ends the launch killed, naming the signal", async () => {
    const { p, req } = prepared("lsw-g");
    const s = await start(withCommand(p, "cat > /dev/null; kill -TERM $$"));
    const end = await s.exited;
    expect(end.end).toEqual({ kind: "signal", signal: "SIGTERM", ending: "killed" });
    expect(end.reason).toBe("killed");
    expect(new LaunchRegistry(join(req.stateDir, "launches")).get(req.instance.run)!.end).toMatchObject({
      reason: "killed",
      detail: "SIGTERM",
    });
  });

  it("a caller that is not root hands nothing over and makes no cgroups; a plan without a model has no proxy; a tool socket gone before the end is no error", async () => {
    const { p, req } = prepared("lsw-f");
    const run = req.runDir;
    const stub = join(req.instance.workspace, ".stub");
    writeFileSync(stub, "");
    const user = asUserCaller(p);
    const plan = withCommand(
      {
        ...user,
        session: {
          ...user.session,
          mountStubs: [{ path: stub, kind: "file" }],
          sessionFile: { ...p.session.sessionFile, model: null },
          modelProxy: null,
          piModels: null,
        },
      },
      `cat > /dev/null; i=0; while [ ! -e "${run}/go" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`,
    );
    const s = await start(plan);
    const rec = new LaunchRegistry(join(req.stateDir, "launches")).get(req.instance.run)!;
    expect(rec.cgroups, "no cgroups").toEqual([]);
    expect(statSync(run).uid, "the run directory stays the caller's").toBe(process.getuid!());
    expect(mode(run)).toBe(0o700);
    expect(existsSync(p.session.sessionFile.model!.socket), "no model socket").toBe(false);
    rmSync(p.session.sessionFile.toolSocket.path);
    writeFileSync(join(run, "go"), "");
    const end = await s.exited;
    expect(end.end).toEqual({ kind: "code", code: 0 });
    expect(existsSync(stub), "the mount stub is removed").toBe(false);
    expect(existsSync(join(p.launch.adapter.env.PI_CODING_AGENT_DIR!, "models.json")), "no models.json").toBe(false);
  });

  it("a bind source the session cannot reach refuses the launch before anything is made", async () => {
    const { p, req } = prepared("lsw-h");
    const locked = join(w.root, "locked");
    mkdirSync(join(locked, "x"), { recursive: true });
    chmodSync(locked, 0o000);
    try {
      const bind = { ...p.session.binds.find((b) => b.source?.startsWith("/usr"))!, source: join(locked, "x") };
      const plan = withCommand({ ...p, session: { ...p.session, binds: [...p.session.binds, bind] } }, "exit 0");
      await expect(start(plan)).rejects.toThrow(
        expect.objectContaining({ code: "bind-unreachable", field: join(locked, "x") }),
      );
      expect(existsSync(req.runDir)).toBe(false);
    } finally {
      chmodSync(locked, 0o755);
    }
  });

  it("a run directory that exists already refuses the launch, leaving it as it was", async () => {
    const { p, req } = prepared("lsw-d");
    mkdirSync(req.runDir, { recursive: true });
    writeFileSync(join(req.runDir, "mine"), "x");
    let thrown: unknown;
    try {
      await start(withCommand(p, "exit 0"));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(MosaicError);
    expect(thrown).toMatchObject({ code: "run-dir-exists", field: req.runDir });
    expect(String((thrown as Error).message)).toContain("cannot make the run directory: EEXIST");
    expect(readdirSync(req.runDir)).toEqual(["mine"]);
    expect(new LaunchRegistry(join(req.stateDir, "launches")).get(req.instance.run)).toBe(null);
  });

  it("a launch whose proxy cannot listen ends the sandbox it started beside it, removes its run directory and ends its record launch-failed", async () => {
    const { p, req, bus } = prepared("lsw-e");
    const bad = {
      ...p,
      session: {
        ...p.session,
        modelProxy: { ...p.session.modelProxy!, socket: join(w.root, "no-such-dir", "model.sock") },
      },
    };
    await expect(
      start(withCommand(bad, "cat > /dev/null; sleep 5")),
      "the proxy cannot listen there",
    ).rejects.toMatchObject({
      syscall: "listen",
    });
    expect(existsSync(req.runDir), "the run directory is gone").toBe(false);
    expect(bus.ended, "the run's capabilities are voided").toEqual([req.instance.run]);
    expect(bus.issued, "no capability was ever written").toEqual([]);
    expect(new LaunchRegistry(join(req.stateDir, "launches")).get(req.instance.run)?.end?.reason).toBe("launch-failed");
  });

  it("a launch that fails before its model proxy starts removes its run directory and throws the failure itself", async () => {
    const { p, req } = prepared("lsw-i");
    const agentDir = join(w.root, "no-agent-dir");
    const bad = { ...p, session: { ...p.session, piModels: join(agentDir, "models.json") } };
    expect(bad.launch.bundle["models.json"], "a Pi plan has models.json").toBeDefined();
    await expect(start(withCommand(bad, "exit 0"))).rejects.toThrow(
      expect.objectContaining({ code: "ENOENT", path: join(agentDir, "models.json") }),
    );
    expect(existsSync(req.runDir), "the run directory is gone").toBe(false);
  });
});
