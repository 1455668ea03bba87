// Changing a bind table on purpose, for a positive control. The table's last row is the private
// /tmp, bound last so nothing above can show the host's /tmp; extra rows go before it.
import type { Bind } from "../../core/sandbox/types.ts";

/** The table with rows added just before its last one, which stays last. */
export function withBindsBeforeLast(table: readonly Bind[], extra: readonly Bind[]): Bind[] {
  if (table.length === 0) throw new Error("an empty bind table has no last row to keep last");
  return [...table.slice(0, -1), ...extra, table.at(-1)!];
}

/** A host path bound at the same path inside, read-only: what a control exposes on purpose. */
export const exposedBind = (path: string, row: Bind["row"] = "runner-file"): Bind => ({
  source: path,
  inside: path,
  mode: "ro",
  why: "broken on purpose",
  row,
});

/** The table without the rows a predicate picks. */
export const withoutBinds = (table: readonly Bind[], pick: (b: Bind) => boolean): Bind[] =>
  table.filter((b) => !pick(b));

/** The table without any row of the given row id. */
export const withoutRow = (table: readonly Bind[], row: Bind["row"]): Bind[] =>
  withoutBinds(table, (b) => b.row === row);

/** The table with the tmpfs of a row unbounded (no size). */
export const withUnboundedTmpfs = (table: readonly Bind[], row: Bind["row"]): Bind[] =>
  table.map((b) => (b.row === row ? { ...b, size: undefined } : b));
