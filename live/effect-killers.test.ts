import { lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { binds, mountStubs } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { MosaicError } from "../src/core/errors.ts";
import type { FsView } from "../src/core/gate/fs-view.ts";
import type { Bind, HostFacts, SandboxSpec } from "../src/core/sandbox/types.ts";
import { SECCOMP_RULES, seccompArchOf, seccompProgram } from "../src/core/sandbox/seccomp.ts";
import { chownTree, identityProblem, makeAttackWorld, type AttackWorld } from "../src/conformance/attacks/world.ts";
import { withBindsBeforeLast, exposedBind } from "../src/conformance/controls/binds.ts";
import { withRunnerCommand } from "../src/conformance/controls/argv.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { runConfined } from "../src/conformance/worlds/sandbox-run.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { realFsView } from "../src/host/fs-view.ts";
import { removeMountStubs } from "../src/host/mount-stubs.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { runAsUser, userUid } from "./support/as-user.ts";
import { markerTurns, type MarkerCase } from "./support/turn-marker.ts";

// Effect killers for catalog mutants whose contract killers see only the plan (a bind row, a
// refusal): here each one's effect is shown in a real sandbox, as root and as an unprivileged uid,
// in the attack table's world (live/attacks.test.ts). Each protection has two arms:
//   blocked  the shipped planner: the attack does not get through (or the launch is refused);
//   control  the protection removed on purpose: the same attack gets through.
// A mutant of the protection makes its "blocked" arm fail on an assertion.
const sandbox = checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT }));

type Run = { out: string; stderr: string; status: number | null };

/**
 * Plans a session for spec as the launcher does (binds() refuses a spec it cannot confine), then
 * runs `script` in place of the runner, in a sandbox spawned as the launcher spawns it: the shipped
 * seccomp filter, a root host's cgroups, a root caller's trees handed to the session's identity and
 * the drop to it. The mount points bwrap made in the workspace are removed afterwards.
 */
async function confined(
  w: AttackWorld,
  spec: SandboxSpec,
  script: string,
  opts: { facts?: HostFacts; fs?: FsView; table?: (t: Bind[]) => Bind[] } = {},
): Promise<Run> {
  const facts = opts.facts ?? w.facts;
  const fs = opts.fs ?? realFsView();
  const planned = binds(spec, facts, fs);
  const stubs = mountStubs(spec, fs);
  const argv = withRunnerCommand(bwrapArgv(spec, facts, (opts.table ?? ((t) => t))(planned)), [
    "/bin/sh",
    "-c",
    script,
  ]);
  try {
    const r = await runConfined({
      command: [...w.asIdentity, ...argv],
      env: w.env,
      facts,
      timeoutMs: 20_000,
      seccomp: seccompProgram(seccompArchOf(facts.arch)!, SECCOMP_RULES).bytes,
      asSession: { trees: [spec.workspace, spec.runDir] },
    });
    return { out: r.stdout, stderr: r.stderr, status: r.status };
  } finally {
    removeMountStubs(stubs);
  }
}

/** The run, or the refusal the planner threw instead of running anything. */
async function runOrRefusal(run: () => Promise<Run>): Promise<{ run: Run | null; refusal: MosaicError | null }> {
  try {
    return { run: await run(), refusal: null };
  } catch (e) {
    if (e instanceof MosaicError) return { run: null, refusal: e };
    throw e;
  }
}

const RAN = "SANDBOX-RAN";
const explain = (r: Run | null) =>
  r === null
    ? "no sandbox ran"
    : `stdout: ${r.out.slice(0, 600)}\nstderr: ${r.stderr.slice(0, 600)}\nstatus ${r.status}`;

