// start() carries out a prepared launch step by step, holding each resource with its release. For
// each step, a plan that makes exactly that step fail: start() rejects with that step's error, and
// afterwards nothing the launch acquired is left (lock, run directory, sockets, cgroups, sandbox,
// capability, open record), while what it never acquired is untouched. Then the order a session
// that started holds its resources in, and the lock against a second launch on a live workspace.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type PreparedLaunch, start } from "../src/host/launcher.ts";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { readWorkspaceLock, takeWorkspaceLock } from "../src/host/workspace-lock.ts";
import { cmdlineOf, isAlive } from "../src/host/session-procs.ts";
import { recover } from "../src/host/recover.ts";
import { SECCOMP_RULES, seccompProgram } from "../src/core/sandbox/seccomp.ts";
import { type LauncherWorld, makeLauncherWorld } from "./support/launcher-sweep-world.ts";
import { asUserCaller, withShell } from "./support/launch-edits.ts";

let lw: LauncherWorld;
beforeAll(async () => {
  lw = await makeLauncherWorld("lsteps");
});
afterAll(async () => lw?.close());

/** A file where a directory is wanted: anything made under it fails with ENOTDIR. */
function fileAt(name: string): string {
  const f = join(lw.w.root, name);
  writeFileSync(f, "");
  return f;
}

type Step = {
  step: string;
  /** Run as planned for this caller (a root caller: its drop, handover and real cgroups), not as a user caller. */
  asPlanned?: true;
  edit: (p: PreparedLaunch) => PreparedLaunch;
  error: RegExp | Record<string, unknown>;
  /** Whether the sandbox was spawned (and so its run's capabilities voided) before the failure. */
  spawned: boolean;
};

/** The launch's own scratch cgroup: a plain directory under the world, with no settings to write. */
const scratchCgroup = (p: PreparedLaunch) => {
  const base = join(lw.w.root, "cg", p.session.sessionFile.run);
  return { name: "x", dirs: [{ dir: join(base, "x"), base, version: 1 as const, controllers: [], settings: [] }] };
};

const STEPS: Step[] = [
  {
    step: "runner node",
    edit: (p) => ({
      ...p,
      session: {
        ...p.session,
        runnerNode: {
          ...p.session.runnerNode,
          path: join(lw.w.root, "rn/node"),
          copyOf: join(fileAt("rn-file"), "node"),
        },
      },
    }),
    error: { code: "ENOTDIR" },
    spawned: false,
  },
  {
    step: "bind reach",
    edit: (p) => {
      const bind = { ...p.session.binds.find((b) => b.row === "usr")!, source: "/nonexistent-for-reach/x" };
      return { ...p, session: { ...p.session, binds: [...p.session.binds, bind] } };
    },
    error: { code: "bind-unreachable" },
    spawned: false,
  },
  {
    step: "handover",
    edit: (p) => ({
      ...p,
      session: {
        ...p.session,
        identity: { ...p.session.identity, handOver: { workspace: "/nonexistent-ws", runDir: p.req.runDir } },
      },
    }),
    error: { code: "ENOENT" },
    spawned: false,
  },
  {
    step: "run files",
    edit: (p) => ({
      ...p,
      session: { ...p.session, piModels: "/nonexistent-dir/models.json" },
    }),
    error: { code: "ENOENT" },
    spawned: false,
  },
  {
    step: "gate cache",
    edit: (p) => ({
      ...p,
      session: {
        ...p.session,
        gateCache: { dir: join(p.launch.bundleDir, "gate-cache"), node: "/nonexistent/node" },
      },
    }),
    error: { code: "gate-cache" },
    spawned: false,
  },
  {
    step: "model proxy",
    edit: (p) => ({
      ...p,
      session: {
        ...p.session,
        modelProxy: { ...p.session.modelProxy!, socket: join(fileAt("mp-file"), "model.sock") },
      },
    }),
    error: { code: "ENOTDIR" },
    spawned: false,
  },
  {
    step: "tool socket",
    edit: (p) => ({
      ...p,
      session: { ...p.session, toolSocket: { ...p.session.toolSocket, path: join(fileAt("ts-file"), "tools.sock") } },
    }),
    error: { code: "ENOTDIR" },
    spawned: false,
  },
  {
    step: "seccomp program",
    edit: (p) => ({ ...p, session: { ...p.session, seccompDir: join(fileAt("sc-file"), "seccomp") } }),
    error: { code: "ENOTDIR" },
    spawned: false,
  },
  {
    step: "cgroups",
    edit: (p) => {
      const cg = scratchCgroup(p);
      return {
        ...p,
        session: { ...p.session, cgroups: { ...cg, dirs: [{ ...cg.dirs[0]!, base: fileAt("cg-file") }] } },
      };
    },
    error: { code: "EEXIST" },
    spawned: false,
  },
  {
    step: "spawn",
    edit: (p) => ({ ...p, session: { ...p.session, argv: ["/nonexistent/bwrap"] } }),
    error: { code: "sandbox-spawn" },
    spawned: false,
  },
  {
    step: "launch record",
    asPlanned: true,
    edit: (p) => ({ ...p, session: { ...p.session, records: join(fileAt("rec-file"), "launches") } }),
    error: { code: "ENOTDIR" },
    spawned: true,
  },
  {
    step: "capability",
    asPlanned: true,
    edit: (p) => ({
      ...p,
      req: {
        ...p.req,
        bus: {
          ...p.req.bus,
          issueCapability: () => {
            throw new Error("the bus cannot issue a capability");
          },
        },
      },
    }),
    error: /the bus cannot issue a capability/,
    spawned: true,
  },
];

