// start()'s edges, in the checkout stand-in of support/launcher-sweep-world.ts, with a shell in
// bwrap's place (as the live tier's positive controls change a prepared plan): the runner's node
// made before anything else, the host letting go of the tool socket, the runner's stdin guarded, a
// failure's cleanup, the refusal's words, and the end's brief wait for a stderr a straggler holds.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { type ChildProcess, execFileSync } from "node:child_process";
import { request as httpRequest } from "node:http";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type PreparedLaunch, start } from "../src/host/launcher.ts";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { readWorkspaceLock, takeWorkspaceLock } from "../src/host/workspace-lock.ts";
import { uidLocksDir } from "../src/core/session/host-plan.ts";
import { launchEndReason } from "../src/core/session/exit.ts";
import { isAlive } from "../src/host/session-procs.ts";
import { settleWithin } from "../src/conformance/worlds/settle.ts";
import { type LauncherWorld, makeLauncherWorld } from "./support/launcher-sweep-world.ts";
import { sweepChild } from "./support/sweep-child.ts";
import { asUserCaller, withShell } from "./support/launch-edits.ts";

let lw: LauncherWorld;
beforeAll(async () => {
  lw = await makeLauncherWorld("lsstart");
});
afterAll(async () => {
  await lw?.close();
});

/** A ready Pi plan with a shell in bwrap's place, run as a caller that is not root (no cgroups, no hand-over). */
function plan(name: string, script: string, patch: (p: PreparedLaunch) => PreparedLaunch = (p) => p): PreparedLaunch {
  return patch(withShell(asUserCaller(lw.ready(lw.request("pi-coder", name).req)), script));
}

/** The socket inodes of the unix sockets bound at `path` (/proc/net/unix names the bound path). */
function socketInodes(path: string): string[] {
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[7] === path)
    .map((f) => f[6]!);
}

const myFds = () =>
  readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(join("/proc/self/fd", fd));
    } catch {
      return "";
    }
  });

