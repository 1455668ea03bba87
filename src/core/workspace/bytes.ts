/**
 * Names and paths as the kernel has them: bytes. A name need not be UTF-8, and a walk that decodes
 * names never examines the ones that are not (a setuid file and a nested repository under such
 * names survived one). So the end-of-session check and the handover hold every name and path as a
 * byte string: one char per byte (what latin1 decoding gives), so a name compares, sorts and joins
 * as its bytes, and the host turns it back into exactly those bytes for each system call.
 */

/** The byte string of a text (its UTF-8 bytes): how a path the host was given reads as bytes. */
export function bytesOf(text: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(text)) out += String.fromCharCode(b);
  return out;
}

/** How many bytes a UTF-8 sequence starting with lead has, or 0 when lead cannot start one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * The code point of the UTF-8 sequence at i of n bytes, or null when it is not valid UTF-8 (cut
 * short, overlong, a surrogate, past U+10FFFF). Past the end charCodeAt is NaN, which is no
 * continuation byte, so a sequence cut short fails there.
 */
function codePointAt(bytes: string, i: number, n: number): number | null {
  if (n === 0) return null;
  let cp = bytes.charCodeAt(i) & (n === 1 ? 0x7f : 0xff >> (n + 1));
  for (let k = 1; k < n; k++) {
    const c = bytes.charCodeAt(i + k);
    if ((c & 0xc0) !== 0x80) return null;
    cp = (cp << 6) | (c & 0x3f);
  }
  const least = [0, 0, 0x80, 0x800, 0x10000][n]!;
  if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return null;
  return cp;
}

/** Control characters (C0, DEL, C1) and the backslash itself are escaped too, so a name cannot forge a line or an escape. */
const escaped = (cp: number) => cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x5c;
const hex = (b: number) => `\\x${b.toString(16).padStart(2, "0")}`;

/**
 * A byte string as a report shows it: valid UTF-8 as its text, every other byte (and each control
 * character and backslash) as `\xNN`. Unambiguous, so two names never read alike.
 */
export function shownPath(bytes: string): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceLength(bytes.charCodeAt(i));
    const cp = codePointAt(bytes, i, n);
    if (cp === null) {
      out += hex(bytes.charCodeAt(i));
      i += 1;
    } else {
      out += escaped(cp)
        ? [...bytes.slice(i, i + n)].map((c) => hex(c.charCodeAt(0))).join("")
        : String.fromCodePoint(cp);
      i += n;
    }
  }
  return out;
}