/** The live processes whose command line holds the marker. */
const withMarker = (marker: string) =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n) && (cmdlineOf(Number(n)) ?? []).some((t) => t.includes(marker)))
    .map(Number)
    .filter(isAlive);

// A run that failed to kill its sandbox (a mutant of the sweep's, say) leaves a shell with its
// marker for 30 s: ended before each test, so the next test's "nothing left" is its own.
beforeEach(() => {
  for (const pid of withMarker(`launcher-step-`).filter((p) =>
    (cmdlineOf(p) ?? []).some((t) => t.includes(`-${process.pid};`)),
  ))
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
});

const noneLeft = async (marker: string) => {
  for (let i = 0; i < 250 && withMarker(marker).length > 0; i++) await new Promise((ok) => setTimeout(ok, 20));
  return withMarker(marker).length === 0;
};

describe("start(): a failure at any step releases exactly what was acquired", () => {
  for (const [i, s] of STEPS.entries())
    it(`${s.step}: the launch rejects with that step's error and leaves nothing it acquired`, async () => {
      const name = `st-${i}`;
      const r = lw.request("pi-coder", name);
      const ready = lw.ready(r.req);
      // The marker names the sandbox's process in /proc, whether or not the launch got to report its pid.
      const marker = `launcher-step-${name}-${process.pid}`;
      const p = s.edit(withShell(s.asPlanned ? ready : asUserCaller(ready), `: ${marker}; cat > /dev/null; sleep 30`));
      const plan = p.session;
      const failure = start(p);
      await (s.error instanceof RegExp
        ? expect(failure).rejects.toThrow(s.error)
        : expect(failure).rejects.toMatchObject(s.error));
      expect(await noneLeft(marker), "the sandbox it spawned, if any, is killed").toBe(true);
      expect(r.ended, "the run's capabilities are voided once the sandbox was spawned").toEqual(
        s.spawned ? [plan.sessionFile.run] : [],
      );
      expect(existsSync(plan.sessionFile.runDir), "no run directory is left").toBe(false);
      expect(existsSync(plan.lock), "the workspace's lock is released").toBe(false);
      expect(existsSync(plan.toolSocket.path), "no tool socket").toBe(false);
      expect(existsSync(plan.sessionFile.model!.socket), "no model socket").toBe(false);
      for (const d of plan.cgroups.dirs) expect(existsSync(d.dir), `cgroup ${d.dir} removed`).toBe(false);
      const record = existsSync(plan.records) ? new LaunchRegistry(plan.records).get(plan.sessionFile.run) : null;
      expect(record === null || record.end?.reason === "launch-failed", "no open record for recover() to meet").toBe(
        true,
      );
    });

  // A plain directory stands in for the session's cgroup: the shell that joins it writes its pid to
  // cgroup.procs, and the orphan adds its own, as the kernel would list a process forked in it.
  for (const control of [false, true])
    it(`${control ? "control: without the session's cgroups, " : ""}a failed launch ${control ? "leaves" : "kills"} what its sandbox forked past the kill, which only its cgroup lists`, async () => {
      const name = `st-orphan${control ? "-control" : ""}`;
      const r = lw.request("pi-coder", name);
      const ready = asUserCaller(lw.ready(r.req));
      const cg = scratchCgroup(ready);
      const procs = join(cg.dirs[0]!.dir, "cgroup.procs");
      // The control plans no cgroups at all; its orphan still writes where the cgroup would be.
      if (control) mkdirSync(cg.dirs[0]!.dir, { recursive: true });
      const orphanPid = join(lw.w.root, `${name}.pid`);
      // The subshell forks the orphan and exits at once: the orphan is no child of the sandbox's shell.
      const script = `( sh -c 'echo $$ >> "${procs}"; echo $$ > "${orphanPid}"; sleep 30; :' & ); cat > /dev/null`;
      const cgroups = control ? { name: "", dirs: [] } : cg;
      const p = withShell({ ...ready, session: { ...ready.session, cgroups } }, script);
      let orphan = 0;
      const failure = start({
        ...p,
        req: {
          ...p.req,
          onSpawn: () => {
            // The file is there before the pid is written into it: wait for the number.
            const pidOf = () => (existsSync(orphanPid) ? Number(readFileSync(orphanPid, "utf8")) : 0);
            for (let i = 0; i < 500 && !(pidOf() > 0); i++) spawnSync("sleep", ["0.01"]);
            orphan = pidOf();
            throw new Error("the launch record could not be written");
          },
        },
      });
      await expect(failure).rejects.toThrow("the launch record could not be written");
      let left = isAlive(orphan);
      for (let i = 0; i < 100 && left; i++) {
        await new Promise((ok) => setTimeout(ok, 20));
        left = isAlive(orphan);
      }
      if (left) process.kill(orphan, "SIGKILL");
      expect(orphan, "the orphan started").toBeGreaterThan(0);
      expect(
        left,
        control
          ? "nothing else finds the orphan: the control proves the cgroup kill is what ends it"
          : "the orphan is killed",
      ).toBe(control);
    });

  it("the workspace's lock held by another run: refused naming it, before anything is made; the lock stays that run's", async () => {
    const r = lw.request("pi-coder", "st-busy");
    const p = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null");
    takeWorkspaceLock(p.session.lock, { run: "the-other-run", workspace: "w", hostPid: 1, at: "then" });
    await expect(start(p)).rejects.toMatchObject({
      code: "workspace-busy",
      field: p.session.sessionFile.workspace,
      message: expect.stringContaining("run the-other-run"),
    });
    expect(existsSync(p.session.sessionFile.runDir), "nothing of the run is made").toBe(false);
    expect(readWorkspaceLock(p.session.lock)?.run, "the other run's lock is not taken from it").toBe("the-other-run");
  });

  it("the run directory already there: refused, and left exactly as it was", async () => {
    const r = lw.request("pi-coder", "st-rundir");
    const p = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null");
    mkdirSync(p.session.sessionFile.runDir, { recursive: true });
    writeFileSync(join(p.session.sessionFile.runDir, "mine"), "x");
    await expect(start(p)).rejects.toMatchObject({ code: "run-dir-exists" });
    expect(readdirSync(p.session.sessionFile.runDir)).toEqual(["mine"]);
    expect(existsSync(p.session.lock), "the lock is released").toBe(false);
  });
});