describe("start()", () => {
  it("makes the runner's execute-only node before anything of the run, from the host's node", async () => {
    const node = join(lw.w.root, "tiny-node");
    writeFileSync(node, "#!/bin/sh\nexit 0\n");
    const runnerNode = join(lw.w.root, "runner-node-st", "node-x");
    const p = plan("ls-node", "cat > /dev/null", (p) => ({
      ...p,
      session: { ...p.session, runnerNode: { ...p.session.runnerNode, path: runnerNode, copyOf: node } },
    }));
    const s = await start(p);
    expect(existsSync(runnerNode), "the runner's node is made").toBe(true);
    expect(statSync(runnerNode).mode & 0o777, "execute only").toBe(0o111);
    expect(statSync(runnerNode).size).toBe(statSync(node).size);
    expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
  });

  it("the host closes its copy of the tool socket once the sandbox holds one, and guards the runner's stdin", async () => {
    const go = join(lw.w.root, "ls-tools-go");
    let stdinGuards = -1;
    const p = plan(
      "ls-tools",
      `cat > /dev/null; i=0; while [ ! -e "${go}" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`,
    );
    const s = await start({
      ...p,
      req: { ...p.req, onSpawn: (child) => void (stdinGuards = child.stdin!.listenerCount("error")) },
    });
    // The socket is bound under a temporary name in its directory, then renamed into place.
    const inodes = socketInodes(join(dirname(p.session.sessionFile.toolSocket.path), ".t"));
    expect(inodes.length, "the sandbox's command holds the listening socket").toBeGreaterThan(0);
    const held = myFds().filter((l) => inodes.some((i) => l === `socket:[${i}]`));
    expect(held, "the host holds no descriptor of it").toEqual([]);
    expect(stdinGuards, "an error writing the capability is not the host's crash").toBeGreaterThan(0);
    writeFileSync(go, "");
    expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
  });

  it("a failure after the run directory went away still throws that failure", async () => {
    let runDir = "";
    const p = plan("ls-gone", "exit 0");
    runDir = p.req.runDir;
    await expect(
      start({
        ...p,
        req: {
          ...p.req,
          onSpawn: () => {
            rmSync(runDir, { recursive: true, force: true });
            throw new Error("the spawn hook failed");
          },
        },
      }),
    ).rejects.toThrow("the spawn hook failed");
    expect(existsSync(runDir)).toBe(false);
  });

  it("a failure after the spawn ends the sandbox it started: killed with what it started, its run voided, its launch ended", async () => {
    const r = lw.request("pi-coder", "ls-abandon");
    const p0 = lw.ready(r.req);
    const pidFile = join(lw.w.root, "ls-abandon.pid");
    // A mount stub as bwrap leaves one: an empty file the end removes.
    const stub = join(lw.w.root, "ls-abandon-stub");
    // The sandbox's command waits for a capability that never comes, with a child of its own.
    const shelled = withShell(asUserCaller(p0), `sleep 60 & echo $! > ${pidFile}; cat > /dev/null`);
    const p = { ...shelled, session: { ...shelled.session, mountStubs: [{ path: stub, kind: "file" as const }] } };
    let shell = 0;
    const started = start({
      ...p,
      req: {
        ...p.req,
        onSpawn: (child) => {
          shell = child.pid!;
          writeFileSync(stub, "");
          for (let i = 0; i < 500 && !existsSync(pidFile); i++) execFileSync("sleep", ["0.01"]);
          throw new Error("the spawn hook failed");
        },
      },
    });
    // start() waits for the sandbox it kills: a sandbox left alive keeps it waiting, which this
    // bound turns into a failed assertion (the command reads a pipe no one closes).
    const settled = await settleWithin(started, 10_000);
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    if (settled.kind === "pending") for (const pid of [sleeper, shell].filter(isAlive)) process.kill(pid, "SIGKILL");
    expect(settled.kind, "start() ends the sandbox and returns its failure").toBe("rejected");
    expect(String((settled as { error: unknown }).error)).toContain("the spawn hook failed");
    const gone = async (pid: number) => {
      for (let i = 0; i < 250 && isAlive(pid); i++) await new Promise((ok) => setTimeout(ok, 20));
      return !isAlive(pid);
    };
    expect(await gone(shell), "the sandbox's command is killed").toBe(true);
    expect(await gone(sleeper), "and what it started").toBe(true);
    expect(r.ended, "the run's capabilities are voided").toEqual([p.req.instance.run]);
    expect(existsSync(p.req.runDir)).toBe(false);
    const registry = new LaunchRegistry(join(p.req.stateDir, "launches"));
    // Ended once the host has reaped it (its "exit" event).
    for (let i = 0; i < 250 && registry.get(p.req.instance.run)?.end === null; i++)
      await new Promise((ok) => setTimeout(ok, 20));
    const record = registry.get(p.req.instance.run);
    expect(record?.end, "the launch is ended, not left open for recover()").toMatchObject({
      reason: "launch-failed",
      detail: "Error: the spawn hook failed",
    });
    expect(existsSync(stub), "the sandbox's mount stubs are removed").toBe(false);
  });

  it("a sandbox command that cannot start is refused naming it, not the host's crash", async () => {
    const p = plan("ls-nospawn", "exit 0", (p) => ({ ...p, session: { ...p.session, argv: ["/nonexistent/bwrap"] } }));
    let thrown: unknown;
    try {
      await start(p);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: "sandbox-spawn", field: "/nonexistent/bwrap" });
    expect((thrown as Error).message).toContain("the sandbox's command could not start");
    expect(existsSync(p.req.runDir), "nothing of the run is left").toBe(false);
  });

  it("a bind source the session cannot reach is refused in words naming the session's uid and the bind", async () => {
    const p = plan("ls-reach", "exit 0");
    const locked = join(lw.w.root, "locked");
    mkdirSync(join(locked, "x"), { recursive: true });
    chmodSync(locked, 0o000);
    try {
      const bind = { ...p.session.binds.find((b) => b.source?.startsWith("/usr"))!, source: join(locked, "x") };
      let thrown: unknown;
      try {
        await start({ ...p, session: { ...p.session, binds: [...p.session.binds, bind] } });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ code: "bind-unreachable", field: join(locked, "x") });
      expect((thrown as Error).message).toContain(
        `: the session (uid ${p.session.identity.runAs.uid}) cannot use this `,
      );
      expect((thrown as Error).message).toMatch(/ bind: \S/);
      expect(existsSync(p.req.runDir)).toBe(false);
    } finally {
      chmodSync(locked, 0o755);
    }
  });

  it("the end waits only briefly for a stderr that a process outliving bwrap still holds", async () => {
    const release = join(lw.w.root, "ls-late-release");
    const p = plan(
      "ls-late",
      [
        "cat > /dev/null",
        "echo early >&2",
        `( i=0; while [ ! -e "${release}" ] && [ $i -lt 150 ]; do sleep 0.02; i=$((i+1)); done; echo late >&2 ) &`,
        "exit 0",
      ].join("\n"),
    );
    const s = await start(p);
    const end = await s.exited;
    writeFileSync(release, "");
    expect(end.end).toEqual({ kind: "code", code: 0 });
    expect(end.stderr, "the end did not wait for the straggler").toBe("early\n");
  });

  it("a session's end signals no pid: its sandbox is already reaped, and the pid may be another process's by then", async () => {
    const p = plan("ls-reaped", "cat > /dev/null; exit 0");
    const signalled: number[] = [];
    const kill = process.kill.bind(process);
    const spy = vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => {
      signalled.push(pid);
      return kill(pid, signal);
    });
    try {
      const s = await start(p);
      expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
      expect(signalled, `no signal went to the sandbox's pid ${s.pid} or anything else`).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it("the run's home is 0700 whatever the umask took from the mode it was made with", () => {
    // A umask that takes the owner's write bit: the run directory is made 0500 and stays so, home
    // alone is set to 0700 after it is made. Only root can then fill the run; anyone else is refused.
    const p = plan("ls-umask", "exit 0");
    const file = join(lw.w.root, "ls-umask.json");
    writeFileSync(file, JSON.stringify(p));
    const sweep = sweepChild();
    const out = execFileSync(
      process.execPath,
      [...sweep.execArgv, join(import.meta.dirname, "support", "launcher-umask-child.ts"), file, String(0o277)],
      { env: { ...process.env, ...sweep.env }, encoding: "utf8" },
    );
    sweep.collect();
    // The session's passwd is 0644 too, so a root caller's session uid can read it.
    if (process.getuid!() === 0) expect(JSON.parse(out)).toEqual({ run: "500", home: "700", passwd: "644" });
    else expect(JSON.parse(out)).toEqual({ error: "EACCES" });
  });
});

