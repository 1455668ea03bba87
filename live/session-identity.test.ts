import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { runSockets } from "../src/core/runner/run-paths.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { identityProblem } from "../src/conformance/attacks/world.ts";
import { OTHER_UID } from "../src/conformance/attacks/table.ts";
import {
  ask,
  launchAndClaim,
  makeRuntimeWorld,
  waitClaimed,
  type RuntimeWorld,
} from "../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, readLaunchInputs, start } from "../src/host/launcher.ts";
import type { FsView } from "../src/core/gate/fs-view.ts";
import { launchAsUid, launchWithBinds } from "../src/conformance/controls/launch.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { childrenOf } from "../src/host/session-procs.ts";

// A root caller's sessions through the real launcher: bwrap, the runner and every turn run as the
// session's own unprivileged uid, which owns the workspace and run the launcher handed it; the
// launcher refuses, naming the path, what it cannot hand over or the session cannot reach; and the
// run's sockets stay the session's even after it chmods everything it can.
const facts = readHostFacts({ repo: REPO_ROOT });
const INOTIFY_INIT1 = process.arch === "arm64" ? 26 : 294;
const it = liveIt("bwrap, as root", checkoutProblem(REPO_ROOT) ?? sandboxProblem(facts) ?? identityProblem("root"));

let w: RuntimeWorld;
beforeAll(async () => {
  if ((checkoutProblem(REPO_ROOT) ?? sandboxProblem(facts) ?? identityProblem("root")) === null)
    w = await makeRuntimeWorld("identity");
});
afterAll(async () => w?.close());

function prepared(name: string): PreparedLaunch {
  const p = prepareLaunch(w.request(w.instance("pi-coder", name, { instance: name })));
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  return p.prepared;
}

/** The Uid and Gid lines of /proc/<pid>/status: real, effective, saved, filesystem. */
const idsOf = (pid: number) =>
  readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .filter((l) => /^(Uid|Gid):/.test(l))
    .map((l) => l.split(/\s+/).slice(1).join(" "));

/** Whether a third local uid, neither root nor the session's, can connect to a Unix socket. */
function otherUidConnects(path: string): string {
  const r = spawnSync(
    "setpriv",
    [
      `--reuid=${OTHER_UID}`,
      `--regid=${OTHER_UID}`,
      "--clear-groups",
      "--",
      "perl",
      "-MIO::Socket::UNIX",
      "-e",
      `IO::Socket::UNIX->new(Peer => $ARGV[0]) or do { print "REFUSED $!\\n"; exit 1 }; print "CONNECTED\\n"`,
      path,
    ],
    { encoding: "utf8" },
  );
  return r.stdout.trim();
}

const mosaicCode = async (f: () => unknown): Promise<string> => {
  try {
    await f();
  } catch (e) {
    return isMosaicError(e) ? `${e.code}: ${e.message}` : `not a MosaicError: ${String(e)}`;
  }
  return "no error";
};

