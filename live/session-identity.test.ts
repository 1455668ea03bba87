import { spawnSync } from "node:child_process";
import { existsSync, lchownSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { runSockets } from "../src/core/runner/run-paths.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { identityProblem } from "../src/conformance/attacks/world.ts";
import { OTHER_UID } from "../src/conformance/attacks/table.ts";
import { ask, launchAndClaim, makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../src/host/launcher.ts";
import { launchWithBinds } from "../src/conformance/controls/launch.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { childrenOf } from "../src/host/session-procs.ts";

// A root caller's sessions through the real launcher: bwrap, the runner and every turn run as the
// session's own unprivileged uid, which owns the workspace and run the launcher handed it; the
// launcher refuses, naming the path, what it cannot hand over or the session cannot reach; and the
// run's sockets stay the session's even after it chmods everything it can.
const facts = readHostFacts({ repo: REPO_ROOT });
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
      const id = `${facts.session.uid} ${facts.session.uid} ${facts.session.uid} ${facts.session.uid}`;
      const gid = `${facts.session.gid} ${facts.session.gid} ${facts.session.gid} ${facts.session.gid}`;
      expect(idsOf(s.pid), "bwrap itself runs as the session's uid and gid").toEqual([id, gid]);
      const runner = childrenOf(s.pid)[0]!;
      expect(idsOf(runner), "the runner (pid 1 inside) runs as the session's uid and gid").toEqual([id, gid]);
      const reply = await ask(w, "as-session", "id -u; id -g; id -G; grep -E '^CapEff' /proc/self/status");
      expect(reply.split("\n"), "the turn: the session's uid and gid, no other group, no capability").toEqual([
        String(facts.session.uid),
        String(facts.session.gid),
        String(facts.session.gid),
        "CapEff:\t0000000000000000",
      ]);
      const ws = s.plan.spec.workspace;
      expect(
        [statSync(ws).uid, statSync(s.runDir).uid, statSync(join(ws, "made.txt"), { throwIfNoEntry: false })?.uid],
        "the launcher handed the workspace and run to the session",
      ).toEqual([facts.session.uid, facts.session.uid, undefined]);
      await ask(w, "as-session", `echo x > made.txt`);
      expect(statSync(join(ws, "made.txt")).uid, "what the session writes is the session's, not root's").toBe(
        facts.session.uid,
      );
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
    lchownSync(join(p.req.instance.workspace, "innocent.txt"), facts.session.uid, facts.session.gid);
    expect(statSync(outside).uid, "a chown through the link gives the session the file elsewhere").toBe(
      facts.session.uid,
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
      `bind-unreachable: ${locked}: the session (uid ${facts.session.uid}) cannot use this workspace bind: uid ${facts.session.uid} cannot enter ${locked} (mode 0700, owner 0:0)`,
    );
    expect(statSync(join(locked, "ws")).uid, "the workspace was not handed over").toBe(0);
    expect(existsSync(p.prepared.req.runDir), "no run directory").toBe(false);
    const bare = spawnSync(
      "setpriv",
      [
        `--reuid=${facts.session.uid}`,
        `--regid=${facts.session.gid}`,
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
        expect([st.mode & 0o777, st.uid], "tools.sock: 0600 and the session's").toEqual([0o600, facts.session.uid]);
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