describe("start() with a sandbox that ends before its capability", () => {
  /** Waits in onSpawn until the shell has exited (a zombie not yet reaped), so it ends before the proxy listens. */
  const whenDead = (pid: number) => {
    const state = () => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0];
    for (let i = 0; i < 500 && state() !== "Z"; i++) execFileSync("sleep", ["0.01"]);
  };

  for (const [label, script, end] of [
    ["exits 3", "exit 3", { kind: "code", code: 3 }],
    ["is killed", "kill -9 $$", { kind: "signal", signal: "SIGKILL", ending: "killed" }],
  ] as const) {
    it(`one that ${label} is returned ended, its run void, and no capability is issued for it`, async () => {
      const r = lw.request("pi-coder", `ls-early-${end.kind}`);
      const p = withShell(asUserCaller(lw.ready(r.req)), script);
      const s = await start({ ...p, req: { ...p.req, onSpawn: (child) => whenDead(child.pid!) } });
      expect((await s.exited).end, "the session's own end, for its caller to read").toEqual(end);
      expect(r.issued, "a void run is issued no capability").toEqual([]);
      expect(r.ended).toEqual([p.req.instance.run]);
    });
  }

  it("control: one that waits for its capability is issued exactly one, for its run", async () => {
    const r = lw.request("pi-coder", "ls-early-control");
    const p = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null");
    const s = await start(p);
    expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
    expect(r.issued).toEqual([{ run: p.req.instance.run, instance: p.req.instance.instance }]);
  });
});

/** A POST of `bytes` bytes of body to the model socket; resolves with the proxy's status. */
function postModel(socket: string, bytes: number): Promise<number> {
  return new Promise((ok, fail) => {
    const r = httpRequest(
      {
        socketPath: socket,
        method: "POST",
        path: "/v1/messages",
        headers: { "x-api-key": "placeholder", "content-type": "application/json", "content-length": bytes },
      },
      (res) => {
        res.resume();
        res.on("end", () => ok(res.statusCode!));
      },
    );
    r.on("error", fail);
    r.end("x".repeat(bytes));
  });
}