describe("a root caller's session runs as its own unprivileged uid", () => {
  it("bwrap, the runner and the turn run as the session's uid and gid, never kuid 0; the workspace and run are the session's", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "as-session", { instance: "as-session" })));
    try {
      const me = s.plan.identity.runAs;
      const id = `${me.uid} ${me.uid} ${me.uid} ${me.uid}`;
      const gid = `${me.gid} ${me.gid} ${me.gid} ${me.gid}`;
      expect(idsOf(s.pid), "bwrap itself runs as the session's uid and gid").toEqual([id, gid]);
      const runner = childrenOf(s.pid)[0]!;
      expect(idsOf(runner), "the runner (pid 1 inside) runs as the session's uid and gid").toEqual([id, gid]);
      const reply = await ask(w, "as-session", "id -u; id -g; id -G; grep -E '^CapEff' /proc/self/status");
      expect(reply.split("\n"), "the turn: the session's uid and gid, no other group, no capability").toEqual([
        String(me.uid),
        String(me.gid),
        String(me.gid),
        "CapEff:\t0000000000000000",
      ]);
      const ws = s.plan.spec.workspace;
      expect(
        [statSync(ws).uid, statSync(s.runDir).uid, statSync(join(ws, "made.txt"), { throwIfNoEntry: false })?.uid],
        "the launcher handed the workspace and run to the session",
      ).toEqual([me.uid, me.uid, undefined]);
      await ask(w, "as-session", `echo x > made.txt`);
      expect(statSync(join(ws, "made.txt")).uid, "what the session writes is the session's, not root's").toBe(me.uid);
    } finally {
      await s.stop();
    }
  }, 30_000);

  it("a workspace file hard-linked to a root file elsewhere refuses handover-hardlink: the other file stays root's, no run is left; handing it over anyway would give the session that file", async () => {
    const p = prepared("hardlinked");
    const outside = join(w.root, "root-only.conf");
    writeFileSync(outside, "root's own\n", { mode: 0o600 });
    linkSync(outside, join(p.req.instance.workspace, "innocent.txt"));
    expect(await mosaicCode(() => start(p)), "the launch refuses, naming the file").toMatch(
      /^handover-hardlink: .*\/innocent\.txt: has 2 hard links and belongs to 0:0/,
    );
    expect(statSync(outside).uid, "the file elsewhere is still root's").toBe(0);
    expect(existsSync(p.req.runDir), "no run directory is left").toBe(false);
    // Control: the same chown without the check hands over the other name too.
    lchownSync(
      join(p.req.instance.workspace, "innocent.txt"),
      p.session.identity.runAs.uid,
      p.session.identity.runAs.gid,
    );
    expect(statSync(outside).uid, "a chown through the link gives the session the file elsewhere").toBe(
      p.session.identity.runAs.uid,
    );
  });

  it("a second launch on a workspace whose session still runs is refused workspace-busy, naming that run, and touches nothing; control: with its lock moved aside on purpose, it hands the live session's workspace to another uid", async () => {
    const first = prepared("busy-first");
    const ws = first.req.instance.workspace;
    const s = await start(first);
    try {
      await waitClaimed(w, s, "busy-first");
      const mine = first.session.identity.runAs.uid;
      const secondOf = (name: string) => {
        const q = prepareLaunch(w.request(w.instance("pi-coder", name, { instance: name, workspace: ws })));
        if (q.kind !== "ready") throw new Error(`refused: ${q.code}: ${q.message}`);
        return q.prepared;
      };
      const second = secondOf("busy-second");
      expect(await mosaicCode(() => start(second)), "refused, naming the live run").toMatch(
        /^workspace-busy: .*busy-first/,
      );
      expect(existsSync(second.req.runDir), "the second launch made nothing").toBe(false);
      expect(statSync(ws).uid, "the live session's workspace is still its own").toBe(mine);
      // Control: the same launch with its lock moved aside goes ahead over the live workspace.
      const third = secondOf("busy-third");
      const unlocked = { ...third, session: { ...third.session, lock: `${third.session.lock}.control` } };
      expect(unlocked.session.identity.runAs.uid, "another session, another uid").not.toBe(mine);
      const t = await start(unlocked);
      try {
        expect(statSync(ws).uid, "the live session's workspace was handed to the second session's uid").toBe(
          unlocked.session.identity.runAs.uid,
        );
      } finally {
        await t.stop();
      }
    } finally {
      await s.stop();
    }
  });

  it("through start(), a link an earlier session left in the workspace hands nothing behind it over: the host's directory and file it names stay root's; control: a chown that follows the link gives them to the session", async () => {
    const outside = join(w.root, "host-tree");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "host-file"), "the host's own\n");
    const p = prepared("link-left");
    const ws = p.req.instance.workspace;
    symlinkSync(outside, join(ws, "left-dir"));
    symlinkSync(join(outside, "host-file"), join(ws, "left-file"));
    const s = await start(p);
    try {
      await waitClaimed(w, s, "link-left");
    } finally {
      await s.stop();
    }
    const me = p.session.identity.runAs;
    expect(statSync(ws).uid, "the workspace was handed over").toBe(me.uid);
    expect(
      [statSync(outside).uid, statSync(join(outside, "host-file")).uid],
      "what the links name stays root's",
    ).toEqual([0, 0]);
    // Control: the same chown through the name, following it, as a walk that followed links would.
    const again = join(w.root, "control-link");
    symlinkSync(outside, again);
    chownSync(again, me.uid, me.gid);
    expect(statSync(outside).uid, "a chown that follows the link hands the host's directory over").toBe(me.uid);
  });

  it("a workspace reached through a link (here to a stand-in of the founder's HOME) refuses path-through-link, naming the link, before anything is on disk; control: planned as if the link were a directory, the session writes into the link's target", async () => {
    const home = join(w.root, "founder-home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, ".bashrc"), "the founder's own\n");
    const link = join(w.data, "workspaces/acme/through-link");
    symlinkSync(home, link);
    const req = w.request(w.instance("pi-coder", "through-link", { instance: "through-link", workspace: link }));
    expect(await mosaicCode(() => prepareLaunch(req)), "refused, naming the link and where it leads").toBe(
      `path-through-link: workspace: ${link} goes through ${link}, a symbolic link to ${home}: the sandbox would bind the link's target, which no check of ${link} saw; name the directory itself`,
    );
    expect(existsSync(req.runDir), "no run directory").toBe(false);
    expect(statSync(home).uid, "the target was not handed over").toBe(0);
    // Control: the planner shown a directory where the link is.
    const inputs = readLaunchInputs(req);
    const blind: FsView = { lstat: (p) => (p === link ? { kind: "dir" } : inputs.fs.lstat(p)) };
    const p = prepareLaunch(req, { ...inputs, fs: blind });
    if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
    // The handover never follows the link, so the target stays root's; a user caller's HOME is the
    // caller's own, which its session runs as: the target is given the session's uid to stand for that.
    const me = p.prepared.session.identity.runAs;
    for (const f of [home, join(home, ".bashrc")]) lchownSync(f, me.uid, me.gid);
    const s = await start(p.prepared);
    try {
      await waitClaimed(w, s, "through-link");
      await ask(w, "through-link", `echo session > ${link}/planted; echo done`);
    } finally {
      await s.stop();
    }
    expect(readFileSync(join(home, "planted"), "utf8"), "the session wrote into the founder's stand-in HOME").toBe(
      "session\n",
    );
  });

  it("a bind the session cannot reach refuses bind-unreachable naming the directory, and leaves the workspace as it was; without the check bwrap fails on it unexplained", async () => {
    const locked = join(w.data, "workspaces/acme/locked");
    mkdirSync(join(locked, "ws"), { recursive: true });
    chmodSync(locked, 0o700);
    const p = prepareLaunch(
      w.request(w.instance("pi-coder", "locked-out", { instance: "locked-out", workspace: join(locked, "ws") })),
    );
    if (p.kind !== "ready") throw new Error(p.message);
    expect(await mosaicCode(() => start(p.prepared)), "the launch refuses before anything is on disk").toBe(
      `bind-unreachable: ${locked}: the session (uid ${p.prepared.session.identity.runAs.uid}) cannot use this workspace bind: uid ${p.prepared.session.identity.runAs.uid} cannot enter ${locked} (mode 0700, owner 0:0)`,
    );
    expect(statSync(join(locked, "ws")).uid, "the workspace was not handed over").toBe(0);
    expect(existsSync(p.prepared.req.runDir), "no run directory").toBe(false);
    const bare = spawnSync(
      "setpriv",
      [
        `--reuid=${p.prepared.session.identity.runAs.uid}`,
        `--regid=${p.prepared.session.identity.runAs.gid}`,
        "--clear-groups",
        "--",
        "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--bind",
        join(locked, "ws"),
        join(locked, "ws"),
        "true",
      ],
      { encoding: "utf8" },
    );
    expect([bare.status, bare.stderr.trim()], "control: bwrap itself says only that it cannot find the path").toEqual([
      1,
      `bwrap: Can't find source path ${join(locked, "ws")}: Permission denied`,
    ]);
  });
});

