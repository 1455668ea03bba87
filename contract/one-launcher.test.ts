// One launcher: every live test, scenario, attack arm and benchmark starts its sessions through
// prepareLaunch() and start(). A file outside the launcher that carries out a launch step itself
// (spawns the sandbox, makes session cgroups, hands a tree over, drops to the session's uid, writes
// the seccomp program, makes the runner's node) or runs bwrap by hand is listed here with why, and
// says the same in its own first comment line, so the list cannot grow without a reviewer seeing it.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";

/** The parts that run sessions for the tiers: the launcher's own code (src/host, src/core) is not among them. */
const SCOPE = ["live", "matrix", "scripts", "src/conformance", "src/cli"];

/** Files that may carry out a launch step themselves, each with why (their `// Not through start():` line says the same). */
const NOT_THROUGH_START: Readonly<Record<string, string>> = {
  "live/handover.test.ts": "it tests handOver itself on disk, as root; no session runs.",
  "live/runtime.test.ts": "a decoy bwrap that is no session's, which recover() must leave alone",
  "scripts/bench/sandbox.ts": "it times bwrap's own spawn of `true`, bare and hardened; no session runs.",
};

/** Names that are a launch step of start()'s, imported from the host. */
const LAUNCH_STEPS = [
  "spawnSandbox",
  "joinCgroups",
  "makeSessionCgroups",
  "handOver",
  "prepareRunnerNode",
  "dropToSession",
  "writeSeccompProgram",
  "prepareSeccompFile",
];

/** Why a source carries out a launch step by itself, or null. */
function launchStepIn(text: string): string | null {
  for (const m of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*["'][^"']+["']/g)) {
    if (/^\s*import\s+type\b/.test(m[0])) continue;
    const names = m[1]!.split(",").map(
      (n) =>
        n
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)[0]!,
    );
    const step = names.find((n) => LAUNCH_STEPS.includes(n));
    if (step !== undefined) return `imports ${step}`;
  }
  if (/spawn(?:Sync)?\(\s*["'](?:[^"']*\/)?bwrap["']/.test(text) || /\[\s*["']bwrap["']\s*,/.test(text))
    return "runs bwrap by hand";
  return null;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith(".ts") ? [p] : [];
  });
}

describe("one launcher", () => {
  it("no file outside the launcher carries out a launch step itself, but those listed with why", () => {
    const found = SCOPE.flatMap((d) => tsFiles(join(REPO_ROOT, d)))
      .map((p) => ({ file: relative(REPO_ROOT, p), why: launchStepIn(readFileSync(p, "utf8")) }))
      .filter((f) => f.why !== null);
    expect(
      found.filter((f) => !(f.file in NOT_THROUGH_START)).map((f) => `${f.file}: ${f.why}`),
      "start sessions through prepareLaunch() and start(); a file that truly cannot is listed in NOT_THROUGH_START with why",
    ).toEqual([]);
    expect(
      Object.keys(NOT_THROUGH_START).filter((f) => !found.some((x) => x.file === f)),
      "a listed file that no longer does it leaves the list",
    ).toEqual([]);
    for (const [file, why] of Object.entries(NOT_THROUGH_START))
      expect(readFileSync(join(REPO_ROOT, file), "utf8"), `${file} says why itself`).toContain(
        `// Not through start(): ${why}`,
      );
  });

  it("positive control: an import of a launch step, or bwrap spawned by hand, is found; a type import is not", () => {
    expect(launchStepIn(`import { spawnSandbox } from "../../host/sandbox-spawn.ts";`)).toBe("imports spawnSandbox");
    expect(launchStepIn(`import {\n  ask,\n  handOver as give,\n} from "./x.ts";`)).toBe("imports handOver");
    expect(launchStepIn(`const c = spawn("bwrap", ["--dev-bind", "/", "/"]);`)).toBe("runs bwrap by hand");
    expect(launchStepIn(`const argv = ["bwrap", "--unshare-user"];`)).toBe("runs bwrap by hand");
    expect(launchStepIn(`import type { handOver } from "./x.ts";`)).toBe(null);
    expect(launchStepIn(`import { prepareLaunch, start } from "../src/host/launcher.ts";`)).toBe(null);
  });
});
