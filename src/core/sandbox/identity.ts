import { MosaicError } from "../errors.ts";
import type { HostFacts, SessionIdentity } from "./types.ts";

/**
 * Who a root caller's sessions run as, unless MOSAIC_SESSION_UIDS, MOSAIC_SESSION_UID or
 * MOSAIC_SESSION_GID say otherwise: a uid of their own from DEFAULT_SESSION_UIDS, in nogroup.
 */
export const DEFAULT_SESSION_IDENTITY: Readonly<SessionIdentity & { why: string }> = {
  uid: 1879048192,
  gid: 65534,
  why: "kuid 0 writes /proc/sys, reads 0600 root files and plants setuid-root binaries with no capability at all; an unprivileged uid owns nothing a root caller owns",
};

/** A range of uids a root caller's sessions run as, one a session. */
export type UidRange = { first: number; count: number };

/**
 * The uids a root caller's sessions run as by default: one each, so no per-uid kernel limit
 * (tasks, inotify instances, pipe buffers, RLIMIT_NPROC) is shared between two sessions or with
 * the founder. systemd leaves 1879048192 and up unallocated; no account of the host owns them.
 */
export const DEFAULT_SESSION_UIDS: Readonly<UidRange & { why: string }> = {
  first: DEFAULT_SESSION_IDENTITY.uid,
  count: 65536, // safety: default-session-uids-shared
  why: "a uid per session: one session exhausting its uid's inotify instances or tasks leaves every other session its own",
};

const parseId = (field: string, raw: string): number => {
  if (!/^[0-9]{1,10}$/.test(raw))
    throw new MosaicError("session-identity", field, `${JSON.stringify(raw)} is not a numeric id`);
  const n = Number(raw);
  if (n === 0)
    throw new MosaicError("session-identity", field, "is 0: a root caller's sessions must never run as uid or gid 0"); // safety: session-identity-env-zero
  if (n > 0xfffffffe) throw new MosaicError("session-identity", field, `${n} is not a valid id`);
  return n;
};

/**
 * The base identity a session runs as. A user caller's sessions run as the caller: that is the
 * only identity it can give them. A root caller's take their uid from sessionUidRange() (this is
 * its first) and their gid from MOSAIC_SESSION_GID, else nogroup; never 0 (a bad value is a
 * MosaicError naming the variable).
 */
export function sessionIdentity(
  caller: SessionIdentity,
  env: Readonly<Record<string, string | undefined>>,
): SessionIdentity {
  if (caller.uid !== 0) return { ...caller };
  const uid = sessionUidRange(caller, env)!.first;
  const gid = env.MOSAIC_SESSION_GID
    ? parseId("MOSAIC_SESSION_GID", env.MOSAIC_SESSION_GID)
    : DEFAULT_SESSION_IDENTITY.gid;
  return { uid, gid };
}

/**
 * The uids a root caller's sessions take theirs from: MOSAIC_SESSION_UIDS (`first-last`), or
 * MOSAIC_SESSION_UID (a range of one: every session that uid, a dedicated system user), else
 * DEFAULT_SESSION_UIDS. Null for a user caller, whose sessions are the caller.
 */
export function sessionUidRange(
  caller: Pick<SessionIdentity, "uid">,
  env: Readonly<Record<string, string | undefined>>,
): UidRange | null {
  if (caller.uid !== 0) return null;
  const one = env.MOSAIC_SESSION_UID ?? "";
  const range = env.MOSAIC_SESSION_UIDS ?? "";
  if (one !== "" && range !== "")
    throw new MosaicError("session-identity", "MOSAIC_SESSION_UIDS", "set with MOSAIC_SESSION_UID: choose one");
  if (one !== "") return { first: parseId("MOSAIC_SESSION_UID", one), count: 1 };
  if (range === "") return { first: DEFAULT_SESSION_UIDS.first, count: DEFAULT_SESSION_UIDS.count };
  const m = /^([0-9]+)-([0-9]+)$/.exec(range);
  if (m === null)
    throw new MosaicError("session-identity", "MOSAIC_SESSION_UIDS", `${JSON.stringify(range)} is not first-last`);
  const first = parseId("MOSAIC_SESSION_UIDS", m[1]!);
  const last = parseId("MOSAIC_SESSION_UIDS", m[2]!);
  if (last < first) throw new MosaicError("session-identity", "MOSAIC_SESSION_UIDS", `${last} is below ${first}`);
  return { first, count: last - first + 1 };
}

