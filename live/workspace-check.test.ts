import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { ask, launchAndClaim, makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { recover } from "../src/host/recover.ts";
import { WALK_BOUNDS } from "../src/core/workspace/inspect.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { runAsUser, userUid } from "./support/as-user.ts";
import { LEVELS, leaveAndRelaunch, type Leavings } from "./support/workspace-leavings.ts";

// The end-of-session check where a session ends: the real launcher's exit handler and recover()
// for a launch a dead host left open. Each test first shows the plant is live (the host's own git
// runs it while it is there: the positive control), then that after the session's end the host's
// git runs nothing, the plant lies in the quarantine, and the report is in LaunchEnd and the record.
// The attack table (live/attacks.test.ts, git-rows.ts) proves each finding kind with the check
// removed on purpose; this file proves the shipped launcher and recover() run it.
const itBwrap = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));

/** The host's own git, as the founder runs it in dir: true when it ran the planted command (the marker appeared). */
function hostGitRuns(dir: string, marker: string): boolean {
  rmSync(marker, { force: true });
  spawnSync("git", ["-c", "safe.directory=*", "status"], {
    cwd: dir,
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
  });
  const ran = existsSync(marker);
  rmSync(marker, { force: true });
  return ran;
}

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync("git", ["-c", "user.name=host", "-c", "user.email=host@invalid", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

describe("the launcher checks the workspace when a session ends", () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    w = await makeRuntimeWorld("ws-check");
  });
  afterAll(async () => w?.close());

  itBwrap(
    "a nested repository with core.fsmonitor and a setuid file: quarantined and cleared, in LaunchEnd and the launch record",
    async () => {
      const inst = w.instance("pi-coder", "ws-check");
      git(inst.workspace, "init", "-q");
      writeFileSync(join(inst.workspace, "README.md"), "the founder's project\n");
      git(inst.workspace, "add", ".");
      git(inst.workspace, "commit", "-qm", "host");
      const marker = join(w.root, "host-ran-the-session-fsmonitor");
      const s = await launchAndClaim(w, w.request(inst));
      const reply = await ask(
        w,
        inst.instance,
        `git init -q sub && git -C sub config core.fsmonitor 'touch ${marker};:' && cp /usr/bin/id id-copy && chmod 4755 id-copy && echo PLANTED`,
      );
      expect(reply, "the turn planted both").toContain("PLANTED");
      // Positive control: while the plant is there, the host's own git in sub/ runs the session's command.
      expect(hostGitRuns(join(inst.workspace, "sub"), marker), "the plant is live before the session ends").toBe(true);
      expect(
        lstatSync(join(inst.workspace, "id-copy")).mode & 0o4000,
        "the setuid file is on the host before the session ends",
      ).not.toBe(0);

      const end = await s.stop();
      expect(end.workspace.verdict, JSON.stringify(end.workspace, null, 2)).toBe("quarantined");
      const done = end.workspace.verdict === "quarantined" ? end.workspace.done : [];
      expect(done.map((d) => [d.kind, d.path, d.did]).sort(), "what the end-of-session check did").toEqual([
        ["nested-repository", "sub/.git", "moved"],
        ["setid-file", "id-copy", "cleared-setid"],
      ]);
      expect(
        hostGitRuns(join(inst.workspace, "sub"), marker),
        "the end-of-session check: the founder's git status in sub/ runs nothing",
      ).toBe(false);
      expect(
        lstatSync(join(inst.workspace, "id-copy")).mode & 0o6000,
        "the end-of-session check: no setuid or setgid bit is left",
      ).toBe(0);
      const q = join(w.stateDir, "quarantine", inst.run);
      expect(
        readFileSync(join(q, "files/sub/.git/config"), "utf8"),
        "the nested repository is in the quarantine, not lost",
      ).toContain("fsmonitor");
      expect(
        new LaunchRegistry(join(w.stateDir, "launches")).get(inst.run)?.check?.verdict,
        "the launch record holds the report",
      ).toBe("quarantined");
    },
    60_000,
  );
});

