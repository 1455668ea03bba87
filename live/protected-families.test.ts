import { afterAll, beforeAll, describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { runAsUser, userUid } from "./support/as-user.ts";
import { FAMILY_DIRS, FAMILY_FILES, FOUNDERS, familyWrites, type FamilyRun } from "./support/protected-families.ts";

// The protected table's families (lefthook's and mise's local configs, .config/, .devcontainer.json,
// every other forge's pipeline) through the shipped launcher: the session can neither write one the
// founder has nor create one that is missing, and nothing is left behind on the host. The control
// takes the families' binds out of the plan on purpose, and every write gets through.
const itBwrap = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));
const ALL = [...FAMILY_FILES, ...FAMILY_DIRS];
const every = (verdict: string) => Object.fromEntries(ALL.map((n) => [n, verdict]));

function expectBlocked(r: FamilyRun): void {
  expect(r.writes, "no name of any family could be written or created").toEqual(every("REFUSED"));
  expect(r.founders, "the founder's own files keep their text").toEqual(FOUNDERS);
  expect(r.leftBehind, "no stand-in is left behind in the founder's workspace").toEqual([]);
}

function expectControl(r: FamilyRun): void {
  expect(r.writes, "without the families' binds every write gets through: the attack is real").toEqual(every("WROTE"));
  expect(r.founders["lefthook-local.yml"], "the founder's lefthook-local.yml was overwritten").toBe("planted");
}

describe("the protected families, through the shipped launcher", () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    w = await makeRuntimeWorld("families");
  });
  afterAll(async () => w?.close());

  itBwrap(
    "as the tests' own uid: every family name is refused, the founder's stay as they were; the control writes them all",
    async () => {
      expectBlocked(await familyWrites(w, "families", false));
      expectControl(await familyWrites(w, "families-control", true));
    },
    120_000,
  );

  itBwrap(
    "as an unprivileged uid (65534 under setpriv when the tests run as root): the same",
    () => {
      const r = runAsUser("live/support/protected-families-as.ts", "mosaic-families", [], 150_000);
      let parsed: { blocked: FamilyRun; control: FamilyRun } | null = null;
      try {
        parsed = JSON.parse(r.line);
      } catch {}
      expect(parsed, `no report from the run as ${userUid}: ${r.stderr}`).not.toBeNull();
      expect(parsed!.blocked.uid).toBe(userUid);
      expectBlocked(parsed!.blocked);
      expectControl(parsed!.control);
    },
    180_000,
  );
});
