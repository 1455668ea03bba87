// How deep a JSON text nests and how many objects and arrays it holds, read off its bytes before
// anything parses it. JSON.parse builds every value at once: 28 MiB of `{}` is 14 million objects,
// about 1.8 GiB of heap and seconds of one core, all for a body refused only after the parse. The
// scan is one pass with two counters, and stops at the first byte past either bound.
import type { ProxyLimits } from "./proxy-limits.ts";

export type JsonShape = { depth: number; containers: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * The deepest nesting and the count of objects and arrays, outside strings, up to the first byte
 * past either bound (then the counts stand just past it). Bytes, not characters: no byte of a
 * multi-byte UTF-8 sequence is ASCII, so a quote, a backslash or a bracket is always itself. On a
 * text JSON.parse accepts the counts are exact; on any other, JSON.parse refuses it after.
 */
export function measureJson(bytes: Uint8Array, stopAt: JsonShape): JsonShape {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      depth++;
      containers++;
      deepest = Math.max(deepest, depth);
      if (deepest > stopAt.depth || containers > stopAt.containers) break;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
  }
  return { depth: deepest, containers };
}

export type ShapeDecision = { kind: "pass" } | { kind: "refuse"; status: number; errorType: string; message: string };

/** Whether a body may be parsed at all: no deeper than jsonDepth, no more containers than jsonContainers. */
export function decideJsonShape(
  bytes: Uint8Array,
  l: Pick<ProxyLimits, "jsonDepth" | "jsonContainers">,
): ShapeDecision {
  const s = measureJson(bytes, { depth: l.jsonDepth, containers: l.jsonContainers });
  if (s.depth > l.jsonDepth)
    // safety: json-depth-bounded
    return {
      kind: "refuse",
      status: 400,
      errorType: "invalid_request_error",
      message: `the request body nests deeper than the session's proxy reads (${l.jsonDepth} levels of objects and arrays)`,
    };
  if (s.containers > l.jsonContainers)
    // safety: json-containers-bounded
    return {
      kind: "refuse",
      status: 413,
      errorType: "request_too_large",
      message: `the request body holds more than the ${l.jsonContainers} objects and arrays the session's proxy parses`,
    };
  return { kind: "pass" };
}
