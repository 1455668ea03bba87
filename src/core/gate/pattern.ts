/** Glob patterns (find, Glob): the fixed part before the first wildcard is a path like any other. */

/** Characters that make a segment a wildcard in fd, ripgrep or node globs (braces, classes, extglobs). */
const WILDCARD = /[*?[\]{}\\]|[!+@]\(/;

export type PatternParts = {
  /** The segments before the first wildcard, as a path ("" when the pattern starts with one). */
  prefix: string;
  /** The segments from the first wildcard on. */
  rest: string[];
};

export function splitPattern(pattern: string): PatternParts {
  const segs = pattern.split("/");
  const first = segs.findIndex((s) => WILDCARD.test(s));
  if (first === -1) return { prefix: pattern, rest: [] };
  // An absolute pattern keeps its leading "/" (segs[0] is "").
  const head = segs.slice(0, first);
  return { prefix: head.length === 1 && head[0] === "" ? "/" : head.join("/"), rest: segs.slice(first) };
}

/**
 * A ".." after a wildcard climbs from wherever the wildcard matched (a `**` may match nothing),
 * so no fixed path can vouch for it: any segment there holding ".." is refused.
 */
export function climbsAfterWildcard(parts: PatternParts): string | null {
  // safety: gate-no-pattern-dotdot
  return parts.rest.find((s) => s.includes("..")) ?? null;
}
