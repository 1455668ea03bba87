// Gate decision goldens: `# tree:` lines (the scene) and one call a line, `tool input → decision`.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine } from "./parse-lines.ts";

const DECISION = / → (allow$|block(: |$))/;

export function parseGate(text: string): Fact[] {
  const facts: Fact[] = [...headerFact(text)];
  for (const l of bodyLines(text)) {
    if (l.text.startsWith("# tree: ")) {
      facts.push(fact("gate-tree", l.text.slice(8), {}, l));
      continue;
    }
    const m = DECISION.exec(l.text);
    if (!m) {
      facts.push(plainLine(l));
      continue;
    }
    // The decision keeps its reason in one field: a reworded block stays a block.
    facts.push(fact("gate-call", l.text.slice(0, m.index), { decision: l.text.slice(m.index + 3) }, l));
  }
  return uniqueKeys(facts);
}

/** `allow`, or `block` for `block: <reason>`. */
export function decisionOf(value: string | undefined): "allow" | "block" | "" {
  if (value === "allow") return "allow";
  return value?.startsWith("block") ? "block" : "";
}

/**
 * The phrases with which the gate's block reasons name the check that refused a call (src/core/gate):
 * which base a relative path was resolved from, which spelling of a name, which part of a pattern.
 * A block whose reason names other checks than before was refused by another check: the one that
 * refused it may be gone.
 */
export const GATE_CHECKS: readonly { phrase: RegExp; check: string }[] = [
  { phrase: /from the workspace's real path/, check: "resolved from the workspace's real path" },
  { phrase: /from the workspace as given/, check: "resolved from the workspace as given" },
  { phrase: /: "(?:[^"\\]|\\.)*" as given,/, check: "the name as given, unnormalised" },
  { phrase: /with "\.\." taken after links/, check: '".." taken after links' },
  { phrase: /Pi's read may open its (.+?) spelling/, check: "Pi's read spelling" },
  { phrase: /its fixed prefix/, check: "a pattern's fixed prefix" },
  { phrase: /has "\.\." after a wildcard/, check: '".." after a wildcard' },
  { phrase: /is not one of this session's tools/, check: "the session's tool list" },
];

/** The checks a block reason names, with what each names (a spelling's label). */
export function namedChecks(decision: string): string[] {
  const out: string[] = [];
  for (const c of GATE_CHECKS) {
    const m = c.phrase.exec(decision);
    if (m) out.push(m[1] === undefined ? c.check : `${c.check}: ${m[1]}`);
  }
  return out;
}