/** A shell that reads the capability, then waits for `go` to exist (ten seconds at most). */
const waitFor = (go: string) =>
  `cat > /dev/null; i=0; while [ ! -e "${go}" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`;

describe("start(): what a session holds, and what its end leaves", () => {
  it("a user caller's session has its passwd and group files for its life, gone at its end, and records no uid lock", async () => {
    const go = join(lw.w.root, "ls-ident-go");
    const p = plan("ls-ident", waitFor(go), (p) => ({ ...p, session: { ...p.session, uidLock: null } }));
    const dir = p.session.identityFiles.dir;
    const s = await start(p);
    expect(readFileSync(join(dir, "passwd"), "utf8")).toBe(p.session.identityFiles.passwd);
    expect(readFileSync(join(dir, "group"), "utf8")).toBe(p.session.identityFiles.group);
    const record = new LaunchRegistry(p.session.records).get(p.session.sessionFile.run)!;
    expect(record.identityDir).toBe(dir);
    expect(record, "no uid lock for recover() to let go").not.toHaveProperty("uidLock");
    writeFileSync(go, "");
    expect((await s.exited).end).toEqual({ kind: "code", code: 0 });
    expect(existsSync(dir), "the identity files go with the session").toBe(false);
  });

  it("a root caller's session uid is held for its life and recorded for recover(); another session's uid refuses the launch naming it", async () => {
    const go = join(lw.w.root, "ls-uid-go");
    const p0 = plan("ls-uid", waitFor(go));
    const uid = p0.session.identity.runAs.uid;
    const uidLock = join(uidLocksDir(p0.req.stateDir), `${uid}.lock`);
    const p = { ...p0, session: { ...p0.session, uidLock } };
    const run = p.session.sessionFile.run;

    takeWorkspaceLock(uidLock, { run: "the-other-run", workspace: "w", hostPid: 1, at: "then" });
    let thrown: unknown;
    try {
      await start(p);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: "session-uid-busy", field: uidLock });
    expect((thrown as Error).message).toContain(`uid ${uid} runs another session (run the-other-run, host pid 1`);
    expect(existsSync(p.req.runDir), "nothing of the run is made").toBe(false);
    expect(readWorkspaceLock(uidLock)?.run, "the other session keeps its uid").toBe("the-other-run");
    rmSync(uidLock);

    const s = await start(p);
    expect(readWorkspaceLock(uidLock)?.run, "the uid is this run's while it runs").toBe(run);
    expect(new LaunchRegistry(p.session.records).get(run)?.uidLock, "recorded for recover()").toBe(uidLock);
    writeFileSync(go, "");
    await s.exited;
    expect(existsSync(uidLock), "let go at the end").toBe(false);
  });

  it("a plan without an end-of-session check ends reported unsafe and unchecked, in its end and in its record", async () => {
    const p = plan("ls-nocheck", "cat > /dev/null", (p) => ({ ...p, session: { ...p.session, endCheck: null } }));
    const run = p.session.sessionFile.run;
    const started = start(p);
    await expect(started, "the launch starts: its record is written without a quarantine").resolves.toBeDefined();
    const s = await started;
    const registry = new LaunchRegistry(p.session.records);
    expect(registry.get(run), "no quarantine to look in").not.toHaveProperty("quarantine");
    const end = await s.exited;
    const unchecked = {
      verdict: "unsafe",
      workspace: p.session.sessionFile.workspace,
      quarantine: "",
      done: [],
      failed: [{ kind: "check", path: ".", error: "the plan has no end-of-session check" }],
    };
    expect(end.workspace).toEqual(unchecked);
    expect(registry.get(run)).toMatchObject({
      end: { reason: launchEndReason(0), detail: "exit 0" },
      check: unchecked,
    });
  });

  it("bwrap's exit voids the run's capabilities at once, before the end waits for the sandbox's stderr", async () => {
    const r = lw.request("pi-coder", "ls-void");
    const p = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null");
    let atExit: string[] | undefined;
    // Registered before the launcher's own exit listener; the microtask runs once every listener has.
    const onSpawn = (child: ChildProcess) =>
      void child.once("exit", () => queueMicrotask(() => void (atExit = [...r.ended])));
    const s = await start({ ...p, req: { ...p.req, onSpawn } });
    await s.exited;
    expect(atExit, "voided in the exit's own turn").toEqual([p.req.instance.run]);
    expect(r.ended, "and only once").toEqual([p.req.instance.run]);
  });

  it("a sandbox that cannot start leaves the host holding no copy of the tool socket", async () => {
    const p = plan("ls-nosock", "exit 0", (p) => ({ ...p, session: { ...p.session, argv: ["/nonexistent/bwrap"] } }));
    const boundAt = join(dirname(p.session.sessionFile.toolSocket.path), ".t");
    await expect(start(p)).rejects.toMatchObject({ code: "sandbox-spawn" });
    // A process another test spawned meanwhile may hold a copy; the host itself must hold none.
    const inodes = socketInodes(boundAt);
    const held = myFds().filter((l) => inodes.some((i) => l === `socket:[${i}]`));
    expect(held, "the host closed its copy, not only unlinked it").toEqual([]);
    expect(existsSync(p.session.sessionFile.toolSocket.path)).toBe(false);
  });

  it("a Pi plan whose bundle has no models.json gives Pi an empty one", async () => {
    const p = plan("ls-nomodels", "cat > /dev/null", (p) => {
      const { "models.json": _, ...bundle } = p.launch.bundle;
      return { ...p, launch: { ...p.launch, bundle } };
    });
    const piModels = p.session.piModels;
    expect(piModels, "a Pi plan writes Pi's models.json").not.toBe(null);
    const s = await start(p);
    expect(readFileSync(piModels!, "utf8")).toBe("");
    await s.exited;
  });

  it("the model proxy serves with the plan's own limits: a body past its bound is refused 413 before any upstream", async () => {
    const go = join(lw.w.root, "ls-limits-go");
    const p = plan("ls-limits", waitFor(go), (p) => ({
      ...p,
      session: {
        ...p.session,
        // The bound is checked before the body is read as JSON; nothing listens upstream on port 9.
        modelProxy: { ...p.session.modelProxy!, upstream: "http://127.0.0.1:9", limits: { bodyBytes: 16 } },
      },
    }));
    const s = await start(p);
    try {
      expect(await postModel(p.session.modelProxy!.socket, 17)).toBe(413);
    } finally {
      writeFileSync(go, "");
    }
    await s.exited;
  });
});

