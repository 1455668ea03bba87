// The adapter golden: the harness CLI's argv (one token a line) and its environment (`K=V`).
// Options are keyed by name; a comma list (`--tools`, `--allowedTools`) is one fact per member,
// so a tool added to a limit is its own change.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine, type Line } from "./parse-lines.ts";

/** Options of Pi and Claude Code that take a value (others are read as flags unless a value follows). */
export const VALUE_OPTIONS: ReadonlySet<string> = new Set([
  "--output-format",
  "--input-format",
  "--model",
  "--effort",
  "--settings",
  "--setting-sources",
  "--mcp-config",
  "--tools",
  "--allowedTools",
  "--allowed-tools",
  "--disallowedTools",
  "--disallowed-tools",
  "--permission-mode",
  "--append-system-prompt-file",
  "--append-system-prompt",
  "--system-prompt",
  "--system-prompt-file",
  "--add-dir",
  "--plugin-dir",
  "--provider",
  "--thinking",
  "-e",
  "--extension",
  "--session-dir",
  "--permission-prompt-tool",
  "--max-turns",
  "--api-key",
]);

/** Options whose value is a comma list of tool names. */
export const LIST_OPTIONS: ReadonlySet<string> = new Set([
  "--tools",
  "--allowedTools",
  "--allowed-tools",
  "--disallowedTools",
  "--disallowed-tools",
]);

function readArgv(lines: readonly Line[]): Fact[] {
  const facts: Fact[] = [];
  const program: Line[] = [];
  let i = 0;
  while (i < lines.length && !lines[i]!.text.startsWith("-")) program.push(lines[i++]!);
  if (program.length > 0)
    facts.push({
      type: "adapter-program",
      key: "program",
      at: "argv",
      fields: { argv: program.map((l) => l.text).join(" ") },
      text: program.map((l) => l.text).join(" "),
      line: program[0]!.line,
    });
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.text === "--") {
      const message = lines
        .slice(i + 1)
        .map((m) => m.text)
        .join(" ");
      facts.push(fact("adapter-message", "message", { message }, l, "argv"));
      break;
    }
    const next = lines[i + 1];
    const takesValue = VALUE_OPTIONS.has(l.text) || (next !== undefined && !next.text.startsWith("-"));
    if (takesValue && next !== undefined) {
      if (LIST_OPTIONS.has(l.text)) {
        facts.push(fact("adapter-option", l.text, { value: "(list)" }, l, "argv"));
        next.text.split(",").forEach((name) =>
          facts.push({
            type: "adapter-listed",
            key: `${l.text} ${name}`,
            at: l.text,
            fields: {},
            text: name,
            line: next.line,
          }),
        );
      } else
        facts.push({
          ...fact("adapter-option", l.text, { value: next.text }, l, "argv"),
          text: `${l.text} ${next.text}`,
        });
      i += 2;
    } else {
      facts.push(fact("adapter-option", l.text, { value: "" }, l, "argv"));
      i += 1;
    }
  }
  return facts;
}

function readEnv(lines: readonly Line[]): Fact[] {
  return lines.map((l) => {
    const i = l.text.indexOf("=");
    return i <= 0
      ? plainLine(l, "env")
      : fact("adapter-env", l.text.slice(0, i), { value: l.text.slice(i + 1) }, l, "env");
  });
}

export function parseAdapter(text: string): Fact[] {
  const lines = bodyLines(text);
  const argvAt = lines.findIndex((l) => l.text === "# argv");
  const envAt = lines.findIndex((l) => l.text === "# env");
  if (argvAt === -1 || envAt === -1 || envAt < argvAt) return [...headerFact(text), ...lines.map((l) => plainLine(l))];
  const facts = [
    ...headerFact(text),
    ...lines.slice(0, argvAt).map((l) => plainLine(l)),
    ...readArgv(lines.slice(argvAt + 1, envAt)),
    ...readEnv(lines.slice(envAt + 1)),
  ];
  return uniqueKeys(facts);
}