/** A stable starting point in the range for a run, so concurrent launches rarely try the same uid first. */
function offsetOf(run: string, count: number): number {
  let h = 2166136261;
  for (let i = 0; i < run.length; i++) h = Math.imul(h ^ run.charCodeAt(i), 16777619) >>> 0;
  return h % count;
}

/**
 * The uid a root caller's session runs as: the first of the range, from the run's own starting
 * point, that no live session holds. None free is a refusal naming the range.
 */
export function pickSessionUid(range: UidRange, held: readonly number[], run: string): number {
  const taken = new Set(held);
  const start = offsetOf(run, range.count);
  for (let i = 0; i < range.count; i++) {
    const uid = range.first + ((start + i) % range.count);
    if (!taken.has(uid)) return uid;
  }
  throw new MosaicError(
    "session-uid-busy",
    "MOSAIC_SESSION_UIDS",
    `every uid of ${range.first}-${range.first + range.count - 1} runs a session: no uid of its own for another`,
  );
}

/**
 * What goes before bwrap so the session runs as its identity: for a root caller, setpriv drops to
 * the session's uid and gid and clears the supplementary groups, then execs bwrap (same pid, so the
 * launcher still waits on it and recover() still finds it). Nothing for a user caller.
 */
export function dropToSession(facts: Pick<HostFacts, "uid" | "session">): string[] {
  if (facts.uid !== 0) return [];
  if (facts.session.uid === 0 || facts.session.gid === 0)
    throw new MosaicError("session-identity", "hostFacts.session", "a root caller's session identity is uid or gid 0"); // safety: session-identity-root-allowed
  return ["setpriv", `--reuid=${facts.session.uid}`, `--regid=${facts.session.gid}`, "--clear-groups", "--"]; // safety: session-runs-as-root
}

/** Who a session runs as, and what the launcher does to make it so. */
export interface IdentityPlan {
  /** The launcher's own uid. */
  caller: number;
  /** Who bwrap and everything under it run as. */
  runAs: SessionIdentity;
  /** What goes before bwrap: setpriv's drop for a root caller, nothing for a user (dropToSession). */
  drop: string[];
  /** The trees the launcher hands to runAs before the spawn: a root caller's workspace and run directory. */
  handOver: { workspace: string; runDir: string } | null;
}

/**
 * A root caller's session runs as its own identity, which owns its workspace and run directory; a
 * user caller's session is the caller and hands nothing over.
 */
export function planIdentity(
  facts: Pick<HostFacts, "uid" | "session"> & Partial<Pick<HostFacts, "sessionUids" | "heldSessionUids">>,
  trees: { workspace: string; runDir: string },
  run = "",
): IdentityPlan {
  const root = facts.uid === 0;
  const range = facts.sessionUids ?? { first: facts.session.uid, count: 1 };
  const runAs = root
    ? { uid: pickSessionUid(range, facts.heldSessionUids ?? [], run), gid: facts.session.gid }
    : { ...facts.session };
  return {
    caller: facts.uid,
    runAs,
    drop: dropToSession({ uid: facts.uid, session: runAs }),
    handOver: root ? { ...trees } : null,
  };
}

/**
 * The session's own /etc/passwd and /etc/group: root and the session's user (its HOME the run's),
 * root's group and the session's. The CLIs and git look their user up, a uid of the range is in
 * no file of the host's, and the host's own list of accounts stays out.
 */
export function planIdentityFiles(runAs: SessionIdentity, home: string): { passwd: string; group: string } {
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nsession:x:${runAs.uid}:${runAs.gid}:mosaic session:${home}:/bin/sh\n`,
    group: `root:x:0:\nsession:x:${runAs.gid}:\n`,
  };
}