describe("start(): a session that ends before its proxy listens", () => {
  it("a sandbox killed before its model proxy listened: the launch returns the session, whose end says it was killed", async () => {
    const r = lw.request("pi-coder", "ls-early");
    const p0 = withShell(asUserCaller(lw.ready(r.req)), "cat > /dev/null; sleep 30");
    const sock = p0.session.modelProxy!.socket;
    let proxy: number | undefined;
    // The proxy's process holds the socket bound in the host, under its dot name, as descriptor 4.
    const findProxy = () => {
      const inodes = socketInodes(join(dirname(sock), `.${basename(sock)}`)).map((i) => `socket:[${i}]`);
      return readdirSync("/proc")
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .find((pid) => {
          try {
            return inodes.includes(readlinkSync(`/proc/${pid}/fd/4`));
          } catch {
            return false;
          }
        });
    };
    const p: PreparedLaunch = {
      ...p0,
      req: {
        ...p0.req,
        // The proxy is stopped before it can listen and the sandbox killed; bwrap's exit (which voids
        // the run) then ends the proxy, as a session's end does: it never listened.
        onSpawn: (child) => {
          proxy = findProxy();
          if (proxy !== undefined) process.kill(proxy, "SIGSTOP");
          process.kill(child.pid!, "SIGKILL");
        },
        bus: {
          issueCapability: (b) => r.req.bus.issueCapability(b),
          endRun: (run) => {
            r.req.bus.endRun(run);
            if (proxy !== undefined) process.kill(proxy, "SIGKILL");
          },
        },
      },
    };
    const started = start(p);
    await expect(started, "the proxy's failure is not the launch's: the session had ended").resolves.toBeDefined();
    expect(proxy, "the proxy's process was found").toBeGreaterThan(0);
    const end = await (await started).exited;
    expect(end.end).toMatchObject({ kind: "signal", signal: "SIGKILL" });
    expect(end.reason).toBe("killed");
    expect(r.ended).toEqual([p.req.instance.run]);
    expect(existsSync(p.req.runDir), "an ended session's run directory stays").toBe(true);
  });
});
