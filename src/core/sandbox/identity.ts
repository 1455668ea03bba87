import { MosaicError } from "../errors.ts";
import type { HostFacts, SessionIdentity } from "./types.ts";

/**
 * Who a root caller's sessions run as, unless MOSAIC_SESSION_UID/GID say otherwise: nobody, the one
 * unprivileged uid every Debian and Ubuntu host has in the /etc/passwd the sandbox binds (the CLIs
 * look their user up). A deployment sets a dedicated system user instead.
 */
export const DEFAULT_SESSION_IDENTITY: Readonly<SessionIdentity & { why: string }> = {
  uid: 65534,
  gid: 65534,
  why: "kuid 0 writes /proc/sys, reads 0600 root files and plants setuid-root binaries with no capability at all; an unprivileged uid owns nothing a root caller owns",
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
 * The identity a session runs as. A user caller's sessions run as the caller: that is the only
 * identity it can give them. A root caller's run as MOSAIC_SESSION_UID/GID, else the default, and
 * never as 0 (a bad value is a MosaicError naming the variable).
 */
export function sessionIdentity(
  caller: SessionIdentity,
  env: Readonly<Record<string, string | undefined>>,
): SessionIdentity {
  if (caller.uid !== 0) return { ...caller };
  const uid = env.MOSAIC_SESSION_UID
    ? parseId("MOSAIC_SESSION_UID", env.MOSAIC_SESSION_UID)
    : DEFAULT_SESSION_IDENTITY.uid;
  const gid = env.MOSAIC_SESSION_GID
    ? parseId("MOSAIC_SESSION_GID", env.MOSAIC_SESSION_GID)
    : DEFAULT_SESSION_IDENTITY.gid;
  return { uid, gid };
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
  facts: Pick<HostFacts, "uid" | "session">,
  trees: { workspace: string; runDir: string },
): IdentityPlan {
  const root = facts.uid === 0;
  return {
    caller: facts.uid,
    runAs: { ...facts.session },
    drop: dropToSession(facts),
    handOver: root ? { ...trees } : null,
  };
}
