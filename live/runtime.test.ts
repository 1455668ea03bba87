import { chmodSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Bind } from "../src/core/sandbox/types.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import {
  ask,
  launchAndClaim,
  makeRuntimeWorld,
  waitClaimed,
  type RuntimeWorld,
} from "../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../src/host/launcher.ts";
import { launchWithBinds } from "../src/conformance/controls/launch.ts";
import { makeCanary } from "../src/conformance/traps/canary.ts";
import { exposedBind, withBindsBeforeLast } from "../src/conformance/controls/binds.ts";
import { withoutParentDeathSignal } from "../src/conformance/controls/argv.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { RUNNER_ENTRY } from "../src/core/session/plan-session.ts";
import type { LaunchEnd, PreparedLaunch, Session } from "../src/host/launcher.ts";
import { spawn, spawnSync } from "node:child_process";
import { LaunchRegistry } from "../src/host/launch-registry.ts";
import { recover } from "../src/host/recover.ts";
import { childrenOf, cmdlineOf, findSessionBwraps, isAlive } from "../src/host/session-procs.ts";
import { callBroker } from "../src/host/runner/broker-client.ts";
import { randomUUID } from "node:crypto";
import { settleWithin } from "../src/conformance/worlds/settle.ts";
import { scriptOf } from "../src/conformance/stand-ins/model-script/format.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import type { EgressRecord } from "../src/core/network/egress.ts";
import { egressLogPath } from "../src/host/model-proxy.ts";

// The session runtime (issue 9) live: the real launcher, the real runner as pid 1 of a real bwrap
// sandbox planned by planSession(), the stand-in broker on real sockets, and the fake adapter
// (each message's body runs in sh). Every assertion reads an effect: the reply, the broker's
// record, the host's files, the processes left.
const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));

let w: RuntimeWorld;

/** The promise's value, or "still waiting" after ms: a hang becomes an assertion, not a test timeout. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | "still waiting"> {
  return Promise.race([p, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms))]);
}

/** How the session ended, within ms; a runner still running then fails the test by assertion and is stopped. */
async function endOf(s: Session, ms = 10_000): Promise<LaunchEnd> {
  const end = await within(s.exited, ms);
  if (end === "still waiting") await s.stop();
  expect(end, `the runner exits on its own within ${ms} ms`).not.toBe("still waiting");
  return end as LaunchEnd;
}

/** The reply to a message, or "no reply" after ms: a turn that never answers fails by assertion. */
async function replyWithin(instance: string, body: string, ms: number): Promise<string> {
  try {
    return await ask(w, instance, body, "pm-test", ms);
  } catch {
    return "no reply";
  }
}
beforeAll(async () => {
  w = await makeRuntimeWorld("runtime");
});
afterAll(async () => w?.close());

function prepared(name: string, example = "pi-coder", extra = {}): PreparedLaunch {
  const p = prepareLaunch(w.request(w.instance(example, name), extra));
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  return p.prepared;
}