describe("a session that started", () => {
  it("holds the lock for its whole life: a second launch on its workspace is refused until it has ended and been checked", async () => {
    const go = join(lw.w.root, "st-live-go");
    const first = lw.request("pi-coder", "st-live");
    const p = withShell(
      asUserCaller(lw.ready(first.req)),
      `cat > /dev/null; i=0; while [ ! -e "${go}" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`,
    );
    const s = await start(p);
    expect(readWorkspaceLock(p.session.lock)?.run, "the lock names the live run").toBe("st-live");
    // A second launch on the same workspace, as another run.
    const second = lw.request("pi-coder", "st-live2", { instance: { ...p.req.instance, run: "st-live2" } });
    const q = withShell(asUserCaller(lw.ready(second.req)), "cat > /dev/null");
    expect(q.session.lock, "one lock per workspace path").toBe(p.session.lock);
    await expect(start(q)).rejects.toMatchObject({
      code: "workspace-busy",
      message: expect.stringContaining("run st-live"),
    });
    expect(existsSync(q.session.sessionFile.runDir), "the second launch made nothing").toBe(false);
    writeFileSync(go, "");
    const end = await s.exited;
    expect(end.workspace.verdict, "the end check ran before the lock went").toBe("clean");
    expect(existsSync(p.session.lock), "released once the session has ended and been checked").toBe(false);
    const again = await start(q);
    expect((await again.exited).end).toEqual({ kind: "code", code: 0 });
  });

  it("hands bwrap the plan's own seccomp rules, compiled: a plan with a rule taken out gets a program without it", async () => {
    const programs: Buffer[] = [];
    for (const [name, rules] of [
      ["st-sec", lw.ready(lw.request("pi-coder", "st-sec0").req).session.seccomp.rules],
      ["st-sec-noioctl", { ...SECCOMP_RULES, ioctl: [] }],
    ] as const) {
      const r = lw.request("pi-coder", name);
      const ready = asUserCaller(lw.ready(r.req));
      const p = { ...ready, session: { ...ready.session, seccomp: { ...ready.session.seccomp, rules } } };
      const out = join(lw.w.root, `${name}.bpf`);
      // bwrap reads the program from descriptor 3; the shell in its place copies it out.
      const s = await start(withShell(p, `cat > /dev/null; cat <&3 > "${out}"`));
      expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
      const bytes = readFileSync(out);
      expect(bytes.equals(Buffer.from(seccompProgram(p.session.seccomp.arch, rules).bytes)), name).toBe(true);
      programs.push(bytes);
    }
    expect(programs[0]!.equals(programs[1]!), "the edited plan's program is another program").toBe(false);
  });

  it("recover() releases the lock of a run a dead host left, once it has ended it", async () => {
    const r = lw.request("pi-coder", "st-recover");
    const p = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null");
    // What a host that died after its launch leaves: an open record and the lock.
    takeWorkspaceLock(p.session.lock, { run: "st-recover", workspace: "w", hostPid: 999999, at: "then" });
    const registry = new LaunchRegistry(p.session.records);
    registry.record({
      run: "st-recover",
      instance: "i",
      runDir: p.session.sessionFile.runDir,
      pid: 999999,
      startedAt: "then",
      mountStubs: [],
      cgroups: [],
      lock: p.session.lock,
      end: null,
    });
    const out = await recover(registry, { endRun: () => {} });
    expect(out.map((o) => o.run)).toContain("st-recover");
    expect(registry.get("st-recover")?.end?.reason).toBe("host-lost");
    expect(existsSync(p.session.lock), "the workspace can be launched again").toBe(false);
    expect(readFileSync(join(p.session.records, "launches.log"), "utf8")).toContain("ended host-lost st-recover");
  });
});
