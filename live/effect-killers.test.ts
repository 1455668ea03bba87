import { lstatSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { runAttack, type AttackResult } from "../src/conformance/attacks/run.ts";
import type { AttackRow } from "../src/conformance/attacks/table.ts";
import { chownTree, identityProblem, makeAttackWorld, type AttackWorld } from "../src/conformance/attacks/world.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { runAsUser, userUid } from "./support/as-user.ts";
import { markerTurns, type MarkerCase } from "./support/turn-marker.ts";

// Effect killers for catalog mutants whose contract killers see only the plan (a bind row, a
// refusal): here each one's effect is shown in a session the shipped launcher started
// (prepareLaunch(), start()) on the attack table's host, as root and as an unprivileged uid. Each
// protection has two arms:
//   blocked  the launch as planned: the attack does not get through (or the launch is refused);
//   control  the protection removed on purpose: the same attack gets through.
// A mutant of the protection makes its "blocked" arm fail on an assertion.
const sandbox = checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT }));

const explain = (r: AttackResult) =>
  r.refused !== null
    ? `refused: ${r.refused.code}: ${r.refused.message}`
    : `out: ${r.out.slice(0, 600)}\nstderr: ${r.stderr.slice(0, 800)}\nstatus ${r.status}`;

/** An ad hoc row: a script and how the host tells it got through; its layers are the arm's to name. */
const row = (id: string, script: (w: AttackWorld) => string, through: AttackRow["through"]): AttackRow => ({
  id,
  klass: "effect",
  what: id,
  layers: [],
  script,
  through,
});

/** The checkout's README: a file of the checkout that is none of the runner's. */
const README = join(REPO_ROOT, "README.md");
const readmeLine = () => readFileSync(README, "utf8").split("\n")[0]!;

for (const identity of ["root", "user"] as const) {
  const it = liveIt(`bwrap, as ${identity}`, sandbox ?? identityProblem(identity));
  describe(`effects as ${identity}`, () => {
    let w: AttackWorld;
    beforeAll(async () => {
      if ((sandbox ?? identityProblem(identity)) === null) w = await makeAttackWorld(identity);
    });
    afterAll(async () => w?.close());

    describe("bind-checkout: the checkout beyond the runner's files", () => {
      const readme = row(
        "bind-checkout",
        () => `cat "${README}" 2>&1`,
        (r) => r.out.includes(readmeLine()),
      );

      it("blocked: a file of the checkout beside the runner's own cannot be read in the sandbox", async () => {
        const r = await runAttack(w, readme, []);
        expect(r.ran, `the session ran the script\n${explain(r)}`).toBe(true);
        expect(r.through, `a checkout file that is not the runner's was readable\n${explain(r)}`).toBe(false);
      });

      it("control: with the whole checkout bound on purpose, the same file is read", async () => {
        const r = await runAttack(w, readme, ["no-checkout"]);
        expect(r.through, `the control did not read the file, so the row proves nothing\n${explain(r)}`).toBe(true);
      });
    });

    describe("ws-contains-home: a workspace that holds the founder's HOME", () => {
      const key = row(
        "ws-contains-home",
        (w) => `cat "${w.stand.files.sshKey}" 2>&1`,
        (r, w) => r.out.includes(w.stand.secret),
      );
      let owner: { uid: number; gid: number };
      beforeAll(() => {
        if (w === undefined) return;
        const st = lstatSync(w.stand.founderHome);
        owner = { uid: st.uid, gid: st.gid };
      });
      // A root caller's launch hands the workspace to the session: give the founder's files back.
      const giveBack = () => chownTree(w.stand.founderHome, owner);

      it("blocked: the launch is refused, and no sandbox reads the founder's key", async () => {
        const r = await runAttack(w, key, [], { workspace: w.stand.founderHome }).finally(giveBack);
        expect(r.out, `the session read the founder's key through its workspace\n${explain(r)}`).not.toContain(
          w.stand.secret,
        );
        expect(r.refused?.code, `the planner refused the workspace\n${explain(r)}`).toBe("contains-home");
      });

      it("control: with the founder's HOME placed elsewhere in the facts on purpose, the session reads the key", async () => {
        const r = await runAttack(w, key, [], {
          workspace: w.stand.founderHome,
          home: "/nonexistent-founder-home",
        }).finally(giveBack);
        expect(r.refused, "the control was not refused").toBeNull();
        expect(r.out, `the control did not read the key, so the row proves nothing\n${explain(r)}`).toContain(
          w.stand.secret,
        );
      });
    });

    describe("protected-link-accepted: a symbolic link at a protected path", () => {
      const link = () => join(w.ws, ".gitattributes");
      const planted = "* filter=planted-by-the-session";
      // The link's target gets the read-only bind; the session replaces the link itself.
      const replace = row(
        "protected-link-accepted",
        () => `rm -f "${link()}" && printf '%s\\n' '${planted}' > "${link()}" && echo REPLACED`,
        () => {
          try {
            return lstatSync(link()).isFile() && readFileSync(link(), "utf8").includes(planted);
          } catch {
            return false;
          }
        },
      );
      const plantLink = () => {
        symlinkSync("inside.txt", link());
        chownTree(w.data, w.session);
      };

      it("blocked: the launch is refused, and the session cannot replace the link with a .gitattributes of its own", async () => {
        plantLink();
        try {
          const r = await runAttack(w, replace, []);
          expect(r.through, `the session replaced the protected link\n${explain(r)}`).toBe(false);
          expect(r.refused?.code, `the planner refused the link\n${explain(r)}`).toBe("protected-link");
        } finally {
          rmSync(link(), { force: true });
        }
      });

      it("control: with the link planned as a plain file on purpose, the session replaces it", async () => {
        plantLink();
        try {
          const r = await runAttack(w, replace, [], { filesNotLinks: [link()] });
          expect(r.refused, "the control was not refused").toBeNull();
          expect(r.ran, `the session ran the script\n${explain(r)}`).toBe(true);
          expect(r.through, `the control did not replace the link, so the row proves nothing\n${explain(r)}`).toBe(
            true,
          );
          expect(readFileSync(join(w.ws, "inside.txt"), "utf8"), "the link's target kept its bytes").toBe(
            "a file inside the workspace\n",
          );
        } finally {
          rmSync(link(), { force: true });
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
