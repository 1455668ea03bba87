// CODEOWNERS as GitHub reads it: one rule a line, a pattern and its owners, the last rule that
// matches a path naming that path's owners. Pure: the file's text in, owners out.

export type CodeownersRule = { pattern: string; owners: string[]; line: number; match: RegExp };
export type Codeowners = { rules: CodeownersRule[]; problems: string[] };

const globToRegex = (glob: string): string =>
  glob
    .split(/(\*\*\/|\/\*\*|\*\*|\*|\?)/)
    .map((part) => {
      if (part === "**/") return "(?:.*/)?";
      if (part === "/**") return "(?:/.*)?";
      if (part === "**") return ".*";
      if (part === "*") return "[^/]*";
      if (part === "?") return "[^/]";
      return part.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    })
    .join("");

/**
 * A pattern's matcher, with gitignore's reading as GitHub documents it: a pattern with a slash
 * at its start or in its middle is anchored at the root, any other matches at any depth; a
 * pattern names a file or a directory and everything in it, except one ending in `/*`, which
 * matches only the files directly in its directory.
 */
export function patternToRegex(pattern: string): RegExp {
  const dirOnly = pattern.endsWith("/");
  const p = pattern.replace(/^\//, "").replace(/\/$/, "");
  const anchored = pattern.startsWith("/") || p.includes("/");
  const body = globToRegex(p);
  const tail = /(^|[^*])\*$/.test(p) && p.includes("/") ? "" : dirOnly ? "/.*" : "(?:/.*)?";
  return new RegExp(`^${anchored ? "" : "(?:.*/)?"}${body}${tail}$`);
}

export function parseCodeowners(text: string): Codeowners {
  const rules: CodeownersRule[] = [];
  const problems: string[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") return;
    const [pattern, ...owners] = line.split(/\s+/);
    if (owners.length === 0) problems.push(`CODEOWNERS line ${i + 1}: ${pattern} names no owner`);
    const bad = owners.filter((o) => !/^@[\w.-]+(\/[\w.-]+)?$/.test(o) && !/^[^@\s]+@[^@\s]+$/.test(o));
    if (bad.length > 0) problems.push(`CODEOWNERS line ${i + 1}: not an owner: ${bad.join(" ")}`);
    rules.push({ pattern: pattern!, owners, line: i + 1, match: patternToRegex(pattern!) });
  });
  return { rules, problems };
}

/** The owners of a path: the last rule that matches it; none when no rule does. */
export function ownersOf(co: Codeowners, path: string): string[] {
  return co.rules.findLast((r) => r.match.test(path))?.owners ?? [];
}

/** A user owner's login (`@alice` → alice), lower-cased; null for a team or an email. */
export function loginOf(owner: string): string | null {
  return /^@[\w.-]+$/.test(owner) ? owner.slice(1).toLowerCase() : null;
}

/** A rule matching every path: it names who owns what nothing narrower names, not who guards the proof. */
const isCatchAll = (r: CodeownersRule) => /^\/?\*\*?$/.test(r.pattern);

/**
 * Each path whose owner is not a user named by a rule of its own: owned by nobody, by the catch-all
 * alone (whose owners change for reasons that have nothing to do with the proof), or by teams and
 * emails only (whose approval the review cannot read). Empty when every path has a guard.
 */
export function unguardedPaths(co: Codeowners, paths: readonly string[]): { path: string; why: string }[] {
  return paths.flatMap((path) => {
    const rule = co.rules.findLast((r) => r.match.test(path));
    if (rule === undefined) return [{ path, why: "no rule matches it" }];
    if (isCatchAll(rule)) return [{ path, why: `only the catch-all ${rule.pattern} (line ${rule.line}) owns it` }]; // safety: codeowners-catch-all
    if (!rule.owners.some((o) => loginOf(o) !== null)) return [{ path, why: `line ${rule.line} names no user` }];
    return [];
  });
}