for (const identity of ["root", "user"] as const) {
  const it = liveIt(`bwrap, as ${identity}`, sandbox ?? identityProblem(identity));
  describe(`effects as ${identity}`, () => {
    let w: AttackWorld;
    beforeAll(async () => {
      if ((sandbox ?? identityProblem(identity)) === null) w = await makeAttackWorld(identity);
    });
    afterAll(async () => w?.close());

    describe("bind-checkout: the checkout beyond the runner's files", () => {
      const notes = () => join(w.spec.repo, "NOTES.md");
      const marker = () => `checkout-only-${w.stand.secret}`;
      const script = () => `cat "${notes()}" 2>&1; echo ${RAN}`;
      beforeAll(() => {
        if (w !== undefined) writeFileSync(notes(), `${marker()}\n`, { mode: 0o644 });
      });

      it("blocked: a file of the checkout beside the runner's own cannot be read in the sandbox", async () => {
        const r = await confined(w, w.spec, script());
        expect(r.out, `the sandbox ran the script\n${explain(r)}`).toContain(RAN);
        expect(r.out, `a checkout file that is not the runner's was readable\n${explain(r)}`).not.toContain(marker());
      });

      it("control: with the whole checkout bound on purpose, the same file is read", async () => {
        const r = await confined(w, w.spec, script(), {
          table: (t) => withBindsBeforeLast(t, [exposedBind(w.spec.repo)]),
        });
        expect(r.out, `the control did not read the file, so the row proves nothing\n${explain(r)}`).toContain(
          marker(),
        );
      });
    });

    describe("ws-contains-home: a workspace that holds the founder's HOME", () => {
      const spec = () => ({ ...w.spec, workspace: w.stand.founderHome });
      const script = () => `cat "${w.stand.files.sshKey}" 2>&1; echo ${RAN}`;
      let owner: { uid: number; gid: number };
      beforeAll(() => {
        if (w === undefined) return;
        const st = lstatSync(w.stand.founderHome);
        owner = { uid: st.uid, gid: st.gid };
      });
      // A root caller's launch hands the workspace to the session: give the founder's files back.
      const giveBack = () => chownTree(w.stand.founderHome, owner);

      it("blocked: the launch is refused, and no sandbox reads the founder's key", async () => {
        const { run, refusal } = await runOrRefusal(() => confined(w, spec(), script())).finally(giveBack);
        expect(
          run?.out ?? "",
          `the session read the founder's key through its workspace\n${explain(run)}`,
        ).not.toContain(w.stand.secret);
        expect(refusal?.code, `the planner refused the workspace\n${explain(run)}`).toBe("contains-home");
      });

      it("control: with the founder's HOME placed elsewhere in the facts on purpose, the session reads the key", async () => {
        const { run, refusal } = await runOrRefusal(() =>
          confined(w, spec(), script(), { facts: { ...w.facts, home: "/nonexistent-founder-home" } }),
        ).finally(giveBack);
        expect(refusal, "the control was not refused").toBeNull();
        expect(run?.out, `the control did not read the key, so the row proves nothing\n${explain(run)}`).toContain(
          w.stand.secret,
        );
      });
    });

    describe("protected-link-accepted: a symbolic link at a protected path", () => {
      const link = () => join(w.ws, ".gitattributes");
      const planted = "* filter=planted-by-the-session";
      // The link's target gets the read-only bind; the session replaces the link itself.
      const script = () =>
        `rm -f "${link()}" && printf '%s\\n' '${planted}' > "${link()}" && echo REPLACED; echo ${RAN}`;
      const plantLink = () => {
        symlinkSync("inside.txt", link());
        chownTree(w.data, w.session);
      };
      const removeLink = () => rmSync(link(), { force: true });
      const got = () => {
        try {
          return lstatSync(link()).isFile() && readFileSync(link(), "utf8").includes(planted);
        } catch {
          return false;
        }
      };
      /** The filesystem as the planner sees it, with the link shown as a plain file: the refusal removed on purpose. */
      const linkAsFile: FsView = {
        lstat: (p) => (p === link() ? { kind: "file" } : realFsView().lstat(p)),
      };

      it("blocked: the launch is refused, and the session cannot replace the link with a .gitattributes of its own", async () => {
        plantLink();
        try {
          const { run, refusal } = await runOrRefusal(() => confined(w, w.spec, script()));
          expect(got(), `the session replaced the protected link\n${explain(run)}`).toBe(false);
          expect(refusal?.code, `the planner refused the link\n${explain(run)}`).toBe("protected-link");
        } finally {
          removeLink();
        }
      });

      it("control: with the link planned as a plain file on purpose, the session replaces it", async () => {
        plantLink();
        try {
          const { run, refusal } = await runOrRefusal(() => confined(w, w.spec, script(), { fs: linkAsFile }));
          expect(refusal, "the control was not refused").toBeNull();
          expect(run?.out, `the sandbox ran the script\n${explain(run)}`).toContain(RAN);
          expect(got(), `the control did not replace the link, so the row proves nothing\n${explain(run)}`).toBe(true);
          expect(readFileSync(join(w.ws, "inside.txt"), "utf8"), "the link's target kept its bytes").toBe(
            "a file inside the workspace\n",
          );
        } finally {
          removeLink();
        }
      });
    });
  });
}

// turn-stale-marker: the runner's turn verdict for a Pi session is its agent_end marker. Each turn
// starts with the marker removed; left from the turn before, a turn that never wrote it counts.
const MARKER_FAILED =
  "The turn failed: the harness exited 0 but never wrote its agent_end marker, so the gated turn did not end";

function markerAsUser(which: MarkerCase): string[] {
  const r = runAsUser("live/support/turn-marker-as.ts", "mosaic-turn-marker", [which], 90_000);
  expect(r.line, `the ${which} case reports as uid ${userUid}: ${r.stderr.slice(-800)}`).toMatch(/^\{"uid":/);
  const got = JSON.parse(r.line) as { uid: number; replies: string[] };
  expect(got.uid, "the launcher and the session ran as the unprivileged uid").toBe(userUid);
  return got.replies;
}

describe("turn-stale-marker: a turn that never wrote its agent_end marker, after one that did", () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    if (sandbox === null) w = await makeRuntimeWorld("effect-killers");
  });
  afterAll(async () => w?.close());
  const arms: Record<"root" | "user", (which: MarkerCase, name: string) => Promise<string[]>> = {
    root: (which, name) => markerTurns(w, name, which),
    user: async (which) => markerAsUser(which),
  };

  for (const identity of ["root", "user"] as const) {
    const it = liveIt(`bwrap, as ${identity}`, sandbox ?? identityProblem(identity));
    it(`as ${identity}: blocked: turn 2 fails, the marker turn 1 left does not count for it`, async () => {
      const replies = await arms[identity]("blocked", "marker-blocked");
      expect(replies[0], "turn 1 wrote its marker and counts").toBe("turn one");
      expect(replies[1], "turn 2 never wrote its marker: it failed, whatever turn 1 left").toBe(MARKER_FAILED);
    }, 120_000);

    it(`as ${identity}: control: with turn 2 writing the marker itself on purpose, it counts`, async () => {
      const replies = await arms[identity]("control", "marker-control");
      expect(replies, "a marker present at the turn's end counts the turn").toEqual(["turn one", "turn two"]);
    }, 120_000);
  }
});
