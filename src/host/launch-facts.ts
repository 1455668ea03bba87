import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../core/bundle/digest.ts";
import type { SourceDigests } from "../core/bundle/plan-bundle.ts";
import type { LaunchFacts } from "../core/launch/decide-launch.ts";
import { loadHarness } from "../core/route/loader.ts";
import type { BinaryFacts } from "../core/route/types.ts";
import type { Harness, HostFacts } from "../core/sandbox/types.ts";
import { sandboxProblem } from "./sandbox-probe.ts";

/** The sources a session's confinement runs from; their digests go into every manifest. */
export const SOURCE_FILES: Readonly<Record<keyof SourceDigests, string>> = {
  gate: "src/host/claude-gate.ts",
  extension: "src/host/pi-extension.ts",
  mcpServer: "src/host/mcp-server.ts",
  tools: "src/core/tools/catalog.ts",
};

/** sha256 of each source file, or "absent" for one that is not there (the gate then blocks or refuses, it never runs open). */
export function readSourceDigests(repo: string): SourceDigests {
  const read = (rel: string) => {
    try {
      return sha256(readFileSync(join(repo, rel), "utf8"));
    } catch {
      return "absent";
    }
  };
  return {
    gate: read(SOURCE_FILES.gate),
    extension: read(SOURCE_FILES.extension),
    mcpServer: read(SOURCE_FILES.mcpServer),
    tools: read(SOURCE_FILES.tools),
  };
}

/** Whether the binary exists, is executable and answers its version probe. A relative path is never run. */
export function readBinaryFacts(harness: Harness, path: string): BinaryFacts {
  const facts: BinaryFacts = { path, exists: false, executable: false, runs: false, version: null };
  if (!path.startsWith("/")) return facts; // safety: relative-binary-run
  try {
    facts.exists = statSync(path).isFile();
    accessSync(path, constants.X_OK);
    facts.executable = facts.exists;
  } catch {
    return facts;
  }
  if (!facts.executable) return facts;
  const [cmd, ...args] = loadHarness(harness)!.versionProbe(path);
  try {
    const out = execFileSync(cmd!, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 15_000 });
    facts.runs = true;
    facts.version = out.trim().split("\n")[0] ?? "";
  } catch {
    // did not run: the preflight refuses
  }
  return facts;
}

/**
 * Reads what decideLaunch needs from this machine. No decision is made here. The host facts come
 * in, read once by the caller: the Claude Code binary probed here is the one the session binds and
 * runs, and the sandbox probe proves the runner node and state directory the launch uses.
 */
export function readLaunchFacts(host: HostFacts, opts: { repo: string; runDir: string; bwrap?: string }): LaunchFacts {
  // No binary resolved: the preflight names claude as missing; a relative name is never probed.
  const claude = host.claude?.path ?? "claude";
  return {
    repo: opts.repo,
    runDir: opts.runDir,
    node: { path: process.execPath, version: process.versions.node },
    binaries: {
      pi: readBinaryFacts("pi", join(opts.repo, "node_modules/.bin/pi")),
      "claude-code": readBinaryFacts("claude-code", claude),
    },
    sandboxProblem: sandboxProblem(host, { bwrap: opts.bwrap }),
    digests: readSourceDigests(opts.repo),
  };
}
