import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { readBwrapVersion } from "../src/host/host-facts.ts";

const it = liveIt(
  "bwrap installed",
  checkoutProblem(REPO_ROOT) ??
    (readBwrapVersion("bwrap") === null ? "bwrap is not on PATH (apt-get install bubblewrap)" : null),
);

describe("the plan command on this machine", () => {
  it("plans the shipped example, probes bwrap, and exits 0", () => {
    const r = spawnSync(
      process.execPath,
      [join(REPO_ROOT, "src/cli/main.ts"), "plan", "scenarios/plan/pi-coder.json", "--json"],
      { encoding: "utf8", cwd: REPO_ROOT },
    );
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    const root = process.getuid?.() === 0;
    const uid = Number(/^--reuid=([0-9]+)$/.exec(doc.argv[1] ?? "")?.[1]);
    const drop = root ? ["setpriv", `--reuid=${uid}`, "--regid=65534", "--clear-groups", "--"] : [];
    expect(
      doc.argv.slice(0, drop.length + 1),
      "the command runs bwrap, as the session's own uid when the caller is root",
    ).toEqual([...drop, "bwrap"]);
    if (root)
      expect(uid, "a uid of the sessions' own range, not root's and not nobody").toBeGreaterThanOrEqual(1879048192);
    expect(doc.binds.at(-1).inside).toBe("/tmp");
    expect(doc.probe).toEqual({ ok: true, bwrapVersion: expect.stringMatching(/^bubblewrap /), problem: null });
  });
});
