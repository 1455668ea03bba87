// Shared pieces of the golden parsers: the header line, numbered body lines, pipe tables and
// `key: value` lines. Every parser returns facts; none reads a file.
import { uniqueKeys, type Fact } from "./model.ts";

export type Line = { text: string; line: number };

/** The header line every golden starts with (`# `, `// ` or `<!-- `), or "" when there is none. */
export function readHeader(text: string): string {
  const first = text.split("\n", 1)[0] ?? "";
  return /^(#|\/\/|<!--) /.test(first) ? first : "";
}

/** The lines after the header, numbered as in the file, without the trailing empty line. */
export function bodyLines(text: string): Line[] {
  const all = text.split("\n").map((t, i) => ({ text: t, line: i + 1 }));
  if (all.length > 0 && all.at(-1)!.text === "") all.pop();
  return readHeader(text) === "" ? all : all.slice(1);
}

export function headerFact(text: string): Fact[] {
  const h = readHeader(text);
  return h === "" ? [] : [{ type: "header", key: "header", at: "", fields: { text: h }, text: h, line: 1 }];
}

/** A fact of one line; its text without the indent a report nests it under. */
export function fact(type: string, key: string, fields: Record<string, string>, l: Line, at = ""): Fact {
  return { type, key, at, fields, text: l.text.trim(), line: l.line };
}

/** A line no form of the parser knows: kept whole, so a change to it is shown and never lost. */
export function plainLine(l: Line, at = ""): Fact {
  return { type: "line", key: l.text, at, fields: {}, text: l.text, line: l.line };
}

/**
 * A `a | b | c` table whose first row names the columns. Each row is one fact keyed by its first
 * column; the last column keeps any further ` | ` of its text.
 */
export function parsePipeTable(type: string, lines: readonly Line[]): Fact[] {
  const rows = lines.filter((l) => l.text.trim() !== "");
  const head = rows[0];
  if (!head) return [];
  const columns = head.text.split(" | ").map((c) => c.trim());
  const facts: Fact[] = [fact("table-heading", "heading", { columns: columns.join(" | ") }, head)];
  for (const r of rows.slice(1)) {
    const cells = r.text.split(" | ");
    const fixed = cells.slice(0, columns.length - 1);
    const rest = cells.slice(columns.length - 1).join(" | ");
    const values = [...fixed, rest];
    const fields: Record<string, string> = {};
    columns.slice(1).forEach((c, i) => (fields[c] = values[i + 1] ?? ""));
    facts.push(fact(type, values[0] ?? "", fields, r));
  }
  return uniqueKeys(facts);
}

/** `key: value` lines; a line without `: ` is kept whole. */
export function parseKeyValues(type: string, lines: readonly Line[], at = ""): Fact[] {
  return uniqueKeys(
    lines
      .filter((l) => l.text.trim() !== "")
      .map((l) => {
        const i = l.text.indexOf(": ");
        return i === -1
          ? plainLine(l, at)
          : fact(type, `${at ? at + " " : ""}${l.text.slice(0, i)}`, { value: l.text.slice(i + 2) }, l, at);
      }),
  );
}

/** `case → result` lines (spec errors, exit mappings): the case is the key. */
export function splitArrow(text: string): [string, string] | null {
  const i = text.indexOf(" → ");
  return i === -1 ? null : [text.slice(0, i), text.slice(i + 3)];
}
