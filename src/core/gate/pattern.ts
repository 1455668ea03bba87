/** Glob patterns (find, Glob): the fixed part before the first wildcard is a path like any other. */
import { isAbsolute } from "../paths.ts";

/** Characters that make a segment a wildcard in fd, ripgrep or node globs (braces, classes, extglobs): a short, fail-closed cut. */
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

/** One way a tool reads a pattern, and how a refusal names it ("" for the pattern as written). */
export type PatternReading = { how: string; pattern: string };

/**
 * The readings of a pattern the gate checks: as written, and, when it holds a "\", with each
 * "\" as "/", since node 24's fs.glob reads it as a separator even on Linux (`\tmp\*` lists
 * /tmp), while ripgrep and fd read it as an escape.
 */
export function patternReadings(pattern: string): PatternReading[] {
  const out = [{ how: "", pattern }];
  const slashed = pattern.replaceAll("\\", "/");
  // safety: gate-pattern-backslash-unread
  if (slashed !== pattern)
    out.push({
      how: `${JSON.stringify(pattern)} read with each "\\" as "/", as node's fs.glob does: `,
      pattern: slashed,
    });
  return out;
}

/**
 * A ".." after a wildcard climbs from wherever the wildcard matched (a `**` may match nothing),
 * so no fixed path can vouch for it: any segment there holding ".." is refused.
 */
export function climbsAfterWildcard(parts: PatternParts): string | null {
  // safety: gate-no-pattern-dotdot
  return parts.rest.find((s) => s.includes("..")) ?? null;
}

/** What ends a pattern's fixed part for Claude Code 2.1.332's Glob (baselines/README.md). */
const CLAUDE_GLOB_SPECIAL = /[*?[{]/;

/**
 * The directory Claude Code 2.1.332's Glob searches for a pattern: the pattern up to the last "/"
 * before its first * ? [ or {, or its dirname when it has none ("" when no "/" comes first). A
 * ] } \ or extglob before that is part of a name, so this can be longer than splitPattern's prefix.
 */
export function claudeGlobBase(pattern: string): string {
  const m = CLAUDE_GLOB_SPECIAL.exec(pattern);
  if (m === null) return dirnamePosix(pattern);
  const cut = pattern.lastIndexOf("/", m.index);
  return cut === -1 ? "" : cut === 0 ? "/" : pattern.slice(0, cut);
}

/**
 * The fixed part the gate checks as Claude Code's: its Glob base for an absolute pattern (the
 * directory it walks, the dirname when nothing cuts it), and, stricter than Claude Code, for a
 * relative pattern with a cut character. A relative pattern without one is only a name filter
 * under the tool's path (baselines/README.md): its dirname is never searched, and the gate's own
 * prefix is the whole pattern. "" means nothing more to check.
 */
export function claudeBaseToCheck(pattern: string): string {
  // safety: gate-glob-base-relative-only
  if (!isAbsolute(pattern) && !CLAUDE_GLOB_SPECIAL.test(pattern)) return "";
  return claudeGlobBase(pattern);
}

/** node:path's posix dirname, its quirks included ("//a" gives "//"). */
export function dirnamePosix(p: string): string {
  if (p.length === 0) return ".";
  const hasRoot = p[0] === "/";
  let end = -1;
  let matchedSlash = true;
  for (let i = p.length - 1; i >= 1; --i) {
    if (p[i] === "/") {
      if (!matchedSlash) {
        end = i;
        break;
      }
    } else matchedSlash = false;
  }
  if (end === -1) return hasRoot ? "/" : ".";
  if (hasRoot && end === 1) return "//";
  return p.slice(0, end);
}
