/**
 * What refuses a find/Glob pattern before its fixed parts are checked as paths: shapes the fixed
 * prefix cannot vouch for. Each rule is one row: what it refuses and why. A glob library that
 * expands its pattern (node's fs.glob, a shell) opens every alternative, escape and class as a path
 * of its own, wherever the prefix stops.
 */
import { spellsDotDot } from "./glob-spell.ts";
import { climbsAfterWildcard, splitPattern, type PatternParts } from "./pattern.ts";

export type PatternRuleId =
  | "pattern-too-long"
  | "dotdot-after-wildcard"
  | "group-holds-slash"
  | "group-alternative-from-root"
  | "dotdot-spelled-after-wildcard";

/** A refused pattern: the rule, the pattern, and the piece of it that tripped the rule. */
export type PatternRefusal = { rule: PatternRuleId; pattern: string; piece: string };

type PatternRule = {
  rule: PatternRuleId;
  /** The piece of the pattern the rule refuses, or null. */
  find: (pattern: string, parts: PatternParts) => string | null;
  /** How a refusal reads: the piece, and why it is refused. */
  says: (piece: string) => string;
};

/** The kernel looks up no path of PATH_MAX (4096) bytes or more; a longer pattern is not worth the scan. */
export const MAX_PATTERN_LENGTH = 4096;

const GROUP_OPEN: Readonly<Record<string, string>> = { "{": "}", "(": ")" };

const GROUP_CLOSE = new Set(Object.values(GROUP_OPEN));

/**
 * The first brace or parenthesis group a "/" falls inside, whole (to the pattern's end when it
 * never closes), or null. Fail closed on escapes: an escaped opener or "/" still counts; only an
 * escaped closer is skipped, since it closes nothing.
 */
export function groupHoldingSlash(pattern: string): string | null {
  const open: number[] = [];
  let hit: number | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\" && GROUP_CLOSE.has(pattern[i + 1] ?? "")) i++;
    else if (ch in GROUP_OPEN) open.push(i);
    else if (open.length > 0 && ch === GROUP_OPEN[pattern[open.at(-1)!]!]) {
      open.pop();
      if (hit !== null && open.length === 0) return pattern.slice(hit, i + 1);
    } else if (ch === "/" && open.length > 0) hit ??= open[0]!;
  }
  return hit === null ? null : pattern.slice(hit);
}

/** The first alternative of a brace or parenthesis group that starts at "/" or "~" (a path from the root or HOME), or null. */
export function alternativeFromRoot(pattern: string): string | null {
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") i++;
    else if (ch === "}" || ch === ")") depth = Math.max(0, depth - 1);
    else {
      if (ch === "{" || ch === "(") depth++;
      const startsAlternative = ch === "{" || ch === "(" || (depth > 0 && (ch === "," || ch === "|"));
      const next = pattern[i + 1];
      if (startsAlternative && (next === "/" || next === "~")) return pattern.slice(i + 1).split(/[,|})]/, 1)[0]!;
    }
  }
  return null;
}

const q = JSON.stringify;

/** The rules, in the order a refusal is reported. */
export const PATTERN_RULES: readonly PatternRule[] = [
  {
    rule: "pattern-too-long",
    find: (p) => (p.length > MAX_PATTERN_LENGTH ? `${p.length} characters` : null),
    says: (n) => `is ${n} long, over ${MAX_PATTERN_LENGTH}: no path that long can be looked up`,
  },
  {
    rule: "dotdot-after-wildcard",
    find: (_, parts) => climbsAfterWildcard(parts),
    says: (seg) => `has ".." after a wildcard (${q(seg)}), which could climb out`,
  },
  {
    rule: "group-holds-slash",
    // safety: gate-pattern-group-slash
    find: (p) => groupHoldingSlash(p),
    says: (g) =>
      `has a "/" inside the group ${q(g)}: its alternatives are paths of their own, which the fixed prefix does not vouch for`,
  },
  {
    rule: "group-alternative-from-root",
    // safety: gate-pattern-group-root
    find: (p) => alternativeFromRoot(p),
    says: (a) => `has a group alternative ${q(a)} that starts at / or ~: a path from the root or HOME of its own`,
  },
  {
    rule: "dotdot-spelled-after-wildcard",
    // safety: gate-pattern-spelled-dotdot
    find: (_, parts) => parts.rest.find(spellsDotDot) ?? null,
    says: (seg) =>
      `has a segment after a wildcard that spells ".." (${q(seg)}) once its escapes, classes or groups are read, which could climb out`,
  },
];

/** The first rule the pattern breaks, or null when its fixed parts are what is left to check. */
export function refusePattern(pattern: string): PatternRefusal | null {
  const parts = splitPattern(pattern);
  for (const r of PATTERN_RULES) {
    const piece = r.find(pattern, parts);
    if (piece !== null) return { rule: r.rule, pattern, piece };
  }
  return null;
}

/** A refusal as the gate's reason: the pattern, the piece, why, and the rule's id. */
export function describeRefusal(r: PatternRefusal): string {
  const rule = PATTERN_RULES.find((x) => x.rule === r.rule)!;
  return `${q(r.pattern)} ${rule.says(r.piece)} (${r.rule})`;
}
