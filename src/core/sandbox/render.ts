import type { Bind } from "./types.ts";

/** Operands each bwrap option takes, so a rendered argv shows one option with its operands per line. */
const ARITY: Readonly<Record<string, number>> = {
  "--ro-bind": 2, "--bind": 2, "--symlink": 2, "--dev": 1, "--proc": 1, "--tmpfs": 1,
  "--remount-ro": 1, "--setenv": 2, "--chdir": 1,
};

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
    const n = ARITY[tok] ?? 0;
    lines.push(argv.slice(i, i + 1 + n).join(" "));
    i += 1 + n;
  }
  return lines;
}

export const BIND_TABLE_HEADING = "source | inside | mode | why";

export function renderBindLines(table: readonly Bind[]): string[] {
  return [BIND_TABLE_HEADING, ...table.map((b) => `${b.source ?? "(none)"} | ${b.inside} | ${b.mode} | ${b.why}`)];
}
