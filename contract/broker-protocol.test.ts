import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_LINE_BYTES,
  newFramer,
  parseLineBytes,
  parseRequest,
  pushChunk,
  readLines,
  renderRequest,
  renderResponse,
  type BrokerRequest,
  type Framer,
  type ParsedLine,
} from "../src/conformance/stand-ins/broker/protocol.ts";
import { handleLine, newBrokerState } from "../src/conformance/stand-ins/broker/state.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Feeds chunks in order; returns the framer's lines as text and the last framer. */
function frameAll(chunks: Uint8Array[], framer: Framer = newFramer()): { lines: string[]; framer: Framer } {
  const lines: string[] = [];
  for (const c of chunks) {
    const r = pushChunk(framer, c);
    framer = r.framer;
    for (const f of r.frames) lines.push(f.kind === "line" ? text(f.bytes) : "<too-long>");
  }
  return { lines, framer };
}

function readAll(chunks: Uint8Array[], framer: Framer = newFramer()): ParsedLine[] {
  const out: ParsedLine[] = [];
  for (const c of chunks) {
    const r = readLines(framer, c);
    framer = r.framer;
    out.push(...r.lines);
  }
  return out;
}

/** Splits bytes at the given cut points (any order, any repeats). */
function cut(b: Uint8Array, points: number[]): Uint8Array[] {
  const at = [...new Set(points.map((p) => p % (b.length + 1)))].sort((x, y) => x - y);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...at, b.length]) {
    out.push(b.subarray(prev, p));
    prev = p;
  }
  return out;
}

const OK = { id: 1, cap: "c", verb: "role.claim", args: {} };

