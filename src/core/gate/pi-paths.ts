/**
 * Pi 0.85.1's path handling, copied as data-in/data-out so the gate resolves a tool's path the
 * way Pi will. Recheck on a Pi upgrade (contract/gate-pi-differential.test.ts names the files):
 * dist/utils/paths.js (normalizePath, resolvePath) and dist/core/tools/path-utils.js
 * (resolveToCwd, resolveReadPath*).
 */

/** Pi's UNICODE_SPACES: each becomes an ASCII space before anything else. */
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

export type Normalised = { ok: true; path: string } | { ok: false; why: string };

/**
 * Pi's normalizePath with resolveToCwd's options (unicode spaces, one leading "@", "~" to home,
 * file:// URLs), on POSIX. Pi throws on a file URL it cannot convert; here that is a value.
 */
export function normalisePiPath(input: string, home: string): Normalised {
  // safety: gate-no-unicode-spaces
  let p = input.replace(UNICODE_SPACES, " ");
  // safety: gate-no-at-strip
  if (p.startsWith("@")) p = p.slice(1);
  // safety: gate-no-tilde
  if (p === "~") return { ok: true, path: home };
  if (p.startsWith("~/")) return { ok: true, path: joinPosix(home, p.slice(2)) };
  // safety: gate-no-file-url
  if (/^file:\/\//.test(p)) return fileUrlToPosixPath(p);
  return { ok: true, path: p };
}

/** node:url's fileURLToPath on POSIX, over the global WHATWG URL (src/core imports no node module). */
export function fileUrlToPosixPath(href: string): Normalised {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { ok: false, why: `not a valid file URL: ${JSON.stringify(href)}` };
  }
  if (url.protocol !== "file:") return { ok: false, why: `not a file URL: ${JSON.stringify(href)}` };
  if (url.hostname !== "") return { ok: false, why: `a file URL with a host (${url.hostname}) names no local path` };
  const pathname = url.pathname;
  if (/%2f/i.test(pathname)) return { ok: false, why: "a file URL must not encode / as %2F" };
  try {
    return { ok: true, path: decodeURIComponent(pathname) };
  } catch {
    return { ok: false, why: `a file URL with a bad escape: ${JSON.stringify(href)}` };
  }
}

/** node:path's posix normalize for an absolute path: no empty, "." or ".." segment, no trailing slash. */
export function normaliseAbsolute(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

/** node:path's posix join. */
export function joinPosix(a: string, b: string): string {
  const joined = [a, b].filter((s) => s.length > 0).join("/");
  if (joined === "") return ".";
  const abs = joined.startsWith("/");
  const out: string[] = [];
  for (const seg of joined.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length > 0 && out.at(-1) !== "..") out.pop();
      else if (!abs) out.push("..");
    } else out.push(seg);
  }
  const body = out.join("/");
  const trailing = joined.endsWith("/") && body !== "" ? "/" : "";
  return abs ? "/" + body + trailing : (body || ".") + trailing;
}

/** node:path's posix resolve(base, p) for an absolute base: lexical, ".." never touches the disk. */
export function resolveLexical(base: string, p: string): string {
  return p.startsWith("/") ? normaliseAbsolute(p) : normaliseAbsolute(base + "/" + p);
}

/** Pi's resolveToCwd: normalise, then resolve lexically against the working directory. */
export function resolveToCwdLikePi(input: string, cwd: string, home: string): Normalised {
  const n = normalisePiPath(input, home);
  return n.ok ? { ok: true, path: resolveLexical(cwd, n.path) } : n;
}

export type Spelling = { label: string; path: string };

/**
 * The other spellings Pi's read tries, in its order, when the resolved name does not exist
 * (resolveReadPath). Only those that differ from the resolved name.
 */
export function readSpellings(resolved: string): Spelling[] {
  const nfd = resolved.normalize("NFD");
  const all: Spelling[] = [
    // Case-insensitive, as Pi's: " am." and " pm." get the narrow space too.
    // safety: gate-no-ampm-spelling // safety: gate-ampm-case-sensitive
    { label: "U+202F before AM/PM", path: resolved.replace(/ (AM|PM)\./gi, "\u202F$1.") },
    // safety: gate-no-nfd-spelling
    { label: "NFD", path: nfd },
    // safety: gate-no-curly-spelling
    { label: "U+2019 for '", path: resolved.replace(/'/g, "\u2019") },
    // safety: gate-no-nfd-curly-spelling
    { label: "NFD with U+2019", path: nfd.replace(/'/g, "\u2019") },
  ];
  return all.filter((s) => s.path !== resolved);
}

/**
 * The name Pi's read opens (resolveReadPath): the resolved name if it exists, else the first of
 * its other spellings that exists (by access(2), which follows links), else the resolved name.
 * The gate does not need it (it checks every spelling); the differential test compares it to Pi.
 */
export function readPathLikePi(resolved: string, exists: (p: string) => boolean): string {
  if (exists(resolved)) return resolved;
  return readSpellings(resolved).find((s) => exists(s.path))?.path ?? resolved;
}
