// The host's side of each launch (src/core/session/host-plan.ts): who the session runs as, the
// runner's node, the seccomp rules, the cgroups, where each bound is enforced, the run's tree and
// files, the model proxy, the tool socket, the end-of-session check and the lock. start() carries
// this out and decides nothing, so every decision of a launch is a golden here, with its invariants.
import { describe, expect, it } from "vitest";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { planBounds, planHostSide, type HostPlan, type HostPlanInputs } from "../src/core/session/host-plan.ts";
import { planSession, type SessionInputs, type SessionPlan } from "../src/core/session/plan-session.ts";
import { CGROUP_SETTINGS, type CgroupPlan } from "../src/core/sandbox/cgroups.ts";
import { MosaicError } from "../src/core/errors.ts";
import { SESSION_LIMITS } from "../src/core/sandbox/limits.ts";
import { SECCOMP_RULES } from "../src/core/sandbox/seccomp.ts";
import { RUNNER_NODE_MODE } from "../src/core/sandbox/runner-node.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { isWithin } from "../src/core/paths.ts";
import { FIXTURE_REPO, HOST_LAYOUTS, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";
import { normalise } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { loadCases, type LaunchCase } from "./support/launch-cases.ts";

const STATE = `${FIXTURE_REPO}/.scratch/state`;
const V2 = { dir: "/sys/fs/cgroup/mosaic-sessions", version: 2 } as const;
const ROOT_V2: HostFacts = { ...HOST_LAYOUTS["root-caller"]!.facts, cgroups: { pids: V2, memory: V2 } };

/** The hosts each case is planned on: a user caller, a root caller on cgroup v1, and on cgroup v2. */
const HOSTS: ReadonlyArray<{ name: string; facts: HostFacts }> = [
  { name: "user", facts: HOST_LAYOUTS["merged-usr"]!.facts },
  { name: "root-v1", facts: HOST_LAYOUTS["root-caller"]!.facts },
  { name: "root-v2", facts: ROOT_V2 },
];

function planOf(c: LaunchCase, facts: HostFacts): SessionPlan {
  const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
  if (d.kind !== "launch") throw new Error(`${c.name}: expected a launch, got ${d.code}`);
  return planSession({
    plan: d.plan,
    instance: c.instance,
    facts,
    fs: fixtureWorkspaceView({ workspace: c.instance.workspace } as SandboxSpec),
    repo: FIXTURE_REPO,
    runDir: c.facts.runDir,
    brokerSocket: "/srv/mosaic-data/broker.sock",
    launchSocket: "/srv/mosaic-data/launch.sock",
    runnerFiles: [`${FIXTURE_REPO}/src/core/runner/decisions.ts`],
    packages: [`${FIXTURE_REPO}/node_modules/@modelcontextprotocol/sdk`],
    adapter: { kind: "harness" },
    hostEnv: c.env,
    stateDir: STATE,
    launchedAt: { hostPid: 4242, now: 1_700_000_000_000 },
  });
}

const octal = (m: number) => m.toString(8).padStart(4, "0");

/** One decision a line, `part | value`: the first column is unique, so the review compares line by line. */
function renderHostPlan(p: HostPlan): string[] {
  const id = p.identity;
  const rows: Array<[string, string]> = [
    ["identity caller", String(id.caller)],
    ["identity runs as", `${id.runAs.uid}:${id.runAs.gid}`],
    ["identity drop", id.drop.length > 0 ? id.drop.join(" ") : "none: bwrap runs as the caller"],
    ...(id.handOver !== null
      ? ([
          ["identity hands over workspace", id.handOver.workspace],
          ["identity hands over run directory", id.handOver.runDir],
        ] as Array<[string, string]>)
      : []),
    ["own session", p.ownSession ? "yes: no controlling terminal of the host's" : "no"],
    ["runner node", `${p.runnerNode.path} mode ${octal(p.runnerNode.mode)}, a copy of ${p.runnerNode.copyOf}`],
    ["seccomp arch", p.seccomp.arch],
    ...p.seccomp.rules.deny.map((d): [string, string] => [`seccomp deny ${d.name}`, `${d.errno}: ${d.why}`]),
    ...p.seccomp.rules.ioctl.map((d): [string, string] => [`seccomp ioctl ${d.name}`, `EPERM: ${d.why}`]),
    ["seccomp clone namespaces", p.seccomp.rules.cloneNamespaces ? "EPERM" : "allowed"],
    ["seccomp x32", p.seccomp.rules.x32 ? "killed" : "allowed"],
    [
      "seccomp socket families",
      p.seccomp.rules.socketFamilies === null
        ? "any"
        : p.seccomp.rules.socketFamilies.map((f) => f.name + (f.netlinkRouteOnly ? " (route only)" : "")).join(", "),
    ],
    ...p.cgroups.dirs.flatMap((d) =>
      d.settings.map((s): [string, string] => [
        `cgroup v${d.version} ${d.dir} ${s.file}`,
        `${s.value}${s.optional ? " (where the file exists)" : ""}: ${s.why}`,
      ]),
    ),
    ...p.bounds.map((b): [string, string] => [`bound ${b.name} ${b.value}`, b.by.join(", ") || "nothing enforces it"]),
    ...p.runTree.map((d): [string, string] => [`run tree ${d.path}`, octal(d.mode)]),
    ["pi models.json copy", p.piModels ?? "none"],
    ["gate cache", p.gateCache === null ? "none" : `${p.gateCache.dir}, warmed with ${p.gateCache.node}`],
    ...(p.modelProxy === null
      ? ([["model proxy", "none: the session has no network"]] as Array<[string, string]>)
      : ([
          ["model proxy socket", p.modelProxy.socket],
          ["model proxy upstream", p.modelProxy.upstream],
          [
            "model proxy credential",
            p.modelProxy.credential === null ? "none" : `${p.modelProxy.credential.header} <set>`,
          ],
          ["model proxy mode", p.modelProxy.mode],
          ["model proxy egress log", p.modelProxy.egressLog],
          ["model proxy grants", p.modelProxy.grants.join(", ") || "none"],
        ] as Array<[string, string]>)),
    [
      "tool socket",
      `${p.toolSocket.path}${p.toolSocket.owner === null ? "" : ` owned by ${p.toolSocket.owner.uid}:${p.toolSocket.owner.gid}`}`,
    ],
    ...(p.endCheck === null
      ? []
      : ([["end check", `${p.endCheck.workspace} → quarantine ${p.endCheck.quarantine}`]] as Array<[string, string]>)),
    ["workspace lock", p.lock],
    ["session uid lock", p.uidLock ?? "none: a user caller's session is the caller"],
    ["identity files", p.identityFiles.dir],
    ["identity passwd", p.identityFiles.passwd.trim().split("\n").join(" ; ")],
    ["identity group", p.identityFiles.group.trim().split("\n").join(" ; ")],
    ["launch records", p.records],
    ["seccomp program dir", p.seccompDir],
  ];
  return ["part | value", ...rows.map(([k, v]) => `${k} | ${v}`)];
}

/** The invariants a careless goldens:update cannot bless away. */
function assertHostPlan(p: SessionPlan, facts: HostFacts, c: LaunchCase): void {
  const run = c.facts.runDir;
  const ws = c.instance.workspace;
  const id = p.identity;
  expect(id.runAs.uid, "a session never runs as uid 0").not.toBe(0);
  expect(id.runAs.gid, "nor as gid 0").not.toBe(0);
  if (facts.uid === 0) {
    expect(id.drop, "a root caller drops to the session's identity before bwrap").toEqual([
      "setpriv",
      `--reuid=${id.runAs.uid}`,
      `--regid=${id.runAs.gid}`,
      "--clear-groups",
      "--",
    ]);
    expect(id.handOver, "and hands it its workspace and run, nothing else").toEqual({ workspace: ws, runDir: run });
    expect(p.toolSocket.owner, "the tool socket is the session's").toEqual(id.runAs);
  } else {
    expect([id.drop, id.handOver], "a user caller's session is the caller: no drop, nothing handed over").toEqual([
      [],
      null,
    ]);
    expect(id.runAs.uid).toBe(facts.uid);
  }
  expect(p.ownSession, "every sandbox starts in a session of its own").toBe(true);
  expect(p.uidLock, "a root caller's session holds its uid for its life").toBe(
    facts.uid === 0 ? `${STATE}/uids/${id.runAs.uid}.lock` : null,
  );
  expect(p.identityFiles.passwd, "the session's own passwd names its uid, and no account of the host's").toBe(
    `root:x:0:0:root:/root:/usr/sbin/nologin\nsession:x:${id.runAs.uid}:${id.runAs.gid}:mosaic session:${run}/home:/bin/sh\n`,
  );
  expect(
    p.binds.filter((b) => b.inside === "/etc/passwd" || b.inside === "/etc/group").map((b) => [b.source, b.mode]),
    "bound read-only over the host's, from the host's state, not the run the session writes",
  ).toEqual([
    [`${p.identityFiles.dir}/passwd`, "ro"],
    [`${p.identityFiles.dir}/group`, "ro"],
  ]);
  expect(p.runnerNode, "the runner runs on an execute-only copy of node").toEqual({
    path: facts.runnerNode,
    copyOf: facts.node.path,
    mode: 0o111,
  });
  expect(RUNNER_NODE_MODE & 0o444, "no read bit for anyone").toBe(0);
  expect(p.seccomp.rules, "every session gets the whole filter").toEqual(SECCOMP_RULES);
  assertCgroups(p, facts);
  assertBounds(p, facts);
  expect(p.endCheck, "the workspace is checked at the end, into a quarantine outside every sandbox").toEqual({
    workspace: ws,
    quarantine: `${STATE}/quarantine/${c.instance.run}`,
  });
  for (const outside of [p.endCheck!.quarantine, p.lock, p.records, p.seccompDir, p.modelProxy?.egressLog ?? STATE]) {
    expect(isWithin(outside, run) || isWithin(outside, ws), `${outside}: the host's state, not the session's`).toBe(
      false,
    );
    expect(isWithin(outside, STATE), `${outside}: under the state directory`).toBe(true);
  }
  for (const d of p.runTree) expect([isWithin(d.path, run), d.mode], d.path).toEqual([true, 0o700]);
  expect(p.piModels === null || isWithin(p.piModels, run), "Pi's models.json copy is the run's own").toBe(true);
  expect(p.piModels !== null, "only Pi reads a models.json from its agent dir").toBe(p.spec.harness === "pi");
  expect(p.gateCache === null, "only Claude Code has a gate hook to warm").toBe(p.spec.harness !== "claude-code");
  if (p.modelProxy !== null)
    expect(p.modelProxy.socket, "the proxy listens in the run's read-only sock/").toBe(`${run}/sock/model.sock`);
  expect(p.modelProxy === null, "a proxy exactly when the session has a model").toBe(p.sessionFile.model === null);
}

function assertCgroups(p: SessionPlan, facts: HostFacts): void {
  if (facts.uid !== 0) return void expect(p.cgroups.dirs, "a user caller writes no cgroup").toEqual([]);
  const settings = p.cgroups.dirs.flatMap((d) => d.settings.map((s) => [d.version, s.file, s.value] as const));
  const v = facts.cgroups.pids!.version;
  expect(settings, "a root caller's session has its pids bound").toContainEqual([
    v,
    "pids.max",
    SESSION_LIMITS.tasks.value,
  ]);
  const mem = SESSION_LIMITS.memoryBytes.value;
  if (v === 1) {
    expect(settings, "v1: the memory bound").toContainEqual([1, "memory.limit_in_bytes", mem]);
    expect(settings, "v1: swap counts too").toContainEqual([1, "memory.memsw.limit_in_bytes", mem]);
  } else {
    expect(settings, "v2: the memory bound").toContainEqual([2, "memory.max", mem]);
    expect(settings, "v2: no swap at all, not the memory figure").toContainEqual([2, "memory.swap.max", 0]);
    expect(p.cgroups.dirs, "v2: one cgroup holds both controllers").toHaveLength(1);
  }
  expect(
    CGROUP_SETTINGS.memory[1].map((r) => r.file),
    "v1: swap's row after the memory row, which it may not be set below",
  ).toEqual(["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]);
}

function assertBounds(p: SessionPlan, facts: HostFacts): void {
  expect(p.bounds, "the bounds are read off this plan's argv, binds and cgroups").toEqual(
    planBounds(p.argv, p.binds, p.cgroups),
  );
  const by = Object.fromEntries(p.bounds.map((b) => [b.name, b.by]));
  expect(by.tasks, "tasks: RLIMIT_NPROC for every caller").toContain("prlimit --nproc");
  expect(by.dataBytes, "each process's writable memory").toEqual(["prlimit --data"]);
  for (const t of ["tmpBytes", "homeBytes", "shmBytes"]) expect(by[t]!.length, `${t} is enforced`).toBe(1);
  if (facts.uid === 0) {
    expect(by.tasks, "a root caller's session: the pids cgroup too").toContain("pids cgroup");
    expect(by.memoryBytes, "and the memory cgroup").toEqual(["memory cgroup"]);
  } else expect(by.memoryBytes, "a user caller has no memory cgroup: stated, not hidden").toEqual([]);
}

describe("the host's side of each launch", () => {
  for (const c of loadCases().filter((x) => x.refuses === undefined))
    for (const host of HOSTS)
      it(`${c.name} on ${host.name}: ${c.why}`, async () => {
        const p = planOf(c, host.facts);
        assertHostPlan(p, host.facts, c);
        const body = normalise(renderHostPlan(p).join("\n"), {
          "<run>": c.facts.runDir,
          "<ws>": c.instance.workspace,
          "<state>": STATE,
          "<repo>": FIXTURE_REPO,
          "<node>": host.facts.node.path,
        });
        expect(body, "no credential's value in the golden").not.toMatch(/stand-in-value/);
        await matchGolden(
          "session/host-plan",
          `${c.name}.${host.name}`,
          "txt",
          `host plan: what start() carries out for ${c.name} on a ${host.name} host`,
          body,
        );
      });
});

describe("planBounds reads the enforcers off the plan", () => {
  it("a bound whose enforcer is gone from the argv, binds or cgroups says nothing enforces it", () => {
    const c = loadCases().find((x) => x.name === "pi-coder")!;
    const p = planOf(c, HOST_LAYOUTS["root-caller"]!.facts);
    const bare = planBounds(
      p.argv.filter((t) => !t.startsWith("--nproc=") && !t.startsWith("--data=")),
      p.binds.map((b) => ({ ...b, size: undefined })),
      { name: "", dirs: [] },
    );
    expect(bare.map((b) => [b.name, b.by])).toEqual([
      ["tasks", []],
      ["dataBytes", []],
      ["memoryBytes", []],
      ["tmpBytes", []],
      ["homeBytes", []],
      ["shmBytes", []],
    ]);
  });
});

/** planHostSide's inputs for one Pi session of a root caller; each test changes the ones it is about. */
function hostInputs(over: Partial<HostPlanInputs> = {}): HostPlanInputs {
  const runDir = "/srv/mosaic-data/runs/r-host";
  return {
    facts: HOST_LAYOUTS["root-caller"]!.facts,
    stateDir: STATE,
    runDir,
    run: "r-host",
    workspace: "/srv/work/r-host",
    network: "model-only",
    grants: ["web-search"],
    credentialSet: null,
    hostEnv: {},
    bundleDir: `${runDir}/bundle`,
    piAgentDir: `${runDir}/session/pi-agent`,
    hasModelsFile: true,
    harness: "pi",
    launchedAt: { hostPid: 4242, now: 1_700_000_000_000 },
    argv: [],
    binds: [],
    ...over,
  };
}

describe("planHostSide decides from its inputs", () => {
  it("a host whose arch has no seccomp filter is refused, naming the arch, rather than launched unfiltered", () => {
    const facts = { ...HOST_LAYOUTS["root-caller"]!.facts, arch: "riscv64" };
    let err: unknown;
    try {
      planHostSide(hostInputs({ facts }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MosaicError);
    const { code, field, message } = err as MosaicError;
    expect({ code, field, message }).toEqual({
      code: "seccomp-arch",
      field: "hostFacts.arch",
      message: "hostFacts.arch: no seccomp filter is written for riscv64",
    });
    expect(planHostSide(hostInputs({ facts: { ...facts, arch: "arm64" } })).seccomp.arch, "arm64 has one").toBe(
      "aarch64",
    );
  });

  it("a session without network has no model proxy; one with a model gets exactly its grants", () => {
    expect(planHostSide(hostInputs({ network: "none" })).modelProxy).toBe(null);
    for (const grants of [[], ["web-search"], ["web-search", "file-sources"]] as const)
      expect(planHostSide(hostInputs({ grants })).modelProxy?.grants, grants.join(",")).toEqual(grants);
  });

  it("Pi's models.json copy is planned only when the bundle has one and Pi has an agent dir", () => {
    const dir = "/srv/mosaic-data/runs/r-host/session/pi-agent";
    const piModels = (hasModelsFile: boolean, piAgentDir: string | null) =>
      planHostSide(hostInputs({ hasModelsFile, piAgentDir })).piModels;
    expect(piModels(true, dir)).toBe(`${dir}/models.json`);
    expect(piModels(false, dir), "no models.json in the bundle: nothing to copy").toBe(null);
    expect(piModels(true, null), "no agent dir: nowhere Pi reads it").toBe(null);
    expect(piModels(false, null)).toBe(null);
  });
});

describe("planBounds counts an enforcer only where it applies", () => {
  const L = SESSION_LIMITS;
  const byOf = (bounds: ReturnType<typeof planBounds>) => Object.fromEntries(bounds.map((b) => [b.name, b.by]));
  const tmpfs = (row: Bind["row"], size: number): Bind => ({
    source: null,
    inside: `/${row}`,
    mode: "tmpfs",
    why: "",
    row,
    size,
  });
  const cgroup = (settings: Array<[string, number]>): CgroupPlan => ({
    name: "n",
    dirs: [
      {
        dir: "/sys/fs/cgroup/mosaic-sessions/n",
        base: "/sys/fs/cgroup/mosaic-sessions",
        version: 2,
        controllers: ["pids", "memory"],
        settings: settings.map(([file, value]) => ({ file, value, why: "" })),
      },
    ],
  });

  it("a tmpfs's size bounds its own mount only, not another of the same size", () => {
    // HOME and /dev/shm have the same bound: HOME's tmpfs says nothing of /dev/shm's.
    expect(L.homeBytes.value).toBe(L.shmBytes.value);
    const by = byOf(planBounds([], [tmpfs("home", L.homeBytes.value), tmpfs("shm", L.tmpBytes.value)], cgroup([])));
    expect([by.homeBytes, by.shmBytes, by.tmpBytes]).toEqual([["HOME tmpfs --size"], [], []]);
  });

  it("a cgroup setting is a bound's enforcer only under the bound's exact file name and with its value", () => {
    const enforced = (file: string, value: number) => {
      const by = byOf(planBounds([], [], cgroup([[file, value]])));
      return [...by.tasks!, ...by.memoryBytes!];
    };
    expect(enforced("pids.max", L.tasks.value)).toEqual(["pids cgroup"]);
    expect(enforced("memory.max", L.memoryBytes.value)).toEqual(["memory cgroup"]);
    expect(enforced("memory.limit_in_bytes", L.memoryBytes.value)).toEqual(["memory cgroup"]);
    expect(enforced("pids.max", L.tasks.value + 1), "pids.max set to another value").toEqual([]);
    expect(enforced("memory.max", L.tasks.value), "memory.max set to another value").toEqual([]);
    expect(enforced("pids.current", L.tasks.value), "another file, the bound's value").toEqual([]);
    // Names that hold a bound's file name without being it, v1's memory.max_usage_in_bytes among them.
    for (const file of ["misc.pids.max", "pids.max.old", "x.memory.max", "memory.max_usage_in_bytes"])
      expect(enforced(file, file.includes("pids") ? L.tasks.value : L.memoryBytes.value), file).toEqual([]);
  });
});

/** planSession for case c on a root caller's host, with some of its inputs changed. */
function planWith(c: LaunchCase, over: (i: SessionInputs) => Partial<SessionInputs>): SessionPlan {
  const facts = HOST_LAYOUTS["root-caller"]!.facts;
  const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
  if (d.kind !== "launch") throw new Error(`${c.name}: expected a launch, got ${d.code}`);
  const inp: SessionInputs = {
    plan: d.plan,
    instance: c.instance,
    facts,
    fs: fixtureWorkspaceView({ workspace: c.instance.workspace } as SandboxSpec),
    repo: FIXTURE_REPO,
    runDir: c.facts.runDir,
    brokerSocket: "/srv/mosaic-data/broker.sock",
    launchSocket: "/srv/mosaic-data/launch.sock",
    runnerFiles: [],
    packages: [],
    adapter: { kind: "harness" },
    hostEnv: c.env,
    stateDir: STATE,
    launchedAt: { hostPid: 4242, now: 1_700_000_000_000 },
  };
  return planSession({ ...inp, ...over(inp) });
}

describe("planSession hands the host side what it was given", () => {
  const pi = () => loadCases().find((x) => x.name === "pi-coder")!;

  it("the model upstream the host passes in is where the proxy sends the calls, over the host's ANTHROPIC_BASE_URL", () => {
    const hostEnv = { ...pi().env, ANTHROPIC_BASE_URL: "http://127.0.0.1:7/env" };
    const given = planWith(pi(), () => ({ hostEnv, modelUpstream: "http://127.0.0.1:8/given" }));
    expect(given.modelProxy?.upstream).toBe("http://127.0.0.1:8/given");
    const none = planWith(pi(), () => ({ hostEnv }));
    expect(none.modelProxy?.upstream, "none given: the host's ANTHROPIC_BASE_URL").toBe("http://127.0.0.1:7/env");
  });

  it("Pi's models.json is copied to its agent dir only when the bundle holds one", () => {
    expect(planWith(pi(), () => ({})).piModels).toBe(`${pi().facts.runDir}/session/pi-agent/models.json`);
    const without = planWith(pi(), (i) => {
      const { "models.json": _, ...bundle } = i.plan.bundle;
      return { plan: { ...i.plan, bundle } };
    });
    expect(without.piModels).toBe(null);
  });
});
