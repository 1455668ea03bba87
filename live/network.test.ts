// The network, live, through the real CLIs' own shell tools: the session's only way out is the model
// port, which reaches the host's proxy; the proxy adds the real credential, which never enters the
// sandbox. Each protection has its positive control: the same attempt with it removed on purpose.
// The shell's view without a CLI (the fake adapter's, as root and as a user) is live/attacks.test.ts.
import { freePort } from "../src/conformance/processes/free-port.ts";
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import {
  CLAUDE_BIN,
  explain,
  harnessHostEnv,
  prepareLive,
  runLiveTurn,
  type Example,
} from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { withoutAnyOf } from "../src/conformance/controls/argv.ts";
import { launchWithBwrapArgv, launchWithEnv, launchWithHarnessModelPort } from "../src/conformance/controls/launch.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { scriptOf } from "../src/conformance/stand-ins/model-script/format.ts";
import { makeCanary } from "../src/conformance/traps/canary.ts";
import { startTrap, type Trap } from "../src/conformance/traps/listener.ts";
import { startScriptedApi, toolResultsIn, type ScriptedApi } from "../src/conformance/stand-ins/scripted-api.ts";
import { MODEL_PORT, type EgressRecord } from "../src/core/network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import { readHostFacts } from "../src/host/host-facts.ts";

const hostFacts = readHostFacts({ repo: REPO_ROOT });
const it = liveIt(
  "bwrap, Claude Code and Pi",
  checkoutProblem(REPO_ROOT) ??
    (await import("../src/host/sandbox-probe.ts")).sandboxProblem(hostFacts) ??
    (existsSync(CLAUDE_BIN) ? null : `${CLAUDE_BIN} missing (npm ci)`),
);

/** The sessions' world: the launcher's, with a stand-in broker. */
let w: RuntimeWorld;
/** Traps on the host: a TCP listener on its loopback and an abstract Unix socket, each counting connections. */
const trap = {
  tcp: null as Trap | null,
  abstract: null as Trap | null,
  tcpPort: 0,
  abstractName: makeCanary("mosaic-trap"),
  hits: { tcp: 0, abstract: 0 },
};

beforeAll(async () => {
  w = await makeRuntimeWorld("network");
  trap.tcp = await startTrap({ tcp: "127.0.0.1" }, { onHit: () => trap.hits.tcp++ });
  trap.tcpPort = trap.tcp.port!;
  trap.abstract = await startTrap({ abstract: trap.abstractName }, { onHit: () => trap.hits.abstract++ });
});

afterAll(async () => {
  await Promise.all([trap.tcp?.close(), trap.abstract?.close()]);
  await w?.close();
});

/** One launch of a shipped example, planned by prepareLaunch() with the real harness; hostEnv overrides the stand-ins (undefined removes). */
function prepare(
  name: string,
  api: ScriptedApi,
  example: Example,
  hostEnv: Record<string, string | undefined> = {},
): PreparedLaunch {
  return prepareLive(w, w.instance(example, name), api.url, harnessHostEnv(w, api.url, hostEnv));
}

const shellTool = (p: PreparedLaunch, command: string) =>
  p.launch.harness === "pi" ? { name: "bash", input: { command } } : { name: "Bash", input: { command } };

/** The shell tool's one result, as the model was shown it, from one turn of the started session. */
async function runShell(p: PreparedLaunch, api: ScriptedApi, command: string): Promise<string> {
  api.replaceScript(scriptOf([{ tool_use: shellTool(p, command) }, { text: "turn-finished-network" }]));
  const r = await runLiveTurn(w, p, "do the task");
  expect(r.reply, `the turn failed: ${explain(r)}`).toBe("turn-finished-network");
  const seen = toolResultsIn(api.messageBodies().at(-1));
  expect(seen.length, "one shell result reached the model").toBe(1);
  return seen[0]!;
}

/** The host's record of what the session's model port let out: the launcher's proxy writes one JSON line a request. */
const egressLogOf = (p: PreparedLaunch): string => {
  if (p.session.modelProxy === null) throw new Error("the plan has no model proxy");
  return p.session.modelProxy.egressLog;
};

