// JSON goldens (bundle files, the manifest) as facts: one per scalar at its path, one per member of
// a list of names, one per container. Lines are counted as JSON.stringify(value, null, 2) lays
// them out, which is how the goldens are written.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, headerFact, plainLine } from "./parse-lines.ts";

/** How an element of a list of objects is named in its path: by its name when it has one. */
function elementName(v: unknown, i: number): string {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const k of ["name", "id"]) if (typeof o[k] === "string") return String(o[k]);
  }
  return String(i);
}

function isContainer(v: unknown): v is object {
  return typeof v === "object" && v !== null;
}

function isEmpty(v: object): boolean {
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
}

/** Lines JSON.stringify(v, null, 2) gives v. */
function lineCount(v: unknown): number {
  if (!isContainer(v) || isEmpty(v)) return 1;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 2 + children.reduce((s: number, c) => s + lineCount(c), 0);
}

export function flattenJson(type: string, value: unknown, firstLine: number): Fact[] {
  const out: Fact[] = [];
  const walk = (v: unknown, path: string, line: number, shown: string) => {
    if (!isContainer(v)) {
      out.push({ type, key: path, at: path, fields: { value: JSON.stringify(v) }, text: shown, line });
      return;
    }
    const kind = Array.isArray(v) ? "[…]" : "{…}";
    out.push({
      type,
      key: path,
      at: path,
      fields: { value: isEmpty(v) ? (Array.isArray(v) ? "[]" : "{}") : kind },
      text: shown,
      line,
    });
    let l = line + 1;
    if (Array.isArray(v)) {
      v.forEach((el, i) => {
        if (isContainer(el)) walk(el, `${path}[${elementName(el, i)}]`, l, `${path}[${elementName(el, i)}]`);
        else
          out.push({
            type: `${type}-member`,
            key: `${path}[] ${JSON.stringify(el)}`,
            at: path,
            fields: {},
            text: JSON.stringify(el),
            line: l,
          });
        l += lineCount(el);
      });
    } else {
      for (const [k, child] of Object.entries(v)) {
        const p = path === "" ? k : `${path}.${k}`;
        walk(child, p, l, isContainer(child) ? p : `${p}: ${JSON.stringify(child)}`);
        l += lineCount(child);
      }
    }
  };
  walk(value, "", firstLine, "(document)");
  return uniqueKeys(out);
}

/** A JSON golden of one bundle file; `type` names the file (`policy`, `settings`, ...). */
export function parseJsonGolden(type: string): (text: string) => Fact[] {
  return (text) => {
    const lines = bodyLines(text);
    try {
      return [
        ...headerFact(text),
        ...flattenJson(type, JSON.parse(lines.map((l) => l.text).join("\n")), lines[0]?.line ?? 1),
      ];
    } catch {
      return [...headerFact(text), ...lines.map((l) => plainLine(l))];
    }
  };
}
