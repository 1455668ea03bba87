// The `mosaic-harness plan` golden (a bind table and a bwrap argv inside a report), the bundle's
// prompt, and the review's own report goldens.
import { uniqueKeys, type Fact } from "./model.ts";
import { parseBindRows } from "./parse-binds.ts";
import { parseArgvLines } from "./parse-bwrap-argv.ts";
import { bodyLines, fact, headerFact, plainLine, type Line } from "./parse-lines.ts";

/** Sections of the plan report: an unindented title, then its indented lines. */
export function parsePlan(text: string): Fact[] {
  const out: Fact[] = [...headerFact(text)];
  let title: Line | null = null;
  let chunk: Line[] = [];
  const flush = () => {
    if (title?.text.startsWith("Bind table")) out.push(...parseBindRows(chunk, "plan"));
    else if (title?.text === "bwrap argv") out.push(...parseArgvLines(chunk, "plan"));
    else out.push(...chunk.map((l) => plainLine(l)));
    chunk = [];
  };
  for (const l of bodyLines(text)) {
    if (l.text.trim() === "") continue;
    if (l.text.startsWith(" ")) {
      chunk.push(l);
      continue;
    }
    flush();
    title = l;
    out.push(l.text.startsWith("Probe: ") ? fact("plan-probe", "probe", { result: l.text.slice(7) }, l) : plainLine(l));
  }
  flush();
  return uniqueKeys(out);
}

/** The session's prompt, line by line: prose, aligned in order. */
export function parsePrompt(text: string): Fact[] {
  return [...headerFact(text), ...bodyLines(text).map((l) => ({ ...plainLine(l), type: "prompt-line" }))];
}

/** A review report golden: `## <verdict>` sections of `file · case · before → after · rule: why` lines. */
export function parseReviewReport(text: string): Fact[] {
  const out: Fact[] = [...headerFact(text)];
  let verdict = "";
  for (const l of bodyLines(text)) {
    if (l.text.trim() === "") continue;
    const section = /^## (weakens|unknown|strengthens|neutral)$/.exec(l.text);
    if (section) {
      verdict = section[1]!;
      out.push(fact("review-section", verdict, {}, l));
      continue;
    }
    const parts = l.text.split(" · ");
    if (verdict === "" || parts.length < 4) {
      out.push(
        l.text.startsWith("golden review: ") ? fact("review-summary", "summary", { counts: l.text }, l) : plainLine(l),
      );
      continue;
    }
    out.push(fact("review-finding", `${parts[0]} · ${parts[1]}`, { verdict, detail: parts.slice(2).join(" · ") }, l));
  }
  return uniqueKeys(out);
}

/**
 * The probe's diagnosis golden: the table (a row's id, then its indented cause, fix and why), then
 * one `case · row · refusal line` a recorded failure.
 */
export function parseDiagnoses(text: string): Fact[] {
  const out: Fact[] = [...headerFact(text)];
  let row = "";
  for (const l of bodyLines(text)) {
    if (l.text.trim() === "") continue;
    if (l.text.startsWith("# ")) {
      out.push(fact("diagnosis-section", l.text, {}, l));
      continue;
    }
    const parts = l.text.split(" · ");
    if (parts.length >= 3) {
      out.push(fact("diagnosis", parts[0]!, { row: parts[1]!, line: parts.slice(2).join(" · ") }, l));
      continue;
    }
    const field = /^ {2}(\w+): (.*)$/.exec(l.text);
    if (field) out.push(fact("diagnosis-row-text", `${row} ${field[1]}`, { text: field[2]! }, l));
    else {
      row = l.text;
      out.push(fact("diagnosis-row", row, {}, l));
    }
  }
  return uniqueKeys(out);
}
