/**
 * Whether one segment of a glob can spell "..": the segment read as a regular expression over
 * what it could expand to, asked about ".." alone. An escape is its character, a class any
 * character it lists, a brace or extglob group any of its alternatives. `*`, `?` and `!(...)`
 * supply no dot: they match names a directory listing holds, and no listing holds "..".
 */

const escapeRe = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/** A regular expression that matches nothing: a piece that can never supply a dot of "..". */
const NOTHING = "(?!)";

/** The index of the closer that ends the group opened at `at`, or -1: escapes skip a character, the same kind nests. */
export function closingIndex(s: string, at: number, open: string, close: string): number {
  let depth = 0;
  for (let i = at; i < s.length; i++) {
    const ch = s[i];
    if (ch === "\\") i++;
    else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return i;
  }
  return -1;
}

/** body split at each `sep` outside any nested brace or parenthesis, escapes kept. */
export function splitTopLevel(body: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "{" || ch === "(") depth++;
    else if ((ch === "}" || ch === ")") && depth > 0) depth--;
    else if (ch === sep && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

/**
 * Whether a bracket expression's body (between `[` and `]`) can match ".": one it lists (escaped
 * or in a range), or, negated, one it does not list. A POSIX class (`[:punct:]`) may: fail closed.
 */
export function classCanBeDot(body: string): boolean {
  const negated = body.startsWith("!") || body.startsWith("^");
  const chars = negated ? body.slice(1) : body;
  if (chars.includes("[:")) return true; // safety: gate-pattern-class-posix
  let lists = false;
  for (let i = 0; i < chars.length; i++) {
    let lo = chars[i]!;
    if (lo === "\\" && i + 1 < chars.length) lo = chars[++i]!;
    if (chars[i + 1] === "-" && i + 2 < chars.length) {
      let hi = chars[i + 2]!;
      i += 2;
      if (hi === "\\" && i + 1 < chars.length) hi = chars[++i]!;
      if (lo <= "." && "." <= hi) lists = true; // safety: gate-pattern-class-range
    } else if (lo === ".") lists = true;
  }
  return negated ? !lists : lists; // safety: gate-pattern-class-negation
}

/**
 * Where a bracket expression opened at `at` ends, or -1: a `]` first in it (after any `!`/`^`) is
 * one it lists, and a POSIX item (`[:punct:]`, `[.a.]`, `[=a=]`) is skipped whole.
 */
export function classEnd(s: string, at: number): number {
  let i = at + 1;
  if (s[i] === "!" || s[i] === "^") i++;
  if (s[i] === "]") i++;
  for (; i < s.length; i++) {
    const item = s[i] === "[" ? s[i + 1] : undefined;
    if (s[i] === "\\") i++;
    else if (item === ":" || item === "." || item === "=") {
      const close = s.indexOf(`${item}]`, i + 2);
      if (close === -1) return -1;
      i = close + 1;
    } else if (s[i] === "]") return i;
  }
  return -1;
}

const EXTGLOB_REPEAT: Readonly<Record<string, string>> = { "@": "", "?": "?", "*": "*", "+": "+" };

/** The regular expression of the group at `at` (brace, extglob or class) and where it ends, or null when none opens there. */
function groupAt(s: string, at: number): { re: string; end: number } | null {
  const ch = s[at]!;
  if ("?*+@!".includes(ch) && s[at + 1] === "(") {
    const end = closingIndex(s, at + 1, "(", ")");
    if (end === -1) return null;
    // safety: gate-pattern-spell-negation-as-nothing
    if (ch === "!") return { re: "", end };
    const alts = splitTopLevel(s.slice(at + 2, end), "|").map(spellingRe);
    // safety: gate-pattern-spell-no-extglob
    return { re: `(?:${alts.join("|")})${EXTGLOB_REPEAT[ch]}`, end };
  }
  if (ch === "{") {
    const end = closingIndex(s, at, "{", "}");
    if (end === -1) return null;
    const alts = splitTopLevel(s.slice(at + 1, end), ",").map(spellingRe);
    // safety: gate-pattern-spell-no-braces
    return { re: `(?:${alts.join("|")})`, end };
  }
  if (ch === "[") {
    const end = classEnd(s, at);
    if (end === -1) return null;
    // safety: gate-pattern-spell-no-classes
    return { re: classCanBeDot(s.slice(at + 1, end)) ? "\\." : NOTHING, end };
  }
  return null;
}

/** The regular expression of a glob segment's spellings, as far as a ".." among them goes. */
export function spellingRe(seg: string): string {
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    const group = groupAt(seg, i);
    if (group !== null) {
      re += group.re;
      i = group.end;
    } else if (ch === "\\" && i + 1 < seg.length)
      re += escapeRe(seg[++i]!); // safety: gate-pattern-spell-no-escapes
    else if (ch === "*")
      re += ""; // safety: gate-pattern-spell-star-as-nothing
    else if (ch === "?") re += NOTHING;
    else re += escapeRe(ch);
  }
  return re;
}

/** True when some spelling of the segment is exactly "..", the one name that climbs. */
export function spellsDotDot(seg: string): boolean {
  return new RegExp(`^(?:${spellingRe(seg)})$`, "s").test("..");
}
