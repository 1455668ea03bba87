import type { EventStream } from "../runner/tripwire.ts";
import type { BindRow, Harness } from "../sandbox/types.ts";

/** What the launcher knows about one harness binary, read by src/host and passed in as data. */
export interface BinaryFacts {
  /** The path the adapter runs (for Claude Code: MOSAIC_CLAUDE_BIN, or claude found on PATH). */
  path: string;
  exists: boolean;
  executable: boolean;
  /** The version probe exited 0. */
  runs: boolean;
  /** What the version probe printed, trimmed; null when it did not run. */
  version: string | null;
}

/** The facts a harness module's preflight reads. */
export interface PreflightFacts {
  binary: BinaryFacts;
  /** process.versions.node of the node the runner and Pi run on, e.g. "24.21.0". */
  nodeVersion: string;
  /** MOSAIC_CLAUDE_BIN as the host environment has it (undefined when unset). */
  claudeBinEnv: string | undefined;
}

export type Preflight = { ok: true } | { ok: false; why: string };

/** How the runner tells a finished turn from a failed one. */
export type TurnEnd =
  | { kind: "marker"; file: string; writtenAt: string; why: string }
  | { kind: "result-line"; emptyOutputFails: true; why: string };

/** The paths a harness module derives from the run directory. */
export interface RunPaths {
  runDir: string;
  repo: string;
  node: string;
}

/** Everything core used to branch on per harness (seed 003: the harness plug-in kind). */
export interface HarnessModule {
  name: Harness;
  /** Thinking levels the CLI accepts, in order. */
  thinkingLevels: readonly string[];
  /** Whether a route must name a thinking level (Claude Code's adapter refuses without --effort). */
  thinkingRequired: boolean;
  /** Providers the CLI can reach from a session. */
  providers: readonly string[];
  preflight(facts: PreflightFacts): Preflight;
  /** argv the host runs to read the version (as data: core never spawns). */
  versionProbe(binary: string): string[];
  /** Rows of the sandbox bind table only this harness needs. */
  sandboxMounts: readonly BindRow[];
  /** The harness's built-in tool names for each neutral tool-limit name. */
  builtInTools(limit: readonly string[]): string[];
  /** The name the harness shows the model for a typed tool. */
  typedToolName(tool: string): string;
  /** Seconds one gate call may take before it counts as a block, and how that is enforced. */
  gate: { timeoutSeconds: number; how: string };
  /** Bundle files beyond the four every harness gets. */
  bundleFiles: readonly string[];
  /** Variables the adapter sets for this harness, beyond the shared MOSAIC_* ones. */
  adapterEnv(paths: RunPaths): Record<string, string>;
  turnEnd(paths: RunPaths): TurnEnd;
  /** The event stream on stdout the runner's tripwire reads each turn's completed tool calls from. */
  eventStream: EventStream;
  /** Where the harness keeps its session files (transcripts), which the usage reader reads. */
  sessionFiles(paths: RunPaths): string;
  /** The S0 lines (seed 000, rows 1 to 5) this harness relies on. */
  reliesOn: readonly string[];
}
