import { operandsOf, optionOf } from "./bwrap-options.ts";
import type { Bind } from "./types.ts";

/** One bwrap option (or namespace flag) per line; everything after `--` on the last line. */
export function renderArgvLines(argv: readonly string[]): string[] {
  const lines: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const tok = argv[i]!;
    if (tok === "--") {
      lines.push(argv.slice(i).join(" "));
      break;
    }
    const start = i;
    // A modifier (--perms, --size) shares the line of the option it modifies.
    while (optionOf(argv[i]!)?.modifies !== undefined) i += 1 + operandsOf(argv[i]!);
    let n = operandsOf(argv[i]!);
    // A read-only empty stand-in: its tmpfs and the remount that freezes it, on one line.
    if (argv[i] === "--tmpfs" && argv[i + 2] === "--remount-ro" && argv[i + 3] === argv[i + 1]) n += 2;
    lines.push(argv.slice(start, i + 1 + n).join(" "));
    i += 1 + n;
  }
  return lines;
}

/**
 * The launcher's whole command: a root caller's drop to the session's identity (everything before
 * bwrap, up to its `--`) on a line of its own, then bwrap's argv as renderArgvLines() shows it.
 */
export function renderCommandLines(command: readonly string[]): string[] {
  const at = command.indexOf("bwrap");
  if (at <= 0) return renderArgvLines(command);
  return [command.slice(0, at).join(" "), ...renderArgvLines(command.slice(at))];
}

export const BIND_TABLE_HEADING = "source | inside | mode | why";

export function renderBindLines(table: readonly Bind[]): string[] {
  return [
    BIND_TABLE_HEADING,
    ...table.map(
      (b) =>
        `${b.source ?? "(none)"} | ${b.inside} | ${b.mode}${b.size !== undefined ? ` ${b.size} bytes` : ""} | ${b.why}`,
    ),
  ];
}