// The runner has read its session.json and waits on stdin for its capability line: it runs the
// runner's entry, and its stdin is in libuv's non-blocking mode, set only once it reads stdin.
function runnerAwaitsCapability(pid: number | undefined): boolean {
  if (pid === undefined || pid === 0) return false;
  try {
    const running = cmdlineOf(pid)?.some((a) => a.endsWith(RUNNER_ENTRY)) ?? false;
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/0`, "utf8"))?.[1];
    return running && flags !== undefined && (Number.parseInt(flags, 8) & constants.O_NONBLOCK) !== 0;
  } catch {
    return false;
  }
}

/** One check of a confined shell's table: prints `name yes` when the command succeeds, `name no` when not. */
const t = (name: string, cmd: string) =>
  `if ( ${cmd} ) >/dev/null 2>&1; then echo "${name} yes"; else echo "${name} no"; fi`;

/** Seed 002's table of 20 checks, each printing `name yes|no`. */
function seedChecks(p: PreparedLaunch): string {
  const run = p.session.spec.runDir;
  const ws = p.session.spec.workspace;
  return [
    t("read-stand-in-env", `cat "${w.stand.files.secretsEnv}"`),
    t("read-mosaic", `cat "${w.stand.files.mosaicState}"`),
    t("read-other-workspace", `cat "${w.stand.files.otherWorkspace}"`),
    t("read-other-run", `cat "${w.data}/runs/other-run/session.json"`),
    t("read-bus-store", `cat "${w.data}/bus/store.json"`),
    t("read-checkout-readme", `cat "${REPO_ROOT}/README.md"`),
    t("read-checkout-source", `cat "${REPO_ROOT}/package.json"`),
    t("write-root", "echo x > /planted"),
    t("write-beside-workspace", `echo x > "${w.data}/workspaces/acme/planted"`),
    t("write-data-root", `echo x > "${w.data}/planted"`),
    t("write-runner-file", `echo x >> "${REPO_ROOT}/src/host/runner/main.ts"`),
    t("write-bundle", `echo x > "${run}/bundle/policy.json"`),
    t("write-session-json", `echo x > "${run}/session.json"`),
    t("home-is-run-home", `test "$HOME" = "${run}/home" && test -z "$(ls -A "$HOME")"`),
    t("tmpdir-is-tmp", 'test "$TMPDIR" = /tmp'),
    t("data-root-only-this-run", `test "$(ls "${w.data}/runs")" = "${p.session.sessionFile.run}"`),
    t("workspace-read-write", `echo w > "${ws}/made" && test "$(cat "${ws}/made")" = w`),
    t("run-dir-read-write", `echo r > "${run}/turns/made" && test "$(cat "${run}/turns/made")" = r`),
    t("tmp-read-write", 'echo t > /tmp/made && test "$(cat /tmp/made)" = t'),
    t("node-runs", `"${p.facts.node.path}" -e 0`),
  ].join("\n");
}

const CONFINED: Record<string, "yes" | "no"> = {
  "read-stand-in-env": "no",
  "read-mosaic": "no",
  "read-other-workspace": "no",
  "read-other-run": "no",
  "read-bus-store": "no",
  "read-checkout-readme": "no",
  "read-checkout-source": "no",
  "write-root": "no",
  "write-beside-workspace": "no",
  "write-data-root": "no",
  "write-runner-file": "no",
  "write-bundle": "no",
  "write-session-json": "no",
  "home-is-run-home": "yes",
  "tmpdir-is-tmp": "yes",
  "data-root-only-this-run": "yes",
  "workspace-read-write": "yes",
  "run-dir-read-write": "yes",
  "tmp-read-write": "yes",
  "node-runs": "yes",
};

const answers = (reply: string) =>
  Object.fromEntries([...reply.matchAll(/^([a-z-]+) (yes|no)$/gm)].map((m) => [m[1]!, m[2]!]));
const diff = (a: Record<string, string>, b: Record<string, string>) =>
  Object.fromEntries(Object.entries(b).filter(([k, v]) => a[k] !== v));

async function seedTable(p: PreparedLaunch): Promise<Record<string, string>> {
  const s = await start(p);
  try {
    await waitClaimed(w, s, p.session.sessionFile.run);
    return answers(await ask(w, p.session.sessionFile.instance, seedChecks(p)));
  } finally {
    await s.stop();
  }
}

describe("the confined shell through the real runner (seed 002's 20 checks)", () => {
  it("a real session answers the table: 13 refused, 7 allowed", async () => {
    const got = await seedTable(prepared("seed-table"));
    expect(Object.keys(got).length, "all 20 checks answered").toBe(20);
    expect(got).toEqual(CONFINED);
    expect(existsSync(join(w.data, "workspaces/acme/planted")), "nothing landed beside the workspace").toBe(false);
  }, 60_000);

  // The host's /dev would hand the session its devices and a shared /dev/shm; the host's /proc, every
  // process's environ and cmdline. The session's own show neither.
  it("its /dev and /proc are its own: a file put in /dev/shm never reaches the host's, pid 1 is the runner, and no host pid is there", async () => {
    // runner-environ-readable: pid 1 is not dumpable, so even its own children cannot read its environ.
    const p = prepared("seed-devproc");
    const marker = `mosaic-devshm-${randomUUID()}`;
    const s = await start(p);
    try {
      await waitClaimed(w, s, p.session.sessionFile.run);
      const got = answers(
        await ask(
          w,
          p.session.sessionFile.instance,
          [
            t("dev-shm-write", `echo x > /dev/shm/${marker}`),
            t("runner-is-pid-one", `tr '\\0' ' ' < /proc/1/cmdline | grep -q "${RUNNER_ENTRY}"`),
            t("host-pid-seen", `test -e /proc/${process.pid}`),
            t("runner-environ-readable", "cat /proc/1/environ"),
          ].join("\n"),
        ),
      );
      expect(got).toEqual({
        "dev-shm-write": "yes",
        "runner-is-pid-one": "yes",
        "host-pid-seen": "no",
        "runner-environ-readable": "no",
      });
      expect(existsSync(`/dev/shm/${marker}`), "the session's /dev/shm is not the host's").toBe(false);
    } finally {
      await s.stop();
      rmSync(`/dev/shm/${marker}`, { force: true });
    }
  }, 60_000);

  it("breaking it on purpose: with the two stand-ins bound in, exactly their two checks fail", async () => {
    const founderFiles = (t: Bind[]): Bind[] =>
      withBindsBeforeLast(
        t,
        [w.stand.files.secretsEnv, w.stand.files.mosaicState].map((f) => exposedBind(f)),
      );
    const got = await seedTable(launchWithBinds(prepared("seed-standins"), founderFiles));
    expect(diff(CONFINED, got)).toEqual({ "read-stand-in-env": "yes", "read-mosaic": "yes" });
  }, 60_000);

  it("breaking it on purpose: without the workspace bind, exactly the workspace check fails", async () => {
    const p = prepared("seed-nows");
    const got = await seedTable(
      launchWithBinds(p, (t) => t.filter((b) => b.row !== "workspace" && b.row !== "protected")),
    );
    expect(diff(CONFINED, got)).toEqual({ "workspace-read-write": "no" });
  }, 60_000);
});

describe("the runner's exits, each with the broker's record", () => {
  const claims = (run: string) => w.broker.records().filter((r) => r.run === run && r.verb === "role.claim");
  const released = (run: string) =>
    w.broker.records().some((r) => r.run === run && r.verb === "role.release" && r.outcome === "ok");

  it("0: SIGTERM after the claim releases the role and exits 0 (stopped)", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "exit-0")));
    const end = await within(s.stop(), 8000);
    expect(end, "the runner stopped on SIGTERM").not.toBe("still waiting");
    if (end === "still waiting") return;
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 0 }, "stopped"]);
    expect(released("exit-0"), "the role was released").toBe(true);
  }, 30_000);

  it("2: a bad session.json exits 2 (failed), with no claim", async () => {
    const p = prepared("exit-2");
    const bad = { ...p, session: { ...p.session, sessionFile: { ...p.session.sessionFile, pollMs: 0 } } };
    const end = await endOf(await start(bad));
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 2 }, "failed"]);
    expect(end.stderr).toMatch(/session\.json: pollMs: a positive integer/);
    expect(claims("exit-2"), "never claimed").toEqual([]);
  }, 30_000);

  it("20: a founder credential in the runner's environment exits 20 before the claim", async () => {
    const p = prepared("exit-20");
    const end = await endOf(
      await start({
        ...p,
        session: { ...p.session, env: { ...p.session.env, GITEA_TOKEN: "stand-in-founder-token" } },
      }),
    );
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 20 }, "founder-credentials"]);
    expect(claims("exit-20"), "never claimed").toEqual([]);
  }, 30_000);

  it("21: a refused claim exits 21 (claim-refused)", async () => {
    const inst = w.instance("pi-coder", "exit-21", { instance: "refused-one" });
    w.broker.setPolicy("refused-one", { claim: "refuse" });
    const r = prepareLaunch(w.request(inst));
    if (r.kind !== "ready") throw new Error(r.message);
    const end = await endOf(await start(r.prepared));
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 21 }, "claim-refused"]);
    expect(claims("exit-21").map((c) => [c.outcome, c.code])).toEqual([["error", "refused"]]);
  }, 30_000);

  it("22: the run ended by the bus (its capability voided) exits 22 (session-invalid) at the next poll", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "exit-22", { instance: "voided-one" })));
    w.broker.endRun("exit-22");
    const end = await endOf(s);
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 22 }, "session-invalid"]);
    expect(
      w.broker
        .records()
        .filter((r) => r.run === "exit-22" && r.verb === "message.read")
        .at(-1)?.code,
      "the poll that stopped it",
    ).toBe("unauthenticated");
  }, 30_000);

  it("22: a revoked claim exits 22 too", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "exit-22b", { instance: "revoked-one" })));
    expect(w.broker.revokeClaim("revoked-one")).toBe(true);
    const end = await endOf(s);
    expect([end.end, end.reason]).toEqual([{ kind: "code", code: 22 }, "session-invalid"]);
  }, 30_000);

  it("23: a broker that never answers the claim exits 23 (broker-unreachable)", async () => {
    w.broker.setUnresponsive(true);
    try {
      const r = prepareLaunch(
        w.request(w.instance("pi-coder", "exit-23", { instance: "deaf-one" }), {
          timings: { pollMs: 100, brokerRetries: 3, brokerTimeoutSeconds: 1, turnTimeoutSeconds: 5 },
        }),
      );
      if (r.kind !== "ready") throw new Error(r.message);
      const end = await endOf(await start(r.prepared));
      expect([end.end, end.reason]).toEqual([{ kind: "code", code: 23 }, "broker-unreachable"]);
      expect(
        claims("exit-23").map((c) => c.outcome),
        "the claim went unanswered",
      ).toEqual(["unanswered"]);
    } finally {
      w.broker.setUnresponsive(false);
    }
  }, 30_000);

  it("23: brokerRetries failed polls after the claim exit 23, counted, not retried forever", async () => {
    const s = await launchAndClaim(
      w,
      w.request(w.instance("pi-coder", "exit-23b", { instance: "deaf-two" }), {
        timings: { pollMs: 50, brokerRetries: 3, brokerTimeoutSeconds: 1, turnTimeoutSeconds: 5 },
      }),
    );
    w.broker.setUnresponsive(true);
    try {
      // endOf() stops a runner that polls on, so a mutant that never gives up leaves nothing running.
      const end = await endOf(s, 10_000);
      expect([end.end, end.reason]).toEqual([{ kind: "code", code: 23 }, "broker-unreachable"]);
      expect(end.stderr).toMatch(/failed 3 polls in a row/);
    } finally {
      w.broker.setUnresponsive(false);
    }
  }, 30_000);
});

describe("turns", () => {
  it("a hanging turn is killed at the wall clock with its whole process group, and the sender hears why", async () => {
    const s = await launchAndClaim(
      w,
      w.request(w.instance("pi-coder", "hang"), {
        timings: { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 1 },
      }),
    );
    try {
      const reply = await replyWithin("hang", "sleep 60 & sleep 60 & sleep 60; echo never", 10_000);
      expect(reply).toMatch(
        /^The turn failed: the turn ran past its 1 s wall clock and was killed with its process group/,
      );
      // The runner, as pid 1, does not reap orphans (seed 000): killed ones stay as zombies, which run nothing.
      const left = await ask(w, "hang", "ps -eo stat=,comm= | grep -v '^Z' | tr '\\n' ' '");
      expect(left, "no sleep of the hung turn is left").not.toMatch(/sleep/);
    } finally {
      await s.stop();
    }
  }, 30_000);

  it("a turn's stdout is the RESULT; a failing one says why; an incoming RESULT gets no reply", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "turns")));
    try {
      expect(await ask(w, "turns", "echo hello from the turn")).toBe("hello from the turn");
      expect(await ask(w, "turns", "echo oops >&2; exit 3")).toBe("The turn failed: the harness exited 3");
      const stderrs = readdirSync(join(s.runDir, "turns"))
        .filter((n) => n.endsWith(".stderr"))
        .sort();
      expect(stderrs).toEqual(["0001.stderr", "0002.stderr"]);
      const before = w.broker.sentTo("pm-result").length;
      w.broker.deliver("turns", { from: "pm-result", body: "a result for you", kind: "result" });
      await ask(w, "turns", "echo after");
      expect(w.broker.sentTo("pm-result").length, "no reply to an incoming RESULT").toBe(before);
    } finally {
      await s.stop();
    }
  }, 30_000);

  it("SIGTERM during a turn kills the turn and releases the role", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "term-turn")));
    w.broker.deliver("term-turn", { from: "pm-term", body: "sleep 30" });
    for (
      let i = 0;
      i < 100 &&
      !w.broker
        .records()
        .some((r) => r.run === "term-turn" && r.verb === "message.read" && JSON.stringify(r).includes("sleep"));
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    const end = await s.stop();
    expect(end.reason).toBe("stopped");
    expect(
      w.broker.records().some((r) => r.run === "term-turn" && r.verb === "role.release" && r.outcome === "ok"),
      "released",
    ).toBe(true);
  }, 30_000);
});

describe("typed tools through tools.sock", () => {
  const callTool = (tool: string, args: object) =>
    `node -e 'const c=require("net").connect(process.env.SOCK);c.on("connect",()=>c.write(JSON.stringify({id:1,tool:${JSON.stringify(tool)},args:${JSON.stringify(args)}})+"\\n"));c.on("data",d=>{process.stdout.write(String(d));c.end()})'`;

  it("a call reaches the broker with the session's capability; a tool not in tools.json is refused; a forged cap has no effect", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "tools", { instance: "tooler" })));
    try {
      const sock = join(s.runDir, "sock/tools.sock");
      const sent = await ask(
        w,
        "tooler",
        `SOCK=${sock} ${callTool("send_message", { to: "pm-x", body: "from a typed tool" })}`,
      );
      expect(JSON.parse(sent)).toMatchObject({ id: 1, ok: true });
      const rec = w.broker
        .records()
        .find(
          (r) => r.verb === "message.send" && r.run === "tools" && JSON.stringify(r.args).includes("from a typed tool"),
        );
      expect(rec, "the broker got the call").toBeDefined();
      expect([rec!.capValid, rec!.instance], "with the session's own capability").toEqual([true, "tooler"]);
      expect(w.broker.sentTo("pm-x").map((m) => m.body)).toContain("from a typed tool");

      const refused = await ask(w, "tooler", `SOCK=${sock} ${callTool("launch", { instance: "x", message: "y" })}`);
      expect(JSON.parse(refused)).toMatchObject({
        ok: false,
        error: "refused: launch is not one of this session's typed tools",
      });

      const forged = await ask(
        w,
        "tooler",
        `node -e 'const c=require("net").connect(${JSON.stringify(w.broker.brokerSocket)});c.on("connect",()=>c.write(JSON.stringify({id:9,cap:"f".repeat(64),verb:"message.send",args:{to:"pm-x",body:"forged"}})+"\\n"));c.on("data",d=>{process.stdout.write(String(d));c.end()})'`,
      );
      expect(JSON.parse(forged)).toMatchObject({ ok: false, error: { code: "unauthenticated" } });
      expect(
        w.broker.sentTo("pm-x").map((m) => m.body),
        "the forged call had no effect",
      ).not.toContain("forged");
      const mode = await ask(w, "tooler", `stat -c %a ${sock}`);
      expect(mode, "tools.sock is 0600").toBe("600");
    } finally {
      await s.stop();
    }
  }, 30_000);
});

describe("the model port: the runner forwards it, the launcher's proxy adds the key", () => {
  const fetchAt = (method: string, path: string) =>
    `node -e 'fetch("http://127.0.0.1:8787${path}",{method:"${method}",headers:{"x-api-key":"a-key-the-session-holds","content-type":"application/json"},body:${method === "GET" ? "undefined" : JSON.stringify(JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 8, stream: true, messages: [{ role: "user", content: "hi" }] }))}}).then(r=>console.log("${method} ${path}",r.status),e=>console.log("${method} ${path} NO-MODEL-PORT",e.cause?.code??e.message))'`;
  const canaryScan = `p=stand-in-real; p="$p-key-"; echo ENV-CANARY $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -- "$p")`;

  it("model-only: a model call goes up with the host's key, another path is refused and logged, and no process inside holds the key", async () => {
    const api = await startScriptedApi({ script: scriptOf([{ text: "model-answer" }]) });
    const canary = makeCanary("stand-in-real-key");
    const s = await launchAndClaim(
      w,
      w.request(w.instance("pi-coder", "model-port", { instance: "modeler" }), {
        modelUpstream: api.url,
        hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: canary },
      }),
    );
    // Where the host keeps the log, spelled out here rather than asked of egressLogPath(): the
    // test must not take the location from the code under test.
    const hostLog = join(w.stateDir, "egress", "model-port.jsonl");
    const forge = `(echo '{"outcome":"allowed","forged":true}' >> "${hostLog}") 2>/dev/null && echo "EGRESS-WRITE yes" || echo "EGRESS-WRITE no"`;
    try {
      const reply = await ask(
        w,
        "modeler",
        [fetchAt("POST", "/v1/messages?beta=true"), fetchAt("GET", "/v1/models"), canaryScan, forge].join("; "),
      );
      expect(reply, "the session cannot append to the host's egress log").toContain("EGRESS-WRITE no");
      expect(reply).toContain("POST /v1/messages?beta=true 200");
      expect(reply).toContain("GET /v1/models 403");
      expect(reply, "no process inside holds the host's key").toContain("ENV-CANARY 0");
      expect(
        api.requests().map((r) => `${r.method} ${r.url}`),
        "only the model call reached upstream",
      ).toEqual(["POST /v1/messages?beta=true"]);
      expect(api.credentialSeen("x-api-key", canary), "with the host's key").toBe(true);
      expect(api.credentialSeen("x-api-key", "a-key-the-session-holds"), "never the session's").toBe(false);
      expect(existsSync(hostLog), `the log is the host's, at ${hostLog}`).toBe(true);
      expect(egressLogPath(w.stateDir, "model-port")).toBe(hostLog);
      expect(hostLog.startsWith(`${s.runDir}/`), "outside the run directory, which the session writes").toBe(false);
      const log = readFileSync(hostLog, "utf8");
      const records = log
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as EgressRecord);
      expect(records.map((r) => `${r.outcome} ${r.method} ${r.path} ${r.status}`)).toEqual([
        "allowed POST /v1/messages 200",
        "refused GET /v1/models 403",
      ]);
      expect(log).not.toContain(canary);
      expect(log, "no line the session wrote").not.toContain("forged");
      expect(existsSync(join(s.runDir, "egress.jsonl")), "the log is the host's, not in the run directory").toBe(false);
    } finally {
      await s.stop();
      await api.stop();
    }
  }, 30_000);
  it("control: with the key put in the turn's environment on purpose, the same scan finds it", async () => {
    const canary = makeCanary("stand-in-real-key");
    const p = prepared("model-port-open", "pi-coder", { hostEnv: { ...w.hostEnv, ANTHROPIC_API_KEY: canary } });
    const sf = p.session.sessionFile;
    const s = await start({
      ...p,
      session: {
        ...p.session,
        sessionFile: { ...sf, adapter: { ...sf.adapter, env: { ...sf.adapter.env, ANTHROPIC_API_KEY: canary } } },
      },
    });
    try {
      await waitClaimed(w, s, p.session.sessionFile.run);
      expect(await ask(w, p.session.sessionFile.instance, canaryScan)).toMatch(/^ENV-CANARY [1-9]/);
    } finally {
      await s.stop();
    }
  }, 30_000);
  for (const example of ["pi-coder", "claude-coder"] as const) {
    it(`${example}: a real harness turn with a tool call, through the runner, in the netns, with the model behind the proxy`, async () => {
      const api = await startScriptedApi({
        script: scriptOf([
          { tool_use: { name: example === "pi-coder" ? "bash" : "Bash", input: { command: "echo tool-ran-inside" } } },
          { text: "turn-finished-through-runner" },
        ]),
      });
      const canary = makeCanary("stand-in-real-key");
      const name = `real-${example}`;
      const hostEnv = {
        ...w.hostEnv,
        ANTHROPIC_API_KEY: canary,
        MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude"),
      };
      const s = await launchAndClaim(
        w,
        w.request(w.instance(example, name, { instance: name }), {
          adapter: { kind: "harness" },
          modelUpstream: api.url,
          hostEnv,
        }),
      );
      try {
        const reply = await ask(w, name, "run the tool, then finish", "pm-test", 60_000);
        expect(reply, `stderr: ${s.stderr().slice(0, 800)}`).toContain("turn-finished-through-runner");
        const bodies = api.messageBodies();
        expect(bodies.length, "two model calls: the tool call and the answer").toBe(2);
        expect(toolResultsIn(bodies[1]).join("\n"), "the tool ran inside").toContain("tool-ran-inside");
        expect(api.credentialSeen("x-api-key", canary), "the proxy added the host's key").toBe(true);
        expect(
          existsSync(egressLogPath(w.stateDir, name)),
          "the proxy wrote its egress log in the state directory",
        ).toBe(true);
        const records = readFileSync(egressLogPath(w.stateDir, name), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as EgressRecord);
        expect(records.filter((r) => r.method === "POST").map((r) => `${r.outcome} ${r.path} ${r.status}`)).toEqual([
          "allowed /v1/messages 200",
          "allowed /v1/messages 200",
        ]);
      } finally {
        await s.stop();
        await api.stop();
      }
    }, 90_000);
  }
  it("network none: the runner opens no model port and the launcher runs no proxy", async () => {
    const s = await launchAndClaim(
      w,
      w.request(w.instance("pi-coder", "no-network", { instance: "offline", network: "none" })),
    );
    try {
      expect(s.plan.sessionFile.model).toBeNull();
      const reply = await ask(w, "offline", fetchAt("POST", "/v1/messages"));
      expect(reply).toMatch(/^POST \/v1\/messages NO-MODEL-PORT ECONNREFUSED/);
      expect(existsSync(join(s.runDir, "sock/model.sock")), "no proxy socket").toBe(false);
      expect(existsSync(egressLogPath(w.stateDir, "no-network"))).toBe(false);
    } finally {
      await s.stop();
    }
  }, 30_000);
});