describe("the run's sockets cannot be opened to another uid", () => {
  for (const arm of ["shipped", "sock/ writable"] as const) {
    it(`${arm}: the session chmods its run directory and sockets; another local uid ${arm === "shipped" ? "is refused" : "connects (control)"}`, async () => {
      const p = prepared(`sockets-${arm === "shipped" ? "ro" : "rw"}`);
      const s = await start(arm === "shipped" ? p : launchWithBinds(p, (t) => t.filter((b) => b.row !== "sockets")));
      try {
        const run = s.runDir;
        const { tools, model } = runSockets(run);
        const st = statSync(tools);
        expect([st.mode & 0o777, st.uid], "tools.sock: 0600 and the session's").toEqual([
          0o600,
          s.plan.identity.runAs.uid,
        ]);
        const tried = await ask(
          w,
          p.req.instance.instance,
          `chmod 0777 ${run} ${run}/sock 2>&1; chmod 0666 ${tools} ${model} 2>&1; stat -c '%a %n' ${run}/sock ${tools}`,
        );
        if (arm === "shipped")
          expect(tried, "inside, sock/ and its sockets are read-only: chmod fails").toMatch(/Read-only file system/);
        for (const sock of [tools, model]) {
          const got = otherUidConnects(sock);
          if (arm === "shipped") expect(got, `${sock}: another uid is refused`).toMatch(/^REFUSED /);
          else expect(got, `${sock}: with sock/ writable the session opened it to another uid`).toBe("CONNECTED");
        }
      } finally {
        await s.stop();
      }
    }, 30_000);
  }
});

