// Issue 18, findings 3 and 4, live: the real launcher, the real runner as pid 1 of a real bwrap
// sandbox, the stand-in broker, and the fake adapter (each message's body runs in sh). Garbage on
// tools.sock leaves the runner answering with its claim held; a turn past an output cap fails
// naming the cap while the runner's memory stays bounded; what a turn leaves behind, setsid or not,
// is gone before the next turn. Each has a positive control that lifts the bound in the prepared
// plan's session.json on purpose and shows the attack get through.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { RunnerBounds } from "../src/core/runner/bounds.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { USER_UID, runAsUser, runsAsRoot, userUid } from "./support/as-user.ts";
import { ask, makeRuntimeWorld, waitClaimed, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../src/host/launcher.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import type { LaunchEnd, PreparedLaunch, Session } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { isAlive } from "../src/host/session-procs.ts";
import type { AsCase, AsObserved } from "./support/runner-bounds-as.ts";
import {
  LEFTOVERS_COUNT,
  LEFTOVERS_TURN,
  LIFTED,
  MiB,
  STDOUT_FLOOD,
  attackTurn,
  peakMiB,
  refusal,
  runnerPid,
  survivorMarker,
  type Attack,
} from "./support/runner-bounds-cases.ts";

const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));

let w: RuntimeWorld;
beforeAll(async () => {
  w = await makeRuntimeWorld("runner-bounds");
});
afterAll(async () => w?.close());

/** A fake-adapter launch, planned; `edit` changes its session.json bounds on purpose (a positive control). */
function prepared(name: string, edit: (b: RunnerBounds) => void = () => {}, timings = {}): PreparedLaunch {
  const p = prepareLaunch(
    w.request(w.instance("pi-coder", name), {
      timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 30, ...timings },
    }),
  );
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  const bounds = structuredClone(p.prepared.session.sessionFile.bounds);
  edit(bounds);
  return {
    ...p.prepared,
    session: { ...p.prepared.session, sessionFile: { ...p.prepared.session.sessionFile, bounds } },
  };
}

async function startAndClaim(p: PreparedLaunch): Promise<Session> {
  const s = await start(p);
  await waitClaimed(w, s, p.session.sessionFile.run);
  return s;
}

/** How the session ended within ms, or "still running". */
async function endWithin(s: Session, ms: number): Promise<LaunchEnd | "still running"> {
  return Promise.race([s.exited, new Promise<"still running">((r) => setTimeout(() => r("still running"), ms))]);
}

/** The reply to a message, or "no reply" after ms. */
async function replyWithin(instance: string, body: string, ms = 60_000): Promise<string> {
  try {
    return await ask(w, instance, body, "pm-bounds", ms);
  } catch {
    return "no reply";
  }
}

/** The session's tool socket, where the runner serves it. */
const toolSocket = (p: PreparedLaunch) => p.session.sessionFile.toolSocket.path;

/** A typed tool call from inside the session: one line to tools.sock, its answer printed. */
const callTool = (node: string, sock: string, tool: string, args: object) =>
  `"${node}" -e 'const c=require("net").connect(${JSON.stringify(sock)});c.on("connect",()=>c.write(JSON.stringify({id:1,tool:${JSON.stringify(tool)},args:${JSON.stringify(args)}})+"\\n"));c.on("data",d=>{process.stdout.write(String(d));c.end()})'`;