describe("recover() checks the workspace of a launch a dead host left open", () => {
  const scratch = makeScratch("ws-recover");
  afterAll(() => scratch.remove());

  it("a workspace whose root the session made a repository: its HEAD quarantined, the report in the record", async () => {
    const ws = join(scratch.root, "data/workspaces/acme/coder");
    const marker = join(scratch.root, "host-ran-the-session-fsmonitor");
    mkdirSync(join(ws, "objects"), { recursive: true });
    mkdirSync(join(ws, "refs/heads"), { recursive: true });
    writeFileSync(join(ws, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(
      join(ws, "config"),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ${ws}\n\tfsmonitor = touch ${marker};:\n`,
    );
    // Positive control: the host's git takes the root for a repository and runs its fsmonitor.
    expect(hostGitRuns(ws, marker), "the plant is live before recover()").toBe(true);

    const registry = new LaunchRegistry(join(scratch.root, "state/launches"));
    const dead = spawnSync("true").pid!;
    registry.record({
      run: "lost",
      instance: "coder",
      runDir: join(scratch.root, "data/runs/lost"),
      pid: dead,
      startedAt: new Date().toISOString(),
      mountStubs: [],
      cgroups: [],
      workspace: ws,
      quarantine: join(scratch.root, "state/quarantine/lost"),
      end: null,
    });
    const [r] = await recover(registry, { endRun: () => {} });
    expect(r?.workspace?.verdict, JSON.stringify(r?.workspace, null, 2)).toBe("quarantined");
    expect(
      hostGitRuns(ws, marker),
      "the end-of-session check on recover(): the founder's git status runs nothing",
    ).toBe(false);
    expect(
      readFileSync(join(scratch.root, "state/quarantine/lost/files/HEAD"), "utf8"),
      "the HEAD is in the quarantine",
    ).toBe("ref: refs/heads/main\n");
    expect(registry.get("lost")?.check?.verdict, "the launch record holds the report").toBe("quarantined");
    expect(registry.get("lost")?.end?.reason).toBe("host-lost");
  });
});

/**
 * What the founder's shell sees of a session's leavings: the check skipped (before the session
 * ends: the positive control, every plant live), then after it: nothing runs, nothing hangs, no
 * setuid bit, a tree every path-based tool can name, and the next launch on the workspace works.
 */
function expectLeavingsHandled(r: Leavings): void {
  expect(r.planted, "the session planted everything").toContain("PLANTED");
  expect(r.before, "the check skipped: every plant is live on the host").toEqual({
    nestedRan: true,
    fifoHung: true,
    setuid: true,
    deepPath: "ENAMETOOLONG",
  });
  expect(r.verdict, JSON.stringify(r.done)).toBe("quarantined");
  const deep = `deep/${Array.from({ length: WALK_BOUNDS.depth }, () => "d").join("/")}`;
  expect(r.done.sort(), "what the check did, a name that is not UTF-8 among them").toEqual(
    [
      ["nested-repository", "bad\\xff/sub/.git", "moved"],
      ["setid-file", "bad\\xff/id-copy", "cleared-setid"],
      ["special-file", "fifo/HEAD", "moved"],
      ["too-deep", deep, "moved"],
    ].sort(),
  );
  expect(
    r.after,
    "after the check: git runs nothing and returns, no setuid bit, a path-based walk goes through",
  ).toEqual({
    nestedRan: false,
    fifoHung: false,
    setuid: false,
    deepPath: "",
  });
  expect(r.again, "the next launch on the same workspace works, and leaves it clean").toEqual({
    reply: "AGAIN",
    verdict: "clean",
  });
}

describe("a session's leavings the check once missed or choked on, through the shipped launcher", () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    w = await makeRuntimeWorld("ws-leavings");
  });
  afterAll(async () => {
    // rm -rf walks by descriptor: what is left past PATH_MAX cannot be removed by path.
    if (w !== undefined) spawnSync("rm", ["-rf", w.stateDir, w.data]);
    await w?.close();
  });

  itBwrap(
    `as the tests' own uid: a setuid file and a nested repository under a name that is not UTF-8, a fifo HEAD, a tree ${LEVELS} levels deep: handled, and the next launch works`,
    async () => expectLeavingsHandled(await leaveAndRelaunch(w, "leavings")),
    400_000,
  );

  itBwrap(
    "as an unprivileged uid (65534 under setpriv when the tests run as root): the same leavings, handled the same",
    () => {
      const r = runAsUser("live/support/workspace-leavings-as.ts", "mosaic-leavings", [], 400_000);
      let parsed: Leavings | null = null;
      try {
        parsed = JSON.parse(r.line) as Leavings;
      } catch {}
      expect(parsed, `no report from the run as ${userUid}: ${r.stderr}`).not.toBeNull();
      expect(parsed!.uid).toBe(userUid);
      expectLeavingsHandled(parsed!);
    },
    420_000,
  );
});
