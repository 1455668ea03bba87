// The proxy's decisions (goldens/network/egress-decisions.txt): one line a request,
// `METHOD TARGET → forward: why` or `METHOD TARGET → refuse 403: message`.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine } from "./parse-lines.ts";

const DECISION = / → (forward|refuse)\b/;

export function parseEgress(text: string): Fact[] {
  const facts: Fact[] = [...headerFact(text)];
  for (const l of bodyLines(text)) {
    const m = DECISION.exec(l.text);
    if (!m) {
      facts.push(plainLine(l));
      continue;
    }
    // The decision keeps its reason in one field: a reworded refusal stays a refusal.
    facts.push(fact("egress-call", l.text.slice(0, m.index), { decision: l.text.slice(m.index + 3) }, l));
  }
  return uniqueKeys(facts);
}

/** `forward` or `refuse`, from a decision field. */
export function egressOf(value: string | undefined): "forward" | "refuse" | "" {
  if (value?.startsWith("forward")) return "forward";
  return value?.startsWith("refuse") ? "refuse" : "";
}
