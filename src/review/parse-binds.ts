// The bind table (`source | inside | mode | why`, mount order) as facts, one per mount point; a
// tmpfs's mode cell carries its bound (`tmpfs 67108864 bytes`).
import { isWithin } from "../core/paths.ts";
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine, type Line } from "./parse-lines.ts";

const HEADING = "source | inside | mode | why";

/**
 * The later mount that covers a mount point (the same path or a parent of it), or "". A covered
 * bind no longer decides what the session sees there, so its mode stops holding.
 */
export function findShadow(insides: readonly string[], i: number): string {
  const me = insides[i]!;
  for (let j = i + 1; j < insides.length; j++) if (isWithin(me, insides[j]!)) return insides[j]!;
  return "";
}

/** Bind rows (with or without an indent) to facts of type `bind`, keyed by the mount point. */
export function parseBindRows(lines: readonly Line[], at = ""): Fact[] {
  const facts: Fact[] = [];
  const rows: { l: Line; cells: string[] }[] = [];
  for (const l of lines) {
    const t = l.text.trim();
    if (t === "") continue;
    if (t === HEADING) {
      facts.push(fact("bind-heading", "heading", { columns: t }, l, at));
      continue;
    }
    const cells = t.split(" | ");
    if (cells.length < 4) facts.push(plainLine(l, at));
    else rows.push({ l, cells: [...cells.slice(0, 3), cells.slice(3).join(" | ")] });
  }
  const insides = rows.map((r) => r.cells[1]!);
  rows.forEach((r, i) => {
    const [source, inside, cell, why] = r.cells as [string, string, string, string];
    // `tmpfs 67108864 bytes`: the mode and the tmpfs's bound, each its own field.
    const sized = /^(\S+) (\d+) bytes$/.exec(cell);
    const mode = sized ? sized[1]! : cell;
    const size: Record<string, string> = sized ? { size: sized[2]! } : {};
    facts.push(fact("bind", inside, { source, mode, ...size, why, shadowedBy: findShadow(insides, i) }, r.l, at));
  });
  return uniqueKeys(facts.sort((a, b) => a.line - b.line));
}

export function parseBindTable(text: string): Fact[] {
  return [...headerFact(text), ...parseBindRows(bodyLines(text))];
}
