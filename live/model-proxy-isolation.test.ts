// A session can hurt only its own model proxy, live: a fake-adapter session through the real
// launcher and runner in bwrap sends the review's two findings to its model port (HEAD / with a
// Trailer header, which crashed the host's one process and with it every session's proxy; 28 MiB
// of {}, which grew it by 1.8 GiB and stalled it for seconds). The host here is a process of its
// own (live/support/model-proxy-as.ts) serving two sessions, run as the tests' identity (root in
// CI) and as an unprivileged uid: it goes on, its memory unmoved, the other session's model call
// passes, and the attacker's own proxy answers its next call.
// Positive control: the attacker's socket served instead by live/support/in-process-proxy.ts, a
// small server reproducing the old design's failure mode (the request handled in the serving
// process, parsed whole, forwarded from its 'end' handler): the Trailer request ends that process
// with node's ERR_HTTP_TRAILER_INVALID, and the {} body grows it past a GiB.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { USER_UID, runAsUser, runsAsRoot, userUid } from "./support/as-user.ts";
import type { IsolationObserved } from "./support/model-proxy-as.ts";

const it = liveIt("bwrap", checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT })));
const SCRIPT = "live/support/model-proxy-as.ts";
const MiB = 1024 * 1024;

/** One arm as the tests' own identity: the host a process of its own, in a fresh root under /var/tmp. */
function runAsSelf(arm: string): { line: string; stderr: string } {
  const root = mkdtempSync("/var/tmp/mosaic-proxy-isolation-");
  try {
    // A root host's sessions run as their own uid, which must reach the world under it.
    chmodSync(root, 0o755);
    const env = {
      PATH: `${join(REPO_ROOT, "node_modules/.bin")}:/usr/bin:/bin`,
      HOME: "/nonexistent",
      LANG: "C.UTF-8",
    };
    const r = spawnSync(process.execPath, [join(REPO_ROOT, SCRIPT), root, arm], {
      env,
      encoding: "utf8",
      timeout: 240_000,
    });
    return { line: (r.stdout ?? "").trim().split("\n").at(-1) ?? "", stderr: (r.stderr ?? "").slice(-1500) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function observe(asUser: boolean, arm: "shipped" | "control"): IsolationObserved {
  const r = asUser ? runAsUser(SCRIPT, "mosaic-proxy-isolation", [arm], 240_000) : runAsSelf(arm);
  expect(r.line, `the ${arm} host reports: ${r.stderr.slice(-800)}`).toMatch(/^\{"uid":/);
  const got = JSON.parse(r.line) as IsolationObserved;
  expect(got.uid, "the host ran as the identity of this arm").toBe(asUser ? userUid : process.getuid!());
  return got;
}

function expectIsolated(asUser: boolean): void {
  const s = observe(asUser, "shipped");
  const why = JSON.stringify(s);
  expect(s.attacker.headTrailer, `HEAD / with a Trailer went up and was answered (${why})`).toMatch(
    /^HTTP\/1\.1 [1-4]\d\d /,
  );
  expect(s.attacker.empties, "28 MiB of {}: refused before it is parsed").toBe("413");
  expect(s.attacker.callAfter, "the attacker's own proxy answers its next call").toBe("200");
  expect(s.other, "the other session's model call passes").toBe("200");
  expect(
    s.upstream.map((u) => `${u.method} ${u.url} ${u.trailer ? "with" : "without"} trailer`),
    "the upstream received the HEAD without its Trailer, then the two plain calls, never the {} body",
  ).toEqual(["HEAD / without trailer", "POST /v1/messages without trailer", "POST /v1/messages without trailer"]);
  expect(
    s.host.rssGrowth,
    `the host process's memory grew by ${s.host.rssGrowth} bytes (its longest stall ${s.host.maxLagMs} ms)`,
  ).toBeLessThan(64 * MiB);

  const c = observe(asUser, "control");
  expect(c.inProcess?.afterTrailer, "control: the Trailer request ended the process serving it in-process").toMatch(
    /^ended \(exit [1-9]\d*\): [\s\S]*ERR_HTTP_TRAILER_INVALID/,
  );
  expect(
    c.inProcess!.peakRss,
    `control: 28 MiB of {} took the in-process server's memory to ${c.inProcess!.peakRss} bytes (its longest stall ${c.inProcess!.maxLagMs} ms)`,
  ).toBeGreaterThan(1024 * MiB);
  expect(c.attacker.empties, "control: parsed whole, then refused by the body check").toBe("400");
}

describe("a session can hurt only its own model proxy", () => {
  it("as the tests' own identity (root in CI): HEAD / with a Trailer and 28 MiB of {} leave the host and the other session unharmed; control: a proxy in the serving process ends, and grows past a GiB", () => {
    expectIsolated(false);
  }, 600_000);

  it(`as an unprivileged uid (${runsAsRoot ? `${USER_UID} under setpriv` : "the tests' own"}): the same`, () => {
    expectIsolated(true);
  }, 600_000);
});