describe("parseRequest: one line's text", () => {
  it.each<[string, string, ParsedLine]>([
    ["a request", JSON.stringify(OK), { kind: "request", request: OK }],
    [
      "a string id and args",
      `{"id":"a","cap":"","verb":"message.send","args":{"to":"x","body":"y"}}`,
      { kind: "request", request: { id: "a", cap: "", verb: "message.send", args: { to: "x", body: "y" } } },
    ],
    [
      "not JSON",
      `{"id":1,`,
      { kind: "bad", id: null, field: "line", reason: expect.stringMatching(/^not JSON \(/) as unknown as string },
    ],
    ["an array", `[1,2]`, { kind: "bad", id: null, field: "line", reason: "not a JSON object" }],
    ["null", `null`, { kind: "bad", id: null, field: "line", reason: "not a JSON object" }],
    ["a number", `7`, { kind: "bad", id: null, field: "line", reason: "not a JSON object" }],
    [
      "no id",
      `{"cap":"c","verb":"v","args":{}}`,
      { kind: "bad", id: null, field: "id", reason: "must be a string or a finite number" },
    ],
    [
      "an object id",
      `{"id":{},"cap":"c","verb":"v","args":{}}`,
      { kind: "bad", id: null, field: "id", reason: "must be a string or a finite number" },
    ],
    [
      "an id that overflows to Infinity",
      `{"id":1e999,"cap":"c","verb":"v","args":{}}`,
      { kind: "bad", id: null, field: "id", reason: "must be a string or a finite number" },
    ],
    [
      "an unknown field, named",
      `{"id":2,"cap":"c","verb":"v","args":{},"capability":"x"}`,
      { kind: "bad", id: 2, field: "capability", reason: "not a field of a request (id, cap, verb, args)" },
    ],
    [
      "a __proto__ field",
      `{"id":2,"cap":"c","verb":"v","args":{},"__proto__":{}}`,
      { kind: "bad", id: 2, field: "__proto__", reason: "not a field of a request (id, cap, verb, args)" },
    ],
    ["no cap", `{"id":3,"verb":"v","args":{}}`, { kind: "bad", id: 3, field: "cap", reason: "must be a string" }],
    [
      "a number cap",
      `{"id":3,"cap":5,"verb":"v","args":{}}`,
      { kind: "bad", id: 3, field: "cap", reason: "must be a string" },
    ],
    [
      "an empty verb",
      `{"id":4,"cap":"c","verb":"","args":{}}`,
      { kind: "bad", id: 4, field: "verb", reason: "must be a non-empty string" },
    ],
    [
      "no args",
      `{"id":5,"cap":"c","verb":"v"}`,
      { kind: "bad", id: 5, field: "args", reason: "must be a JSON object" },
    ],
    [
      "array args",
      `{"id":5,"cap":"c","verb":"v","args":[]}`,
      { kind: "bad", id: 5, field: "args", reason: "must be a JSON object" },
    ],
    [
      "null args",
      `{"id":5,"cap":"c","verb":"v","args":null}`,
      { kind: "bad", id: 5, field: "args", reason: "must be a JSON object" },
    ],
  ])("%s", (_n, line, want) => {
    expect(parseRequest(line)).toEqual(want);
  });
});

describe("parseLineBytes: decoding one framed line", () => {
  it("strips one trailing CR, so CRLF framing works", () => {
    expect(parseLineBytes(bytes(JSON.stringify(OK) + "\r"))).toEqual({ kind: "request", request: OK });
  });
  it("an empty line, bare or CRLF, is no request and gets no response", () => {
    expect(parseLineBytes(bytes(""))).toBeNull();
    expect(parseLineBytes(bytes("\r"))).toBeNull();
  });
  it("a blank line that is not empty is bad JSON", () => {
    expect(parseLineBytes(bytes("  "))).toMatchObject({ kind: "bad", field: "line" });
  });
  it.each([
    ["a lone continuation byte", [0x7b, 0x80, 0x7d]],
    ["a truncated sequence", [0x22, 0xe2, 0x82, 0x22]],
    ["an overlong encoding", [0xc0, 0xaf]],
    ["a UTF-16 surrogate", [0xed, 0xa0, 0x80]],
  ])("invalid UTF-8 (%s) is refused, not replaced", (_n, b) => {
    expect(parseLineBytes(new Uint8Array(b))).toEqual({
      kind: "bad",
      id: null,
      field: "line",
      reason: "not valid UTF-8",
    });
  });
  it("valid multi-byte UTF-8 is kept", () => {
    const req = { ...OK, args: { body: "héllo ✓ 🙂" } };
    expect(parseLineBytes(bytes(JSON.stringify(req)))).toEqual({ kind: "request", request: req });
  });
});

describe("pushChunk: line framing", () => {
  it.each<[string, string[], string[]]>([
    ["one line", ["a\n"], ["a"]],
    ["several lines in one chunk", ["a\nb\nc\n"], ["a", "b", "c"]],
    ["a line over several chunks", ["a", "b", "c\n"], ["abc"]],
    ["a newline alone in a chunk", ["ab", "\n"], ["ab"]],
    ["empty lines are framed (the parser drops them)", ["\n\na\n"], ["", "", "a"]],
    ["CRLF keeps its CR for the parser", ["a\r\n"], ["a\r"]],
    ["an unfinished line is held back", ["a\nb"], ["a"]],
    ["empty chunks change nothing", ["", "a", "", "\n", ""], ["a"]],
  ])("%s", (_n, chunks, want) => {
    expect(frameAll(chunks.map(bytes)).lines).toEqual(want);
  });
  it("splits a multi-byte character across chunks without harm", () => {
    const b = bytes("é✓\n");
    expect(frameAll([b.subarray(0, 1), b.subarray(1, 3), b.subarray(3)]).lines).toEqual(["é✓"]);
  });
  it("keeps its own copy: a reused chunk buffer does not change a held line", () => {
    const buf = bytes("ab");
    const r = pushChunk(newFramer(), buf);
    buf.fill(0x7a);
    expect(frameAll([bytes("\n")], r.framer).lines).toEqual(["ab"]);
  });
  it("an over-long line gives one too-long as soon as it passes the limit, then framing resumes after its newline", () => {
    const small = newFramer(4);
    expect(frameAll([bytes("abcd\n")], small).lines).toEqual(["abcd"]);
    expect(frameAll([bytes("abcde\nok\n")], small).lines).toEqual(["<too-long>", "ok"]);
    const first = frameAll([bytes("abc"), bytes("de")], small);
    expect(first.lines, "reported before its newline arrives").toEqual(["<too-long>"]);
    expect(first.framer.pendingBytes, "and not buffered").toBe(0);
    expect(frameAll([bytes("xxxxxxxx"), bytes("x\nok\n")], first.framer).lines).toEqual(["ok"]);
  });
  it("the real limit is 1 MiB: a line of exactly 1 MiB is framed, one byte more is too long", () => {
    const max = new Uint8Array(MAX_LINE_BYTES + 1).fill(0x61);
    max[MAX_LINE_BYTES] = 0x0a;
    expect(pushChunk(newFramer(), max).frames.map((f) => f.kind)).toEqual(["line"]);
    const over = new Uint8Array(MAX_LINE_BYTES + 2).fill(0x61);
    over[MAX_LINE_BYTES + 1] = 0x0a;
    expect(pushChunk(newFramer(), over).frames.map((f) => f.kind)).toEqual(["too-long"]);
  });
});

describe("readLines: framing and parsing together", () => {
  it("a garbage line then a good one: one bad, one request, in order", () => {
    expect(readAll([bytes("garbage\n" + JSON.stringify(OK) + "\n")]).map((l) => l.kind)).toEqual(["bad", "request"]);
  });
  it("the too-long line is a bad request naming the line", () => {
    expect(readAll([bytes("abcdef\n")], newFramer(4))).toEqual([
      { kind: "bad", id: null, field: "line", reason: "longer than 4 bytes" },
    ]);
  });
});

describe("rendering", () => {
  it("one line per response, ending in a newline, no newline inside", () => {
    const r = renderResponse({ id: 1, ok: true, result: { body: "a\nb" } });
    expect(r.endsWith("\n")).toBe(true);
    expect(r.slice(0, -1).includes("\n")).toBe(false);
    expect(JSON.parse(r)).toEqual({ id: 1, ok: true, result: { body: "a\nb" } });
  });
});

// Fixed seed, so the contract tier is repeatable.
const SEED = 20261203;

const requestArb: fc.Arbitrary<BrokerRequest> = fc.record({
  id: fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
  ),
  cap: fc.string(),
  verb: fc.string({ minLength: 1 }),
  args: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
    noNullPrototype: true,
  }) as fc.Arbitrary<Record<string, unknown>>,
});

