import { appendFileSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.ts";
import { join } from "node:path";
import type { MountStub } from "../core/sandbox/protected.ts";
import type { WorkspaceCheck } from "../core/workspace/remedy.ts";

/** One launch as the host records it: enough for the next host to find and end it. */
export interface LaunchRecord {
  run: string;
  instance: string;
  runDir: string;
  /** bwrap's pid on the host. */
  pid: number;
  startedAt: string;
  mountStubs: MountStub[];
  /** The session's cgroups (a root caller's): removed when it ends. */
  cgroups: string[];
  /** The session's workspace, and where the end-of-session check moves what it finds there. */
  workspace?: string;
  quarantine?: string;
  /** The workspace's lock this launch holds (workspace-lock.ts); recover() releases it. */
  lock?: string;
  /** A root caller's session uid's lock; recover() releases it. */
  uidLock?: string;
  /** The session's own passwd and group; recover() removes them. */
  identityDir?: string;
  /** The end-of-session check's report, once the session has ended. */
  check?: WorkspaceCheck | null;
  end: { reason: string; at: string; detail: string } | null;
}

/** The host's launch records: one JSON file per run under `<stateDir>/launches`, and a log line per change. */
export class LaunchRegistry {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private file(run: string): string {
    return join(this.dir, `${run}.json`);
  }

  record(r: LaunchRecord): void {
    // recover() on another host may read it at any moment: a half-written record would hide a launch.
    writeFileAtomic(this.file(r.run), JSON.stringify(r, null, 2) + "\n", 0o600); // safety: registry-atomic
    appendFileSync(
      join(this.dir, "launches.log"),
      `${new Date().toISOString()} ${r.end === null ? "started" : `ended ${r.end.reason}`} ${r.run} pid ${r.pid}${r.end === null ? "" : `: ${r.end.detail}`}\n`,
    );
  }

  end(run: string, reason: string, detail: string, check: WorkspaceCheck | null = null): LaunchRecord | null {
    const r = this.get(run);
    if (r === null || r.end !== null) return r;
    const ended = { ...r, check, end: { reason, at: new Date().toISOString(), detail } };
    this.record(ended);
    return ended;
  }

  get(run: string): LaunchRecord | null {
    try {
      const r = JSON.parse(readFileSync(this.file(run), "utf8")) as LaunchRecord & { placeholders?: MountStub[] };
      // A record written before the field was named mountStubs still names its stubs, for recover().
      return { ...r, mountStubs: r.mountStubs ?? r.placeholders ?? [] };
    } catch {
      return null;
    }
  }

  /** Launches with no end recorded: what a host that died hard left behind. */
  open(): LaunchRecord[] {
    return readdirSync(this.dir)
      .filter((n) => n.endsWith(".json"))
      .map((n) => this.get(n.slice(0, -5)))
      .filter((r): r is LaunchRecord => r !== null && r.end === null);
  }
}
