import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Bind } from "../src/core/sandbox/types.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import type { PreparedLaunch } from "../src/host/launcher.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { startScriptedApi, toolResultsIn } from "../src/conformance/stand-ins/scripted-api.ts";
import { loadModelScript } from "../src/conformance/stand-ins/model-script/format.ts";
import type { ScriptFailure } from "../src/conformance/stand-ins/model-script/record.ts";
import { CLAUDE_BIN, explain, prepareLive, runLiveTurn } from "../src/conformance/worlds/live-session.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { exposedBind, withBindsBeforeLast } from "../src/conformance/controls/binds.ts";
import { launchWithBinds } from "../src/conformance/controls/launch.ts";

// Real Claude Code and Pi sessions in real bwrap sandboxes, started by the one launcher
// (prepareLaunch(), start()) with the shipped examples' own argv, driven by the scripted API. The
// model's one tool call is a shell that tries the founder's stand-in secrets and the places beside
// the session; its output comes back to the API as the tool result, so the test reads what the
// model would have seen. Breaking it on purpose (the founder's HOME bound into the prepared
// launch) shows each attack works.
const CLAUDE = CLAUDE_BIN;
const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");

const hostFacts = readHostFacts({ repo: REPO_ROOT });
const problem =
  checkoutProblem(REPO_ROOT) ??
  sandboxProblem(hostFacts) ??
  (existsSync(CLAUDE) ? null : `${CLAUDE} missing (npm ci)`) ??
  (existsSync(PI_CLI) ? null : `${PI_CLI} missing (npm ci)`);
const it = liveIt("bwrap, Claude Code and Pi", problem);

let w: RuntimeWorld;
let founderHome: string;
let SECRET: string;

beforeAll(async () => {
  w = await makeRuntimeWorld("confined");
  founderHome = w.stand.founderHome;
  SECRET = w.stand.secret;
});

afterAll(async () => {
  await w?.close();
});

const EXAMPLE = { "claude-code": "claude-coder", pi: "pi-coder" } as const;

/** The model's one Bash call: each line "name yes|no", then an attempt to print the secret. */
function attackScript(ws: string): string {
  const t = (name: string, cmd: string) =>
    `if sh -c '${cmd}' >/dev/null 2>&1; then echo "${name} yes"; else echo "${name} no"; fi`;
  const f = w.stand.files;
  return [
    t("read-ssh-key", `cat ${f.sshKey}`),
    t("read-stand-in-env", `cat ${f.secretsEnv}`),
    t("read-mosaic", `cat ${f.mosaicState}`),
    t("read-git-credentials", `cat ${f.gitCredentials}`),
    t("read-other-workspace", `cat ${f.otherWorkspace}`),
    // A file of the checkout that is none of the runner's: those are bound, the rest is not.
    t("read-checkout", `cat ${REPO_ROOT}/README.md`),
    t("write-beside-workspace", `echo x > ${w.data}/workspaces/acme/planted.txt`),
    t("write-workspace", `echo x > ${ws}/made-by-session.txt`),
    t("write-tmp", "echo x > /tmp/t"),
    t("write-home", 'touch "$HOME/h"'),
    `cat ${f.secretsEnv} 2>/dev/null; true`,
  ].join("\n");
}

type Outcome = { answers: Record<string, string>; bodies: string[]; failures: ScriptFailure[]; stderr: string };

/** One real session through the launcher: the harness CLI's turn, in the workspace, in the sandbox the (edited) plan describes. */
async function runSession(
  harness: "claude-code" | "pi",
  name: string,
  edit: (p: PreparedLaunch) => PreparedLaunch = (p) => p,
): Promise<Outcome & { ws: string }> {
  const toolName = harness === "pi" ? "bash" : "Bash";
  const instance = w.instance(EXAMPLE[harness], name);
  const ws = instance.workspace;
  const turns = [{ tool_use: { name: toolName, input: { command: attackScript(ws) } } }, { text: "done" }];
  const api = await startScriptedApi({
    script: loadModelScript({ turns }, { source: "live/confined-session.test.ts" }),
  });
  try {
    const r = await runLiveTurn(w, edit(prepareLive(w, instance, api.url)), "go");
    const bodies = api.messageBodies();
    const toolResult = toolResultsIn(bodies[1]).join("\n");
    const answers = Object.fromEntries([...toolResult.matchAll(/^([a-z-]+) (yes|no)$/gm)].map((m) => [m[1]!, m[2]!]));
    return { answers, bodies, failures: api.failures(), stderr: explain(r), ws };
  } finally {
    await api.stop();
  }
}

const CONFINED = {
  "read-ssh-key": "no",
  "read-stand-in-env": "no",
  "read-mosaic": "no",
  "read-git-credentials": "no",
  "read-other-workspace": "no",
  "read-checkout": "no",
  "write-beside-workspace": "no",
  "write-workspace": "yes",
  "write-tmp": "yes",
  "write-home": "yes",
};

/** The founder's HOME bound in, read-only, just before the private /tmp: the attack's door. */
function withFounderHome(table: Bind[]): Bind[] {
  return withBindsBeforeLast(table, [exposedBind(founderHome)]);
}

describe("real sessions in real bwrap sandboxes keep the stand-in secrets out of reach", () => {
  for (const harness of ["claude-code", "pi"] as const) {
    it(`${harness}: the model's shell reaches its workspace, /tmp and HOME, and nothing of the founder's`, async () => {
      const out = await runSession(harness, `${harness}-confined`);
      expect(out.bodies.length, `the CLI made both model calls; stderr: ${out.stderr.slice(0, 600)}`).toBe(2);
      expect(out.answers).toEqual(CONFINED);
      expect(out.failures, "every request was the script's").toEqual([]);
      for (const b of out.bodies) expect(b.includes(SECRET), "the stand-in secret never reaches the model").toBe(false);
      expect(existsSync(join(w.data, "workspaces/acme/planted.txt"))).toBe(false);
      expect(existsSync(join(out.ws, "made-by-session.txt"))).toBe(true);
    }, 90_000);

    it(`${harness}: breaking it on purpose, with the founder's HOME bound in, the secrets reach the model`, async () => {
      const out = await runSession(harness, `${harness}-broken`, (p) => launchWithBinds(p, withFounderHome));
      expect(out.bodies.length, `stderr: ${out.stderr.slice(0, 600)}`).toBe(2);
      expect(out.answers).toEqual({
        ...CONFINED,
        "read-ssh-key": "yes",
        "read-stand-in-env": "yes",
        "read-mosaic": "yes",
        "read-git-credentials": "yes",
      });
      expect(
        toolResultsIn(out.bodies[1]).join("\n").includes(SECRET),
        "with the door open the secret reaches the model",
      ).toBe(true);
    }, 90_000);
  }
});