/** A line's content: anything, but no newline (the framer's separator). */
const lineArb = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((b) => b.map((x) => (x === 0x0a ? 0x20 : x))),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => bytes(s.replaceAll("\n", " "))),
  { arbitrary: requestArb.map((r) => bytes(renderRequest(r).slice(0, -1))), weight: 3 },
);

describe("framer and parser properties (fixed seed)", () => {
  it("for any bytes cut anywhere: no throw, one parsed line per complete non-empty line, requests round-trip", () => {
    const seen = { request: 0, bad: 0, tooLong: 0, empty: 0 };
    fc.assert(
      fc.property(
        fc.array(lineArb, { maxLength: 8 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 16, max: 600 }),
        (lines, crlf, cuts, max) => {
          const eol = crlf ? bytes("\r\n") : bytes("\n");
          const whole = new Uint8Array(lines.reduce((n, l) => n + l.length + eol.length, 0));
          let at = 0;
          for (const l of lines) {
            whole.set(l, at);
            whole.set(eol, at + l.length);
            at += l.length + eol.length;
          }
          const parsed = readAll(cut(whole, cuts), newFramer(max));
          // What each line alone should give, framing aside: too-long, nothing (empty), or its parse.
          const want = lines.flatMap((l): ParsedLine[] => {
            const content = crlf ? new Uint8Array([...l, 0x0d]) : l;
            if (content.length > max)
              return [{ kind: "bad", id: null, field: "line", reason: `longer than ${max} bytes` }];
            const p = parseLineBytes(content);
            return p === null ? [] : [p];
          });
          for (const w of want)
            w.kind === "request"
              ? seen.request++
              : w.field === "line" && w.reason.startsWith("longer")
                ? seen.tooLong++
                : seen.bad++;
          seen.empty += lines.length - want.length;
          expect(parsed).toEqual(want);
          // Every parsed line gets exactly one response, with the request's id when it had one.
          const state = newBrokerState();
          for (const line of parsed) {
            const out = handleLine(state, line, "broker");
            expect(out.state).toBe(state);
            expect(out.response.id).toEqual(line.kind === "request" ? line.request.id : line.id);
            expect(renderResponse(out.response).split("\n")).toHaveLength(2);
          }
        },
      ),
      { seed: SEED, numRuns: 250 },
    );
    // Each kind of line well represented, or the property proves little.
    for (const [kind, n] of Object.entries(seen)) expect(n, `${kind}: ${JSON.stringify(seen)}`).toBeGreaterThan(20);
  });

  it("a rendered request, cut anywhere, parses back to itself", () => {
    fc.assert(
      fc.property(
        fc.array(requestArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (reqs, cuts) => {
          const parsed = readAll(cut(bytes(reqs.map(renderRequest).join("")), cuts));
          expect(parsed).toEqual(reqs.map((request) => ({ kind: "request", request })));
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("parseRequest never throws on any string", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (s) => {
          const p = parseRequest(s);
          expect(["request", "bad"]).toContain(p.kind);
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});