/** A perl one-liner: inotify_init1() until it fails or `max` succeed, then prints how many and holds them `hold` seconds. */
const inotify = (max: number, hold: number) =>
  `perl -e 'my $n = 0; while ($n < ${max}) { last if syscall(${INOTIFY_INIT1}, 0) < 0; $n++ } print(($n < ${max} ? "FAILED " . ($! + 0) : "HELD"), " $n\\n"); sleep ${hold}'`;

describe("each session a uid of its own: no per-uid kernel limit is shared", () => {
  it("two sessions at once run as two uids; one holding every inotify instance its uid may have leaves the other its own", async () => {
    const a = await launchAndClaim(w, w.request(w.instance("pi-coder", "uid-a", { instance: "uid-a" })));
    const second = await launchAndClaim(w, w.request(w.instance("pi-coder", "uid-b", { instance: "uid-b" }))).catch(
      (e: Error) => e,
    );
    if (second instanceof Error) await a.stop();
    expect(second instanceof Error ? second.message : "launched", "a second session launches beside the first").toBe(
      "launched",
    );
    const b = second as Exclude<typeof second, Error>;
    try {
      expect(a.plan.identity.runAs.uid, "two live sessions, two uids").not.toBe(b.plan.identity.runAs.uid);
      const held = w.broker.deliver("uid-a", { from: "pm-uid", body: inotify(100_000, 6) });
      await new Promise((r) => setTimeout(r, 2500));
      const other = await ask(w, "uid-b", inotify(1, 0));
      const first = await waitReply(held);
      expect(first, "session a took every instance its uid may have (EMFILE past the limit)").toMatch(/^FAILED 24 \d+/);
      expect(other, "session b still gets its own").toBe("HELD 1");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("control: with session b run as a's uid on purpose, a's exhausting its instances leaves b none", async () => {
    const a = await launchAndClaim(w, w.request(w.instance("pi-coder", "uid-c", { instance: "uid-c" })));
    const b = await launchAndClaim(w, w.request(w.instance("pi-coder", "uid-d", { instance: "uid-d" })), (p) =>
      launchAsUid(p, a.plan.identity.runAs),
    );
    try {
      expect(b.plan.identity.runAs.uid, "one uid for both, on purpose").toBe(a.plan.identity.runAs.uid);
      const held = w.broker.deliver("uid-c", { from: "pm-uid", body: inotify(100_000, 6) });
      await new Promise((r) => setTimeout(r, 2500));
      const other = await ask(w, "uid-d", inotify(1, 0));
      await waitReply(held);
      expect(other, "the other session met the same uid's limit").toBe("FAILED 24 0");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("a range of one uid: a second session planned before the first started is refused by the uid's lock, naming the run that holds it; planned after, by the planner", async () => {
    const one = { ...w.hostEnv, MOSAIC_SESSION_UID: "1879050000" };
    const planned = (name: string) => {
      const q = prepareLaunch(w.request(w.instance("pi-coder", name, { instance: name }), { hostEnv: one }));
      if (q.kind !== "ready") throw new Error(q.message);
      return q.prepared;
    };
    const first = planned("uid-e");
    const second = planned("uid-f");
    expect(second.session.identity.runAs.uid, "both planned on the one uid while it was free").toBe(1879050000);
    const a = await start(first);
    try {
      await expect(start(second), "the lock, taken at start, refuses the second").rejects.toMatchObject({
        code: "session-uid-busy",
        message: expect.stringContaining("run uid-e"),
      });
      expect(existsSync(second.req.runDir), "the refused launch made nothing").toBe(false);
      expect(await mosaicCode(() => planned("uid-g")), "planned now, the planner sees the uid held").toMatch(
        /^session-uid-busy: .*every uid of 1879050000-1879050000 runs a session/,
      );
    } finally {
      await a.stop();
    }
  }, 60_000);
});

/** The RESULT to message `id` from pm-uid, waited for. */
async function waitReply(id: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const r = w.broker.sentTo("pm-uid").find((m) => m.kind === "result" && m.replyTo === id);
    if (r !== undefined) return r.body;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`no reply to ${id}`);
}
