// The edges of egress-log.ts the generated sweep found untested: where a session's string is cut
// and what the cut says, a line exactly at its byte bound, the loop's end when nothing fits, and
// the summary lines at each power of two of suppressed refusals, with their counts by status.
import { describe, expect, it } from "vitest";
import type { EgressRecord } from "../src/core/network/egress.ts";
import { LOG_START, closingLines, planLogLine, renderRecord, type LogState } from "../src/core/network/egress-log.ts";

const rec = (over: Partial<EgressRecord> = {}): EgressRecord => ({
  time: "2026-01-01T00:00:00.000Z",
  method: "GET",
  path: "/v1/models",
  outcome: "refused",
  status: 403,
  bytesIn: 0,
  bytesOut: 0,
  ...over,
});
const byteLength = (s: string) => new TextEncoder().encode(s).length;

describe("renderRecord: each of the session's strings cut at its budget", () => {
  it("a method of 16, a path of 256 and a reason of 512 characters are written whole", () => {
    const r = rec({ method: "M".repeat(16), path: "/".padEnd(256, "p"), why: "w".repeat(512) });
    expect(JSON.parse(renderRecord(r))).toEqual(r);
  });
  it("one character more is cut, with the count of characters dropped", () => {
    const r = rec({ method: "M".repeat(17), path: "/".padEnd(257, "p"), why: "w".repeat(520) });
    expect(JSON.parse(renderRecord(r))).toEqual({
      ...r,
      method: `${"M".repeat(16)}…(+1)`,
      path: `${"/".padEnd(256, "p")}…(+1)`,
      why: `${"w".repeat(512)}…(+8)`,
    });
  });
  it("a line of exactly lineBytes (1024) is kept as it is; one byte more halves every budget", () => {
    const path = "/".padEnd(200, "p");
    const pad = 1024 - byteLength(JSON.stringify(rec({ time: "", path })));
    const exact = rec({ time: "t".repeat(pad), path });
    expect(byteLength(renderRecord(exact)), "the line is at the bound").toBe(1024);
    expect(JSON.parse(renderRecord(exact)), "nothing cut").toEqual(exact);
    const over = rec({ time: "t".repeat(pad + 1), path });
    expect(JSON.parse(renderRecord(over)), "path cut at 256 >> 1").toEqual({
      ...over,
      path: `${"/".padEnd(128, "p")}…(+72)`,
    });
  });
  it("a line whose host-set fields alone are over the bound ends with every session string cut to nothing", () => {
    // The loop gives up after 17 halvings instead of running for ever.
    const r = rec({ time: "t".repeat(2000), why: "no route" });
    expect(JSON.parse(renderRecord(r))).toEqual({ ...r, method: "…(+3)", path: "…(+10)", why: "…(+8)" });
  });
});

/** Plays `records` through planLogLine from LOG_START: the state after, and every line, parsed. */
function play(records: EgressRecord[]): { state: LogState; lines: unknown[] } {
  let state = LOG_START;
  const lines: unknown[] = [];
  for (const r of records) {
    const p = planLogLine(state, r);
    state = p.state;
    lines.push(...p.lines.map((l) => JSON.parse(l)));
  }
  return { state, lines };
}
/** 64 refusals with status 403 (all kept), then `n` with status 405 (all past the budget). */
const refusals = (n: number) => [
  ...Array.from({ length: 64 }, (_, i) => rec({ time: `t${i + 1}` })),
  ...Array.from({ length: n }, (_, i) => rec({ time: `t${65 + i}`, status: 405 })),
];
const summaryAt = (time: string, refused: number, suppressed: number, by405: number) => ({
  time,
  outcome: "refused-summary",
  refused,
  suppressed,
  byStatus: { "403": 64, "405": by405 },
});

describe("planLogLine and closingLines: refusals past the first 64", () => {
  it("a summary line when the suppressed count reaches 1, 2, 4 and 8, counting refusals by status", () => {
    const { state, lines } = play(refusals(8));
    expect(lines.slice(0, 64), "the first 64 kept whole").toEqual(refusals(0));
    expect(lines.slice(64)).toEqual([
      summaryAt("t65", 65, 1, 1),
      summaryAt("t66", 66, 2, 2),
      summaryAt("t68", 68, 4, 4),
      summaryAt("t72", 72, 8, 8),
    ]);
    expect(state).toEqual({ refused: 72, kept: 64, suppressed: 8, summarised: 8, byStatus: { "403": 64, "405": 8 } });
    expect(closingLines(state, "end"), "every suppressed refusal already summarised").toEqual([]);
  });
  it("the closing summary counts the refusals suppressed since the last summary line", () => {
    const { state, lines } = play(refusals(9));
    expect(lines.length, "no line for the 9th").toBe(64 + 4);
    expect(closingLines(state, "end").map((l) => JSON.parse(l))).toEqual([summaryAt("end", 73, 9, 9)]);
  });
  it("an allowed call is always written and leaves the refusal counts as they were", () => {
    const { state } = play(refusals(3));
    const allowed = rec({ method: "POST", path: "/v1/messages", outcome: "allowed", status: 200 });
    const p = planLogLine(state, allowed);
    expect(p.state).toBe(state);
    expect(p.lines.map((l) => JSON.parse(l))).toEqual([allowed]);
  });
});