/** Runs the tool-socket attack as a turn of the session. */
async function attackToolSocket(p: PreparedLaunch): Promise<Attack> {
  const reply = await replyWithin(
    p.session.sessionFile.instance,
    attackTurn(p.facts.node.path, p.session.spec.workspace, toolSocket(p)),
  );
  expect(reply, "the attack turn reports (a runner that died answers nothing)").toMatch(/^\{"deep20000"/);
  return JSON.parse(reply) as Attack;
}

describe("the tool socket: garbage leaves the runner answering, its claim held (finding 4)", () => {
  it("blocked: the 20,000-deep request, a 64 MiB line and 200 connections each get their bound's answer; the runner lives, its memory bounded", async () => {
    const p = prepared("garbage");
    const s = await startAndClaim(p);
    try {
      const pid = runnerPid(s.pid);
      const before = peakMiB(pid);
      const got = await attackToolSocket(p);
      expect(refusal(got.deep20000), "the finding's 20,000-deep request: refused by the depth bound").toBe(
        "bad request: JSON nested deeper than 32 (the tool socket's depth bound)",
      );
      expect(refusal(got.deep1000), "a 1,000-deep request: refused by the depth bound").toBe(
        "bad request: JSON nested deeper than 32 (the tool socket's depth bound)",
      );
      expect(refusal(got.long), "a 64 MiB line: refused by the line bound").toBe(
        "bad request: a line over 1048576 bytes (the tool socket's lineBytes bound); the connection is closed",
      );
      expect(got.refused, "200 connections at once: those past the connections bound refused").toBe(200 - 32);
      expect(refusal(got.garbage), "bytes that are not JSON: an error answer").toBe("bad request: not JSON");
      expect(
        w.broker.records().filter((r) => r.run === "garbage" && JSON.stringify(r.args ?? "").includes("[[[[")),
        "no deep request reached the broker",
      ).toEqual([]);

      // The runner lives: pid 1 is the same process, a later turn is answered, the claim still holds.
      expect(isAlive(pid), "the runner (pid 1) is alive after the garbage").toBe(true);
      expect(await endWithin(s, 0), "the session did not end").toBe("still running");
      expect(await replyWithin("garbage", "echo alive after the garbage"), "a later turn is answered").toBe(
        "alive after the garbage",
      );
      const sent = await replyWithin(
        "garbage",
        callTool(p.facts.node.path, toolSocket(p), "send_message", { to: "pm-after", body: "after the garbage" }),
      );
      expect(JSON.parse(sent), "a typed tool call still goes through").toMatchObject({ id: 1, ok: true });
      const rec = w.broker
        .records()
        .find(
          (r) =>
            r.run === "garbage" && r.verb === "message.send" && JSON.stringify(r.args).includes("after the garbage"),
        );
      expect([rec?.capValid, rec?.outcome], "with the session's claim and capability intact").toEqual([true, "ok"]);
      expect(
        w.broker.records().some((r) => r.run === "garbage" && r.verb === "role.release"),
        "the role was never released",
      ).toBe(false);
      const grew = peakMiB(pid) - before;
      process.stderr.write(
        `runner-bounds: tool-socket garbage, bounds held: runner VmHWM ${before.toFixed(1)} -> ${peakMiB(pid).toFixed(1)} MiB\n`,
      );
      expect(
        grew,
        `the runner's peak memory grew by ${grew.toFixed(1)} MiB for a 64 MiB line: the line bound held it`,
      ).toBeLessThan(64);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("control: with the bounds lifted in session.json on purpose, the deep request reaches the broker, the runner holds the 64 MiB line, and 200 connections are all taken", async () => {
    const p = prepared("garbage-control", (b) => {
      b.toolSocket.depth = LIFTED;
      b.toolSocket.lineBytes = LIFTED;
      b.toolSocket.argsBytes = LIFTED;
      b.toolSocket.connections = LIFTED;
    });
    const s = await startAndClaim(p);
    try {
      const pid = runnerPid(s.pid);
      const before = peakMiB(pid);
      const got = await attackToolSocket(p);
      expect(
        w.broker
          .records()
          .some(
            (r) =>
              r.run === "garbage-control" &&
              r.verb === "message.send" &&
              Array.isArray((r.args as { body?: unknown } | null)?.body),
          ),
        "without the depth bound the 1,000-deep request reached the broker",
      ).toBe(true);
      expect(got.refused, "without the connections bound all 200 connections were taken").toBe(0);
      const grew = peakMiB(pid) - before;
      process.stderr.write(
        `runner-bounds: tool-socket garbage, bounds lifted: runner VmHWM ${before.toFixed(1)} -> ${peakMiB(pid).toFixed(1)} MiB\n`,
      );
      expect(
        grew,
        `without the line bound the runner's peak memory grew by ${grew.toFixed(1)} MiB: it held the line`,
      ).toBeGreaterThan(48);
      // The catch behind the bound still holds: the 20,000-deep request is a call not made, not a crash.
      expect(
        refusal(got.deep20000),
        "the 20,000-deep args overflow the runner's own JSON.stringify, and the connection's catch answers",
      ).toBe("refused: the runner could not make the call");
      expect(isAlive(pid), "the catch behind the bounds keeps the runner alive").toBe(true);
    } finally {
      await s.stop();
    }
  }, 120_000);
});

describe("a turn's output is capped in the runner (finding 3)", () => {
  it("blocked: a turn printing 640 MiB to stdout fails naming the stdout cap, the runner's memory stays bounded, and it answers the next turn", async () => {
    const p = prepared("stdout-flood");
    const s = await startAndClaim(p);
    try {
      const pid = runnerPid(s.pid);
      const cap = p.session.sessionFile.bounds.turn.stdoutBytes;
      const reply = await replyWithin("stdout-flood", STDOUT_FLOOD);
      expect(reply, "the turn fails naming the stream and the cap").toBe(
        `The turn failed: its stdout passed the ${cap}-byte cap (session.json bounds.turn.stdoutBytes); the runner stopped reading it and killed the turn's processes`,
      );
      const peak = peakMiB(pid);
      process.stderr.write(`runner-bounds: 640 MiB on stdout, cap ${cap} bytes: runner VmHWM ${peak.toFixed(1)} MiB\n`);
      expect(
        peak,
        `the runner's peak memory (VmHWM ${peak.toFixed(1)} MiB) stays far below the 640 MiB printed`,
      ).toBeLessThan(200);
      expect(await replyWithin("stdout-flood", "echo next"), "the runner answers the next turn").toBe("next");
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("control: with the stdout cap lifted in session.json on purpose, the same turn kills the runner (pid 1)", async () => {
    const p = prepared("stdout-control", (b) => {
      b.turn.stdoutBytes = LIFTED;
    });
    const s = await startAndClaim(p);
    try {
      w.broker.deliver("stdout-control", { from: "pm-bounds", body: STDOUT_FLOOD });
      const end = await endWithin(s, 90_000);
      expect(end, "without the cap the runner dies holding the turn's stdout").not.toBe("still running");
      expect(s.stderr(), "of V8's string limit").toMatch(
        /Invalid string length|ERR_STRING_TOO_LONG|heap out of memory/,
      );
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("blocked: a turn writing 64 MiB to stderr fails naming the stderr cap, and turns/NNNN.stderr holds exactly the cap", async () => {
    const p = prepared("stderr-flood");
    const s = await startAndClaim(p);
    try {
      const cap = p.session.sessionFile.bounds.turn.stderrBytes;
      const reply = await replyWithin("stderr-flood", "head -c 67108864 /dev/zero >&2; echo done");
      expect(reply, "the turn fails naming the stream and the cap").toBe(
        `The turn failed: its stderr passed the ${cap}-byte cap (session.json bounds.turn.stderrBytes); the runner stopped reading it and killed the turn's processes`,
      );
      expect(statSync(join(s.runDir, "turns/0001.stderr")).size, "the stderr file stops at the cap").toBe(cap);
      expect(await replyWithin("stderr-flood", "echo ok >&2; echo next"), "the runner answers the next turn").toBe(
        "next",
      );
      expect(readFileSync(join(s.runDir, "turns/0002.stderr"), "utf8"), "and records its stderr").toBe("ok\n");
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("control: with the stderr cap lifted in session.json on purpose, all 64 MiB land on the host's disk", async () => {
    const p = prepared("stderr-control", (b) => {
      b.turn.stderrBytes = LIFTED;
    });
    const s = await startAndClaim(p);
    try {
      expect(await replyWithin("stderr-control", "head -c 67108864 /dev/zero >&2; echo done")).toBe("done");
      expect(statSync(join(s.runDir, "turns/0001.stderr")).size, "without the cap the whole stream is on disk").toBe(
        64 * MiB,
      );
    } finally {
      await s.stop();
    }
  }, 120_000);
});

describe("a reply the broker cannot take", () => {
  it("600 KB of control characters (under the stdout cap, over the broker's 1 MiB line once JSON-escaped): the sender hears the turn failed and why", async () => {
    const s = await startAndClaim(prepared("undeliverable"));
    try {
      const reply = await replyWithin("undeliverable", "head -c 600000 /dev/zero | tr '\\0' '\\001'");
      expect(reply, "a short failure reply follows the one the broker refused").toMatch(
        /^The turn failed: its reply was not delivered \(.*longer than 1048576 bytes/,
      );
      expect(await replyWithin("undeliverable", "echo next"), "the runner answers the next turn").toBe("next");
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe("what a turn leaves behind is killed at its end (finding 3)", () => {
  /** Turn 1 leaves a setsid sleep and a setsid writer of a marker; turn 2 counts the sleep; the marker's fate after. */
  async function leftovers(p: PreparedLaunch): Promise<{ first: string; alive: string; marker: boolean }> {
    const s = await startAndClaim(p);
    const name = p.session.sessionFile.instance;
    const marker = survivorMarker(p.session.spec.workspace);
    try {
      // Turn 1 waits until its setsid sleep is in a session of its own, so the kill at its end is what is tested.
      const first = await replyWithin(name, LEFTOVERS_TURN);
      // Zombies (killed, not reaped by the runner) run nothing: only live processes count.
      const alive = await replyWithin(name, LEFTOVERS_COUNT);
      await new Promise((r) => setTimeout(r, 3000));
      return { first, alive, marker: existsSync(marker) };
    } finally {
      await s.stop();
    }
  }

  it("blocked: a setsid sleep left by turn 1 is gone before turn 2, and a setsid writer never writes its marker", async () => {
    const got = await leftovers(prepared("leftovers"));
    expect(got.first, "turn 1's sleep left its turn's session").toBe("started, 1 in a session of its own");
    expect(got.alive, "no setsid sleep of turn 1 is alive in turn 2").toBe("0");
    expect(got.marker, "the setsid writer was killed before it wrote").toBe(false);
  }, 60_000);

  it("control: with killNamespace off in session.json on purpose, both survive their turn", async () => {
    const got = await leftovers(
      prepared("leftovers-control", (b) => {
        b.turn.killNamespace = false;
      }),
    );
    expect(got.first, "turn 1's sleep left its turn's session").toBe("started, 1 in a session of its own");
    expect(got.alive, "without the namespace kill turn 1's setsid sleep runs into turn 2").toBe("1");
    expect(got.marker, "and the setsid writer wrote its marker into the workspace").toBe(true);
  }, 60_000);

  it("the group kill alone (killNamespace off): a hung turn's own group is killed at the wall clock", async () => {
    const p = prepared(
      "group-alone",
      (b) => {
        b.turn.killNamespace = false;
      },
      { turnTimeoutSeconds: 1 },
    );
    const s = await startAndClaim(p);
    try {
      const reply = await replyWithin("group-alone", "sleep 60 & sleep 60 & sleep 60; echo never", 15_000);
      expect(reply).toMatch(/^The turn failed: the turn ran past its 1 s wall clock/);
      const left = await replyWithin("group-alone", "ps -eo stat=,args= | grep -v '^Z' | grep -c '[s]leep 60' || true");
      expect(left, "no sleep of the hung turn's group is left").toBe("0");
    } finally {
      await s.stop();
    }
  }, 60_000);
});

// The same attacks with the launcher, the broker and the session all of an unprivileged uid: 65534
// under setpriv when the tests run as root (CI), else the tests' own uid.

/** One case run by live/support/runner-bounds-as.ts as the unprivileged uid, in a world it owns. */
function runCaseAsUser(c: AsCase): AsObserved {
  const r = runAsUser("live/support/runner-bounds-as.ts", "mosaic-runner-bounds", [c], 150_000);
  expect(r.line, `the ${c} case reports as uid ${userUid}: ${r.stderr.slice(-800)}`).toMatch(/^\{"uid":/);
  const got = JSON.parse(r.line) as AsObserved;
  expect(got.uid, "the launcher and the session ran as the unprivileged uid").toBe(userUid);
  return got;
}

describe(`as an unprivileged uid (${runsAsRoot ? `${USER_UID} under setpriv` : "the tests' own"}): the same attacks, blocked and lifted`, () => {
  it("tool-socket garbage: each bound answers, the runner lives with its claim, its memory bounded; lifted, the attack gets through", async () => {
    const blocked = runCaseAsUser("garbage");
    const got = JSON.parse(blocked.replies[0]!) as Attack;
    expect([refusal(got.deep20000), refusal(got.long), got.refused], "each garbage gets its bound's answer").toEqual([
      "bad request: JSON nested deeper than 32 (the tool socket's depth bound)",
      "bad request: a line over 1048576 bytes (the tool socket's lineBytes bound); the connection is closed",
      200 - 32,
    ]);
    expect(
      [blocked.replies[1], blocked.ended, blocked.released, blocked.toolCallOk, blocked.deepReachedBroker],
      "the runner answers, its claim holds, no deep request reached the broker",
    ).toEqual(["alive after the garbage", null, false, true, false]);
    expect(blocked.peak.after - blocked.peak.before, "the line bound held the runner's memory").toBeLessThan(16);

    const lifted = runCaseAsUser("garbage-control");
    const control = JSON.parse(lifted.replies[0]!) as Attack;
    expect(
      [lifted.deepReachedBroker, control.refused],
      "lifted: the deep request reaches the broker and every connection is taken",
    ).toEqual([true, 0]);
    expect(lifted.peak.after - lifted.peak.before, "lifted: the runner holds the long line").toBeGreaterThan(48);
  }, 320_000);

  it("640 MiB on stdout: the turn fails naming the cap with the runner's memory bounded; lifted, the runner dies", async () => {
    const blocked = runCaseAsUser("stdout");
    expect(blocked.replies, "the turn fails naming the cap; the next is answered").toEqual([
      `The turn failed: its stdout passed the ${blocked.bounds.turn.stdoutBytes}-byte cap (session.json bounds.turn.stdoutBytes); the runner stopped reading it and killed the turn's processes`,
      "next",
    ]);
    expect(blocked.peak.after, "the runner's peak memory stays far below the 640 MiB printed").toBeLessThan(200);
    const lifted = runCaseAsUser("stdout-control");
    expect(lifted.ended, "lifted: the runner (pid 1) dies holding the stdout").not.toBeNull();
    expect(lifted.stderr).toMatch(/Invalid string length|ERR_STRING_TOO_LONG|heap out of memory/);
  }, 320_000);

  it("a setsid leftover of turn 1 is gone before turn 2; with killNamespace off it survives and writes its marker", async () => {
    const blocked = runCaseAsUser("leftovers");
    expect(blocked.replies, "turn 1's sleep left its session, and is gone in turn 2").toEqual([
      "started, 1 in a session of its own",
      "0",
    ]);
    expect(blocked.survivor, "the setsid writer never wrote").toBe(false);
    const lifted = runCaseAsUser("leftovers-control");
    expect(lifted.replies, "without the namespace kill turn 1's sleep runs into turn 2").toEqual([
      "started, 1 in a session of its own",
      "1",
    ]);
    expect(lifted.survivor, "and the setsid writer wrote its marker").toBe(true);
  }, 320_000);
});
