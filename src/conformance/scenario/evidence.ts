// What a scenario run leaves to judge: everything the runner collected, as plain data, so the
// assertions (assert.ts) are pure functions over it and have contract tests on hand-built evidence.
import type { EgressRecord } from "../../core/network/egress.ts";
import type { CallRecord } from "../stand-ins/broker/server.ts";
import type { RecordedRequest } from "../stand-ins/model-script/record.ts";

export interface Evidence {
  /** One entry per message sent, in order: the RESULT's body, or null when none came in time. */
  replies: Array<string | null>;
  /** Every request the scripted API received; null when the session had no model (the fake harness). */
  requests: readonly RecordedRequest[] | null;
  /** The stand-in broker's records of this session's run. */
  broker: readonly CallRecord[];
  /** The host's egress log of the run; null when there was none. */
  egress: readonly EgressRecord[] | null;
  /** The runner's stderr and each turn's. */
  stderr: readonly string[];
  /** The runner's own stderr as the host kept it, outside the sandbox: its record of each turn and its tripwire. */
  runnerLog: string;
  /** sha256 (hex) of each host file a file_* assertion names, before and after the session; null: absent. */
  files: Readonly<Record<string, { before: string | null; after: string | null }>>;
  /** The runner's exit code when the session ended; null when it was killed by a signal or never ran. */
  exit: number | null;
  /** Every file the session left in its HOME and its harness's session directory, by path. */
  transcripts: Readonly<Record<string, string>>;
  /** Connections the network trap accepted; null when the scenario set none. */
  trapConnections: number | null;
  /** The session's bwrap argv; null when it never launched. */
  argv: readonly string[] | null;
  /** Every stand-in value planted for the run (the secret, the host's credential canary). */
  standIns: readonly string[];
}
