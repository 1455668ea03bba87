// Line-record goldens of the launcher and the session: refusals, spec errors, route decisions, the
// harness modules, exit mappings. Lists inside a value become one fact per member.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine, splitArrow, type Line } from "./parse-lines.ts";

/** `code | message`: the one line of a refusal golden. */
export function parseRefusal(text: string): Fact[] {
  return [
    ...headerFact(text),
    ...bodyLines(text).map((l) => {
      const i = l.text.indexOf(" | ");
      return i === -1
        ? plainLine(l)
        : fact("refusal", "refusal", { code: l.text.slice(0, i), message: l.text.slice(i + 3) }, l);
    }),
  ];
}

/** `case → code: message` or `case → code | message`: one bad input and the typed error it gets. */
export function parseSpecErrors(text: string): Fact[] {
  const facts = bodyLines(text).map((l) => {
    const parts = splitArrow(l.text);
    const m = parts && /^([a-z][a-z0-9-]*)(: | \| )(.*)$/.exec(parts[1]);
    return parts && m ? fact("spec-error", parts[0], { code: m[1]!, message: m[3]! }, l) : plainLine(l);
  });
  return [...headerFact(text), ...uniqueKeys(facts)];
}

/** `exit code → outcome`. */
export function parseExitMap(text: string): Fact[] {
  const facts = bodyLines(text).map((l) => {
    const parts = splitArrow(l.text);
    return parts ? fact("exit-map", parts[0], { outcome: parts[1] }, l) : plainLine(l);
  });
  return [...headerFact(text), ...uniqueKeys(facts)];
}

/** Keys of a route decision or a harness module whose value is a list; `=`-lists are variables. */
const LIST_KEYS: ReadonlySet<string> = new Set([
  "bundleFiles",
  "sandboxMounts",
  "builtInTools(all)",
  "providers",
  "adapterEnv",
]);

function keyValueFacts(type: string, lines: readonly Line[], section: string): Fact[] {
  const out: Fact[] = [];
  for (const l of lines) {
    if (l.text.trim() === "") continue;
    const i = l.text.indexOf(": ");
    if (i === -1) {
      out.push(plainLine(l, section));
      continue;
    }
    let k = l.text.slice(0, i);
    const v = l.text.slice(i + 2);
    const prefix = section ? `${section} ` : "";
    // A numbered entry (`reliesOn: 1. ...`) is keyed by its number, so a reworded one is a change.
    const numbered = /^(\d+)\. /.exec(v);
    if (numbered) k = `${k} ${numbered[1]}`;
    if (LIST_KEYS.has(k)) {
      // The list's own row is its key; each member is its own fact, so the members carry the text.
      out.push({ ...fact(type, `${prefix}${k}`, { value: "(list)" }, l, section), text: `${k}:` });
      for (const m of v.split(" ").filter(Boolean))
        out.push({ type: `${type}-member`, key: `${prefix}${k} ${m}`, at: k, fields: {}, text: m, line: l.line });
    } else out.push(fact(type, `${prefix}${k}`, { value: v }, l, section));
  }
  return out;
}

/** A route decision: `key: value` lines. */
export function parseRoute(text: string): Fact[] {
  return [...headerFact(text), ...uniqueKeys(keyValueFacts("route", bodyLines(text), ""))];
}

/** What each harness module provides: `## <module>` sections of `key: value` lines. */
export function parseHarnessModules(text: string): Fact[] {
  const out: Fact[] = [...headerFact(text)];
  let section = "";
  let chunk: Line[] = [];
  const flush = () => {
    out.push(...keyValueFacts("module", chunk, section));
    chunk = [];
  };
  for (const l of bodyLines(text)) {
    if (l.text.startsWith("## ")) {
      flush();
      section = l.text.slice(3);
      out.push(fact("module-section", section, {}, l));
    } else chunk.push(l);
  }
  flush();
  return uniqueKeys(out);
}
