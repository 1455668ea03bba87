/**
 * What a repository's config.worktree may say. With extensions.worktreeConfig on, git reads it as
 * part of the repository's config (core.fsmonitor, core.hooksPath and core.worktree run or
 * redirect the host's git), and where none exists the session can create one: no stand-in works
 * (git fails on an unreadable file or a directory there, measured). So the end-of-session check
 * admits only what git itself writes there, in the form git writes it; anything else is moved out.
 */

/** The keys git writes to config.worktree (git sparse-checkout init, --sparse-index) and a worktree's own identity. */
export const WORKTREE_CONFIG_KEYS: ReadonlySet<string> = new Set([
  "core.sparsecheckout",
  "core.sparsecheckoutcone",
  "index.sparse",
  "user.name",
  "user.email",
]);

/** Bytes of config.worktree the check reads: git's own is a few lines; a longer one is not admitted. */
export const WORKTREE_CONFIG_BYTES = 4096;

const SECTION = /^\[([A-Za-z0-9-]+)\]$/;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*([^"\\]*))?$/;

/**
 * The keys (`section.key`, lower case, as git compares them) a config file sets, when it is in the
 * plain form git writes: `[section]` lines, `key = value` lines with no quote or backslash (so no
 * escape or continuation line hides another key), comments and blank lines. null for anything
 * else: a subsection, an include, a key before any section, a quote, a backslash.
 */
export function plainConfigKeys(text: string): string[] | null {
  const keys: string[] = [];
  let section: string | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const s = SECTION.exec(line);
    if (s !== null) {
      section = s[1]!.toLowerCase();
      continue;
    }
    const k = KEY.exec(line);
    if (k === null || section === null) return null;
    keys.push(`${section}.${k[1]!.toLowerCase()}`);
  }
  return keys;
}

/** Why a config.worktree's text is not one git would have written, or null when it is. */
export function worktreeConfigProblem(text: string | null): string | null {
  if (text === null) return "cannot be read";
  if (text.length >= WORKTREE_CONFIG_BYTES) return `longer than ${WORKTREE_CONFIG_BYTES - 1} bytes`;
  const keys = plainConfigKeys(text);
  if (keys === null) return "not in the plain form git writes (a subsection, an include, a quote or a backslash)";
  const other = keys.filter((k) => !WORKTREE_CONFIG_KEYS.has(k));
  return other.length === 0 ? null : `sets ${[...new Set(other)].join(", ")}, which git never writes there`;
}
