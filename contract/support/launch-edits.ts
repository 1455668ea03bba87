// Edits of a prepared launch for contract tests of start() that run its steps without bwrap: the
// launch as a user caller would have it planned (the tests may run as root), and a shell in bwrap's
// place. start() carries out whatever the plan says, so the plan is what a test changes.
import type { PreparedLaunch } from "../../src/host/launcher.ts";

/**
 * The host side as planned for a caller that is not root: no drop, nothing handed over, no
 * cgroups. The session's identity stays the one the world's sockets were made for.
 */
export function asUserCaller(p: PreparedLaunch, uid = p.facts.uid === 0 ? 1000 : p.facts.uid): PreparedLaunch {
  return {
    ...p,
    facts: { ...p.facts, uid },
    session: {
      ...p.session,
      identity: { caller: uid, runAs: p.session.identity.runAs, drop: [], handOver: null },
      cgroups: { name: "", dirs: [] },
      toolSocket: { ...p.session.toolSocket, owner: null },
    },
  };
}

/** The prepared launch with a shell script in bwrap's place. */
export const withShell = (p: PreparedLaunch, script: string): PreparedLaunch => ({
  ...p,
  session: { ...p.session, argv: ["/bin/sh", "-c", script] },
});
