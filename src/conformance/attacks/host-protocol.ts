// What the attack table's test process and its host (host-main.ts, the launcher's process for one
// identity) say to each other: the host's configuration, and one request and result per arm.
import type { SessionEnd } from "../../core/session/exit.ts";
import type { WorkspaceCheck } from "../../core/workspace/remedy.ts";

/** The label of the capability canary the stand-in broker mints; a memory-reading attack searches for it by canaryPattern. */
export const CAPABILITY_LABEL = "mosaic-cap";

export interface AttackHostConfig {
  /** The test's control socket the host connects to. */
  ctl: string;
  root: string;
  data: string;
  /** The shared workspace every arm's session works in. */
  ws: string;
  stateDir: string;
  brokerDir: string;
  founderHome: string;
  /** A readable copy of node, for the control that runs the runner on it. */
  readableNode: string;
  /** A canary put in the runner's environment. */
  envCanary: string;
  /** A root caller's sessions all run as this uid (MOSAIC_SESSION_UID, a range of one): the neighbour's own. */
  sessionUid: number | null;
}

export interface ArmRequest {
  /** The arm's run (and instance) name; its run directory is `<data>/runs/<name>`. */
  name: string;
  /** Layers removed on purpose (layers.ts), none for a blocked arm. */
  removed: readonly string[];
  /** The attack: one message's body, run by the fake adapter in a turn; or, asRunner, run in the runner's place. */
  script: string;
  asRunner: boolean;
  turnTimeoutSeconds: number;
  /** After the turn the host says `{ paused: name }` and waits for `{ resume: name }` before it stops the session. */
  pause?: boolean;
  /** What the launch is planned on, where an arm changes it: the workspace, the founder's HOME in the facts, paths the planner sees as plain files. */
  plan?: { workspace?: string; home?: string; filesNotLinks?: readonly string[] };
}

export interface ArmResult {
  name: string;
  /** The turn's reply (its stdout), or, asRunner, what the sandbox wrote to its stderr. */
  out: string;
  /** The runner sent the turn's result back: it was alive to the turn's end. */
  replied: boolean;
  exit: SessionEnd;
  /** The runner's (bwrap's) stderr. */
  stderr: string;
  /** The turn's stderr file. */
  turnStderr: string;
  check: WorkspaceCheck;
  /** Mount stubs bwrap made in the workspace that the launcher's end left behind. */
  stubsLeft: string[];
  /** The capability the runner held. */
  capability: string;
  /** Connections made to the host's launch socket during the arm. */
  launchConnects: number;
  /** The launcher refused to plan the launch (a MosaicError's code, or a refusal's), and nothing ran. */
  refused?: { code: string; message: string };
  error?: string;
}