/** The proxy's egress log, which each test here reads after model calls: its absence fails an assertion, never reads as no records. */
const readEgress = (p: PreparedLaunch): EgressRecord[] => {
  expect(existsSync(egressLogOf(p)), `the proxy wrote its egress log at ${egressLogOf(p)}`).toBe(true);
  return readFileSync(egressLogOf(p), "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EgressRecord);
};

/** The session's bwrap argv without --unshare-net, which it must have had. */
const withoutUnshareNet = (a: string[]) => {
  if (!a.includes("--unshare-net")) throw new Error("the argv has no --unshare-net to remove");
  return withoutAnyOf("--unshare-net")(a);
};

const TRAP_SCRIPT = () =>
  [
    `perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => ${trap.tcpPort}, Timeout => 2) or do { print "TCP NO-CONNECT\\n"; exit 0 }; print "TCP CONNECTED\\n"'`,
    `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die; connect($s, pack_sockaddr_un("\\0${trap.abstractName}")) or do { print "ABSTRACT NO-CONNECT\\n"; exit 0 }; print "ABSTRACT CONNECTED\\n"'`,
    `getent hosts api.anthropic.com >/dev/null 2>&1 && echo DNS RESOLVED || echo DNS NONE`,
  ].join("; ");

describe("the network trap, through each CLI's own shell tool", () => {
  for (const example of ["claude-coder", "pi-coder"] as const) {
    it(`${example}: the host's loopback listener and abstract socket are out of reach, and the trap records nothing`, async () => {
      const api = await startScriptedApi();
      try {
        const p = prepare(`trap-${example}`, api, example);
        const before = { ...trap.hits };
        const out = await runShell(p, api, TRAP_SCRIPT());
        expect(out).toContain("TCP NO-CONNECT");
        expect(out).toContain("ABSTRACT NO-CONNECT");
        expect(out, "no name resolves inside").toContain("DNS NONE");
        expect(trap.hits, "the trap recorded no connection").toEqual(before);
        const egress = readEgress(p);
        expect(egress.length, "the model calls went through the proxy").toBeGreaterThan(0);
        expect(
          egress.every((r) => r.outcome === "allowed" && r.path === "/v1/messages"),
          "the model calls went through the proxy",
        ).toBe(true);
      } finally {
        await api.stop();
      }
    }, 90_000);
    it(`${example}: control: without --unshare-net on purpose, the same commands connect and the trap records them`, async () => {
      const api = await startScriptedApi();
      try {
        // Sharing the host's network, the model port moves to a free one: 8787 may be taken there.
        const p = launchWithBwrapArgv(
          launchWithHarnessModelPort(prepare(`open-${example}`, api, example), await freePort()),
          withoutUnshareNet,
        );
        const before = { ...trap.hits };
        const out = await runShell(p, api, TRAP_SCRIPT());
        expect(out).toContain("TCP CONNECTED");
        expect(out).toContain("ABSTRACT CONNECTED");
        expect(trap.hits.tcp, "the trap recorded the TCP connection").toBeGreaterThan(before.tcp);
        expect(trap.hits.abstract, "the trap recorded the abstract-socket connection").toBeGreaterThan(before.abstract);
      } finally {
        await api.stop();
      }
    }, 90_000);
  }
});

describe("the credential canary", () => {
  // The pattern is split so that no transcript of the command itself holds it whole.
  const CANARY_SCAN = [
    `p=stand-in-real; p="$p-key-"`,
    `echo ENV-CANARY $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -- "$p")`,
    `echo ENV-PLACEHOLDER $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c mosaic-placeholder)`,
    `echo FILE-CANARY $(grep -rl -- "$p" "$HOME" /tmp "$PWD" 2>/dev/null | wc -l)`,
  ].join("; ");
  const count = (out: string, label: string) => Number(new RegExp(`${label} (\\d+)`).exec(out)?.[1] ?? "NaN");

  it("claude-coder: the host's key goes upstream from the proxy; inside there is only the placeholder", async () => {
    const canary = makeCanary("stand-in-real-key");
    const api = await startScriptedApi();
    try {
      const p = prepare("canary", api, "claude-coder", { ANTHROPIC_API_KEY: canary, ANTHROPIC_AUTH_TOKEN: undefined });
      expect(p.launch.credentialSet).toBe("api-key");
      const out = await runShell(p, api, CANARY_SCAN);
      expect(count(out, "ENV-CANARY"), `no process inside holds the key: ${out}`).toBe(0);
      expect(count(out, "ENV-PLACEHOLDER"), "the harness holds the placeholder").toBeGreaterThan(0);
      expect(count(out, "FILE-CANARY"), "no file in HOME, /tmp or the workspace holds it").toBe(0);
      expect(api.credentialSeen("x-api-key", canary), "the scripted API got the real key").toBe(true);
      expect(api.credentialSeen("x-api-key", CREDENTIAL_PLACEHOLDER), "and never the placeholder").toBe(false);
      for (const b of api.messageBodies()) expect(b.includes(canary), "no request body holds the key").toBe(false);
      const egress = readEgress(p);
      expect(egress.length, "every model call is in the egress log").toBe(api.messageBodies().length);
      expect(readFileSync(egressLogOf(p), "utf8")).not.toContain(canary);
    } finally {
      await api.stop();
    }
  }, 90_000);
  it("claude-coder: control: with the key put back in the session's environment on purpose, the same scan finds it", async () => {
    const canary = makeCanary("stand-in-real-key");
    const api = await startScriptedApi();
    try {
      const p = prepare("canary-open", api, "claude-coder", {
        ANTHROPIC_API_KEY: canary,
        ANTHROPIC_AUTH_TOKEN: undefined,
      });
      const leaky = launchWithEnv(p, (env) => ({ ...env, ANTHROPIC_API_KEY: canary }));
      const out = await runShell(leaky, api, CANARY_SCAN);
      expect(count(out, "ENV-CANARY"), out).toBeGreaterThan(0);
    } finally {
      await api.stop();
    }
  }, 90_000);
});

describe("the proxy refuses what is not the model call", () => {
  for (const example of ["claude-coder", "pi-coder"] as const) {
    it(`${example}: GET /v1/models and POST /v1/files from the shell get an Anthropic-shaped 403, logged, never forwarded`, async () => {
      const api = await startScriptedApi();
      try {
        const p = prepare(`refuse-${example}`, api, example);
        const ask = (method: string, path: string) =>
          `perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => ${MODEL_PORT}, Timeout => 5) or die "no model port: $!"; print $s "${method} ${path} HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\n{}"; print while <$s>; print "\\n"'`;
        const out = await runShell(p, api, `${ask("GET", "/v1/models")}; ${ask("POST", "/v1/files")}`);
        expect(out.match(/HTTP\/1\.1 403/g)?.length, out).toBe(2);
        expect(out).toContain('"type":"permission_error"');
        const refused = readEgress(p)
          .filter((r) => r.outcome === "refused")
          .map((r) => `${r.method} ${r.path} ${r.status}`);
        expect(refused).toEqual(["GET /v1/models 403", "POST /v1/files 403"]);
        expect(
          api
            .requests()
            .map((r) => r.url)
            .filter((u) => !u.startsWith("/v1/messages")),
          "the scripted API saw only model calls",
        ).toEqual([]);
      } finally {
        await api.stop();
      }
    }, 90_000);
  }
});