describe("the launcher's refusals leave no run directory", () => {
  const fakeBwrap = (name: string, body: string) => {
    const p = join(w.root, name);
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
    return p;
  };
  for (const [what, bwrap, line] of [
    [
      "a failing bwrap",
      () => fakeBwrap("bwrap-fails", 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1'),
      /sandbox is unavailable: .*bwrap cannot apply .*Permission denied/,
    ],
    ["a missing bwrap", () => join(w.root, "no-bwrap"), /sandbox is unavailable: bwrap is missing/],
  ] as const) {
    it(`sandbox-unavailable: ${what}`, async () => {
      const inst = w.instance("pi-coder", `refuse-${what.split(" ")[1]}`);
      const r = prepareLaunch(w.request(inst, { bwrap: bwrap() }));
      expect(r.kind === "refuse" && r.code).toBe("sandbox-unavailable");
      expect(r.kind === "refuse" && r.message).toMatch(line);
      expect(existsSync(join(w.data, "runs", inst.run)), "no run directory").toBe(false);
    });
  }
  it("run-dir-exists: a run directory already there is refused, naming it, and left as it was; no sandbox starts", async () => {
    const p = prepared("run-dir-there");
    const runDir = p.req.runDir;
    mkdirSync(runDir, { mode: 0o700 });
    writeFileSync(join(runDir, "left-by-an-earlier-run"), "kept\n");
    let spawned = 0;
    // Were the refusal gone, the sandbox that starts is killed at once, so no session outlives the test.
    const onSpawn = (c: { kill: (s: NodeJS.Signals) => boolean }) => {
      spawned++;
      c.kill("SIGKILL");
    };
    await expect(start({ ...p, req: { ...p.req, onSpawn } })).rejects.toThrow(
      expect.objectContaining({ code: "run-dir-exists", field: runDir }),
    );
    expect(spawned, "no bwrap was started").toBe(0);
    expect(readdirSync(runDir), "the earlier run's directory is untouched").toEqual(["left-by-an-earlier-run"]);
    expect(
      w.broker.records().filter((r) => r.run === "run-dir-there"),
      "nothing reached the broker",
    ).toEqual([]);
  });
  it("launch-failed: a launch that fails after bwrap started kills that sandbox and its runner, voids the run and ends its record", async () => {
    const p = prepared("fails-after-spawn");
    const ended: string[] = [];
    let bwrap = 0;
    let runner = 0;
    let runnerWasUp = false;
    const bus = { ...p.req.bus, endRun: (run: string) => (ended.push(run), p.req.bus.endRun(run)) };
    const started = start({
      ...p,
      req: {
        ...p.req,
        bus,
        onSpawn: (c) => {
          bwrap = c.pid!;
          // The launch gives up only once the runner has read its session.json and waits for its
          // capability line: earlier, the run directory's removal fails bwrap's own mounts or the
          // runner's read, and the sandbox ends by itself whether or not the launcher kills it.
          for (let i = 0; i < 1000 && !runnerAwaitsCapability(childrenOf(bwrap)[0]); i++) spawnSync("sleep", ["0.01"]);
          runner = childrenOf(bwrap)[0] ?? 0;
          runnerWasUp = runnerAwaitsCapability(runner);
          throw new Error("the launch record could not be written");
        },
      },
    });
    // start() waits for the sandbox it kills: one left alive keeps it waiting, a failed assertion here.
    const settled = await settleWithin(started, 15_000);
    const hung = settled.kind === "pending";
    if (hung) for (const pid of [runner, bwrap].filter(isAlive)) process.kill(pid, "SIGKILL");
    expect(hung, "start() ends the sandbox it started and returns its failure").toBe(false);
    expect(String((settled as { error?: unknown }).error)).toContain("the launch record could not be written");
    expect(runnerWasUp, "the sandbox's runner was up, waiting for its capability line").toBe(true);
    const registry = new LaunchRegistry(join(p.req.stateDir, "launches"));
    for (
      let i = 0;
      i < 250 && (isAlive(bwrap) || isAlive(runner) || registry.get(p.req.instance.run)?.end === null);
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    const alive = [isAlive(bwrap), isAlive(runner)];
    // A sandbox left behind (the kill removed, under its mutant) would wait on this process's pipe for
    // as long as a mutation host lives; end it here, after reading its state, so no later test meets it.
    for (const pid of [runner, bwrap].filter(isAlive)) process.kill(pid, "SIGKILL");
    expect(alive, "bwrap and its runner are gone").toEqual([false, false]);
    expect(findSessionBwraps(p.req.runDir), "no sandbox of the run is left").toEqual([]);
    expect(ended, "the run's capabilities are voided").toEqual([p.req.instance.run]);
    expect(registry.get(p.req.instance.run)?.end?.reason, "the launch is ended, not left for recover()").toBe(
      "launch-failed",
    );
    expect(existsSync(p.req.runDir), "no run directory").toBe(false);
  });
  it("no-session-credential: a Claude Code coder with no credential set", async () => {
    const inst = w.instance("claude-coder", "refuse-cred");
    const r = prepareLaunch({
      ...w.request(inst),
      hostEnv: { ...w.hostEnv, MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude") },
    });
    expect(r.kind === "refuse" && r.code).toBe("no-session-credential");
    expect(existsSync(join(w.data, "runs", inst.run)), "no run directory").toBe(false);
  });
});

describe("the host dying hard", () => {
  const runnerOf = async (bwrap: number) => {
    for (let i = 0; i < 100; i++) {
      const c = childrenOf(bwrap);
      if (c.length > 0) return c[0]!;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`bwrap ${bwrap} has no child`);
  };
  const gone = async (pid: number, ms: number) => {
    for (const t0 = Date.now(); Date.now() - t0 < ms; ) {
      if (!isAlive(pid)) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return !isAlive(pid);
  };

  it("SIGKILL the launcher: bwrap and the runner outlive it, and the next host's recover() ends the launch as host-lost", async () => {
    const inst = w.instance("pi-coder", "host-died");
    const reqFile = join(w.root, "host-died.json");
    const { bus: _bus, ...req } = w.request(inst);
    writeFileSync(reqFile, JSON.stringify(req));
    const cap = w.broker.issueCapability({ run: inst.run, instance: inst.instance });
    const host = spawn(process.execPath, [join(REPO_ROOT, "src/conformance/processes/host-process.ts"), reqFile], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    host.stdin!.end(cap + "\n");
    const line = await new Promise<string>((ok) => host.stdout!.setEncoding("utf8").once("data", (d: string) => ok(d)));
    const bwrap = Number(/LAUNCHED (\d+)/.exec(line)?.[1]);
    expect(bwrap, line).toBeGreaterThan(0);
    const runner = await runnerOf(bwrap);
    for (
      let i = 0;
      i < 200 && !w.broker.records().some((r) => r.run === inst.run && r.verb === "role.claim" && r.outcome === "ok");
      i++
    )
      await new Promise((r) => setTimeout(r, 25));
    host.kill("SIGKILL");
    await new Promise((r) => host.once("exit", r));
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(bwrap), "bwrap outlives the host: no --die-with-parent").toBe(true);
    expect(isAlive(runner), "the runner runs on under its bwrap").toBe(true);
    // Another bwrap on the host, of no lost run: recover() must leave it alone.
    // Not through start(): a decoy bwrap that is no session's, which recover() must leave alone
    const decoy = spawn("bwrap", ["--dev-bind", "/", "/", "--chdir", "/tmp", "--", "/bin/sleep", "30"], {
      stdio: "ignore",
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(
      findSessionBwraps(join(w.data, "runs", inst.run)),
      "recover() finds it by its command line, and only it",
    ).toEqual([bwrap]);

    const registry = new LaunchRegistry(join(w.stateDir, "launches"));
    const recovered = await recover(registry, w.broker);
    expect(isAlive(decoy.pid!), "another bwrap survives recover()").toBe(true);
    decoy.kill("SIGKILL");
    const mine = recovered.find((r) => r.run === inst.run);
    expect(mine?.killed, "recover() killed the session's bwrap").toEqual([bwrap]);
    expect(mine?.survivors, "no runner outlived its bwrap: the parent-death signal took it").toEqual([]);
    expect(await gone(runner, 3000), "the runner died with its bwrap (setpriv --pdeathsig)").toBe(true);
    expect(await gone(bwrap, 3000)).toBe(true);
    expect(registry.get(inst.run)?.end?.reason).toBe("host-lost");
    const voided = await callBroker(w.broker.brokerSocket, cap, "message.read", {}, 2000);
    expect(voided, "the run's capability is void").toMatchObject({ kind: "error", code: "unauthenticated" });
  }, 30_000);

  it("choice 1's race: bwrap killed before the runner's parent-death signal is set; the voided capability stops it at its next poll", async () => {
    for (const arm of ["shipped", "no-pdeathsig"] as const) {
      // A slow poll, and the kill just after one: the check below comes long before the next.
      const p = prepared(`race-${arm}`, "pi-coder", {
        timings: { pollMs: 4000, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 5 },
      });
      // Broken on purpose: the runner started without setpriv, as if bwrap died before its prctl.
      const argv = arm === "shipped" ? p.session.argv : withoutParentDeathSignal(p.session.argv);
      const s = await start({ ...p, session: { ...p.session, argv } });
      await waitClaimed(w, s, p.session.sessionFile.run);
      const runner = await runnerOf(s.pid);
      // The runner polls at once after its claim; killing before that first poll is answered would race it.
      const polled = () =>
        w.broker.records().some((r) => r.run === p.session.sessionFile.run && r.verb === "message.read");
      for (let i = 0; i < 200 && !polled(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(polled(), "the runner's first poll, before the kill").toBe(true);
      process.kill(s.pid, "SIGKILL");
      expect(await gone(s.pid, 2000), "bwrap is gone").toBe(true);
      const aliveRightAfter = isAlive(runner);
      const end = await s.exited;
      expect(end.reason, "the launcher ends the launch when bwrap exits").toBe("killed");
      if (arm === "shipped") {
        const died = await gone(runner, 1000);
        if (!died) process.kill(runner, "SIGKILL");
        expect(died, "with the death signal, the runner dies with bwrap").toBe(true);
      } else {
        expect(aliveRightAfter, "without it, the runner is still running right after").toBe(true);
        const stopped = await gone(runner, 9000);
        if (!stopped) process.kill(runner, "SIGKILL");
        expect(stopped, "and exits at its next poll, its capability voided").toBe(true);
        const polls = w.broker
          .records()
          .filter((r) => r.run === p.session.sessionFile.run && r.verb === "message.read");
        expect(polls.at(-1)?.code, "the poll that stopped it").toBe("unauthenticated");
      }
    }
  }, 45_000);
});

describe("a PM that may launch, and a coder that may not", () => {
  it("only the PM's sandbox holds the launch socket, and its launch tool reaches it", async () => {
    const env = {
      ...w.hostEnv,
      MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude"),
      ANTHROPIC_API_KEY: "stand-in-api-key",
    };
    const pm = await launchAndClaim(w, { ...w.request(w.instance("claude-pm", "pm-launch")), hostEnv: env });
    const coder = await launchAndClaim(w, w.request(w.instance("pi-coder", "coder-nolaunch")));
    try {
      const probe = `test -S ${w.broker.launchSocket} && echo yes || echo no`;
      expect(await ask(w, "pm-launch", probe), "the PM sees the launch socket").toBe("yes");
      expect(await ask(w, "coder-nolaunch", probe), "the coder does not").toBe("no");
      expect(pm.plan.binds.some((b) => b.row === "launch-socket")).toBe(true);
      expect(coder.plan.binds.some((b) => b.row === "launch-socket")).toBe(false);
      const launched = await ask(
        w,
        "pm-launch",
        `node -e 'const c=require("net").connect(${JSON.stringify(join(pm.runDir, "sock/tools.sock"))});c.on("connect",()=>c.write(JSON.stringify({id:1,tool:"launch",args:{instance:"acme-coder",message:"go"}})+"\\n"));c.on("data",d=>{process.stdout.write(String(d));c.end()})'`,
      );
      expect(JSON.parse(launched)).toMatchObject({ ok: true, result: { launched: true } });
      expect(
        w.broker.state().launches.some((l) => l.run === "pm-launch" && l.message === "go"),
        "the launch reached the launch socket with the PM's capability",
      ).toBe(true);
    } finally {
      await pm.stop();
      await coder.stop();
    }
  }, 40_000);
});

describe("the capability", () => {
  it("is on no disk, in no argv and in no environment of the session: only on the runner's stdin", async () => {
    const s = await launchAndClaim(w, w.request(w.instance("pi-coder", "cap-where", { instance: "cap-where" })));
    try {
      const cap = w.broker.records().find((r) => r.run === "cap-where" && r.verb === "role.claim")!.cap!;
      expect(cap).toMatch(/^[0-9a-f]{64}$/);
      const files = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? files(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
        );
      for (const f of [...files(s.runDir), ...files(s.plan.spec.workspace)])
        expect(readFileSync(f, "latin1").includes(cap), `${f} holds the capability`).toBe(false);
      for (const pid of [s.pid, ...childrenOf(s.pid)])
        expect(readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(cap), `pid ${pid}'s argv holds it`).toBe(false);
      const inside = await ask(w, "cap-where", "cat /proc/1/cmdline /proc/self/environ 2>/dev/null; env");
      expect(inside.includes(cap), "nothing inside the sandbox shows it").toBe(false);
    } finally {
      await s.stop();
    }
  }, 30_000);
});
