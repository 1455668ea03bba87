import { turnStderrName } from "./decisions.ts";

// A turn's files live in the run directory, which the session writes too: the runner makes each
// one itself and never opens a name it finds there. A turn whose file cannot be made fails with
// one of these reasons and does not run; the runner goes on.

/**
 * The record that leaves turns/ as the n-th turn (1-based) starts, when turns/ keeps the newest
 * `keep` (session.json bounds.turn.stderrFiles); null while no more than `keep` turns have started.
 */
export function staleTurnRecord(n: number, keep: number): string | null {
  return n > keep ? turnStderrName(n - keep) : null;
}

/** Why a turn did not run: its stderr record could not be made (`code`: the errno, or what was found there). */
export function recordRefusal(name: string, code: string): string {
  return `its stderr record turns/${name} could not be made (${code}), so the turn did not run: the runner writes a record only into a new file it creates, never into a name it finds there`;
}

/** Why a turn did not run: the turn-end marker left before it could not be removed. */
export function markerRefusal(file: string, code: string): string {
  return `its turn-end marker ${file} could not be cleared (${code}), so the turn did not run: a marker left from before would count a turn that never reached agent_end`;
}
