// Messages between the runner and a test host (a child process holding one vitest instance over
// one copy of the tree). The runner owns the files; the host only runs tests.
import type { RunOutcome } from "./verdict.ts";

/** A test file to run, all of it or only the named tests (names without the file part). */
export type SpecRequest = { file: string; names?: string[] };

export type ProjectInfo = { name: string; files: string[] };

/** A run; `update` writes golden mismatches into the tree for this run only (one pass, both verdicts). */
export type ToHost =
  | { type: "run"; id: number; specs: SpecRequest[]; changed: string[]; update?: boolean }
  | { type: "close" };

export type FromHost =
  | { type: "ready"; projects: ProjectInfo[] }
  | { type: "result"; id: number; outcome: RunOutcome; loaded: string[] }
  | { type: "failed"; id: number; message: string };

/**
 * How the runner starts a host: passed as one JSON argument. `update` lets goldens be written into
 * this tree copy: the blessed-goldens mode and the golden review's catalog self-test ask for it; an
 * ordinary mutation run never does.
 */
export type HostArgs = {
  root: string;
  configFile: string | undefined;
  pool: "threads" | "forks";
  projects: string[] | undefined;
  update?: boolean;
};
