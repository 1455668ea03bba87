import { describe, expect, it } from "vitest";
import {
  classCanBeDot,
  classEnd,
  closingIndex,
  spellingRe,
  spellsDotDot,
  splitTopLevel,
} from "../src/core/gate/glob-spell.ts";
import {
  MAX_PATTERN_LENGTH,
  PATTERN_RULES,
  alternativeFromRoot,
  describeRefusal,
  groupHoldingSlash,
  refusePattern,
} from "../src/core/gate/pattern-rules.ts";
import { claudeBaseToCheck, patternReadings } from "../src/core/gate/pattern.ts";

// The pattern rules one function at a time; contract/gate.test.ts's glob-groups scene has them
// through decide(), and contract/gate-property.test.ts against node's fs.glob.

describe("a group holding a /", () => {
  it("is found whole, in braces and parentheses, nested or never closed", () => {
    const cases: Array<[string, string | null]> = [
      ["{/outside,sub}/*", "{/outside,sub}"],
      ["sub/{x,a/b}/*", "{x,a/b}"],
      ["{a,{b,/c}}/*", "{a,{b,/c}}"],
      ["@(/outside|sub)/*", "(/outside|sub)"],
      ["{/outside,sub", "{/outside,sub"],
      ["(a/b", "(a/b"],
      ["{a,b}/*", null],
      ["notes (draft)/*", null],
      ["a]b/c}/*", null],
      ["[a/b]", null],
    ];
    for (const [p, want] of cases) expect(groupHoldingSlash(p), p).toBe(want);
  });
  it("fails closed on escapes: an escaped opener or / counts, an escaped closer closes nothing", () => {
    expect(groupHoldingSlash("\\{/x,y}/*")).toBe("{/x,y}");
    expect(groupHoldingSlash("{a\\},/x}/*")).toBe("{a\\},/x}");
    expect(groupHoldingSlash("{a\\/b,c}")).toBe("{a\\/b,c}");
    expect(groupHoldingSlash("{a\\,b}/c"), "an escaped comma is no closer").toBe(null);
  });
});

describe("a group alternative from / or ~", () => {
  it("is the first alternative of a brace or extglob that starts at / or ~", () => {
    const cases: Array<[string, string | null]> = [
      ["{~,sub}/*", "~"],
      ["{sub,~root}/*", "~root"],
      ["@(sub|~)/x", "~"],
      ["{/outside,sub}/*", "/outside"],
      ["(~)/x", "~"],
      ["a~b/*", null],
      ["{x,y~}/*", null],
      ["~/x,~", null],
      ["{a}~,~/x", null],
      ["{\\~,x}", null],
    ];
    for (const [p, want] of cases) expect(alternativeFromRoot(p), p).toBe(want);
  });
});

describe("a segment that spells ..", () => {
  it("escapes, classes, braces and extglobs can each spell it", () => {
    for (const seg of [
      "\\.\\.",
      ".\\.",
      "[.][.]",
      "[.].",
      "[\\.][.]",
      "[!a][.]",
      "[+-.][.]",
      "[[:punct:]].",
      "{.,}{.,}",
      "{.,x}{.,y}",
      ".{,x}.",
      "{{.,a},b}.",
      "{..}",
      "@(.)@(.)",
      "+(.)",
      "*(.)",
      "?(.).",
      "@(x|.)@(.)",
      ".*.",
      ".!(x).",
      "..",
    ])
      expect(spellsDotDot(seg), seg).toBe(true);
  });
  it("near misses do not: * and ? supply no dot, a class that leaves . out, one dot", () => {
    for (const seg of [
      "*",
      "**",
      ".*",
      ".?",
      "?.",
      "*.d.ts",
      "a.*.b",
      ".[!.]*",
      "[.]*",
      "[a-z].",
      "[!.].",
      "{.,x}y",
      "+(a).txt",
      "!(..)",
      "\\*",
      "[",
      "{.",
      "@(.",
      ".[.",
    ])
      expect(spellsDotDot(seg), seg).toBe(false);
  });
  it("the pieces: closers, top-level splits, class ends and what a class can be", () => {
    expect(closingIndex("{a,{b}}x", 0, "{", "}")).toBe(6);
    expect(closingIndex("{a\\}b}", 0, "{", "}")).toBe(5);
    expect(closingIndex("{a", 0, "{", "}")).toBe(-1);
    expect(splitTopLevel("a,{b,c},(d,e),f\\,g", ",")).toEqual(["a", "{b,c}", "(d,e)", "f\\,g"]);
    expect(splitTopLevel("a|b", "|")).toEqual(["a", "b"]);
    expect(classEnd("[]a]", 0)).toBe(3);
    expect(classEnd("[!]a]", 0)).toBe(4);
    expect(classEnd("[[:alpha:]]", 0)).toBe(10);
    expect(classEnd("[\\]]", 0)).toBe(3);
    expect(classEnd("[[:alpha]", 0)).toBe(-1);
    expect(classEnd("[ab", 0)).toBe(-1);
    expect([".", "a.", "+-/", "\\.", "!a", "^a", "[:punct:]"].map(classCanBeDot)).toEqual(Array(7).fill(true));
    expect(["a", "a-z", "!.", "^.", "!+-/", "/-z", "\\a"].map(classCanBeDot)).toEqual(Array(7).fill(false));
    expect(spellingRe("a*b?c")).toBe("ab(?!)c");
    expect(spellingRe("x/y")).toBe("x\\/y");
  });
});

describe("the rules in order, and how a refusal reads", () => {
  it("each rule names the pattern, the piece and its id", () => {
    const cases: Array<[string, string, string]> = [
      ["a".repeat(MAX_PATTERN_LENGTH + 1), "pattern-too-long", `${MAX_PATTERN_LENGTH + 1} characters`],
      ["**/../x", "dotdot-after-wildcard", ".."],
      ["{/outside,sub}/*", "group-holds-slash", "{/outside,sub}"],
      ["{~,sub}/*", "group-alternative-from-root", "~"],
      ["\\.\\./*", "dotdot-spelled-after-wildcard", "\\.\\."],
    ];
    for (const [pattern, rule, piece] of cases) {
      const r = refusePattern(pattern);
      expect(r, pattern).toEqual({ rule, pattern, piece });
      const text = describeRefusal(r!);
      expect(text.startsWith(JSON.stringify(pattern)), text).toBe(true);
      expect(text.endsWith(`(${rule})`), text).toBe(true);
      expect(text, "the piece is named").toContain(rule === "pattern-too-long" ? piece : JSON.stringify(piece));
    }
    expect(PATTERN_RULES.map((r) => r.rule)).toEqual(cases.map((c) => c[1]));
    expect(refusePattern("a".repeat(MAX_PATTERN_LENGTH)), "at the limit").toBe(null);
    expect(refusePattern("src/**/*.{ts,tsx}")).toBe(null);
  });
});

describe("how the gate reads a pattern", () => {
  it("with a \\, also with each \\ as /, as node's fs.glob does", () => {
    expect(patternReadings("src/*.ts")).toEqual([{ how: "", pattern: "src/*.ts" }]);
    const r = patternReadings("\\tmp\\*");
    expect(r.map((x) => x.pattern)).toEqual(["\\tmp\\*", "/tmp/*"]);
    expect(r[1]!.how).toContain("node's fs.glob");
  });
  it("Claude Code's base is checked for an absolute pattern, and for a relative one only past a cut character", () => {
    const cases: Array<[string, string]> = [
      ["/data/ws", "/data"],
      ["/data/ws/", "/data"],
      ["/data/ws/**", "/data/ws"],
      ["/data/ws/a]b/*", "/data/ws/a]b"],
      ["a]b/*", "a]b"],
      ["src/*.ts", "src"],
      ["../ws", ""],
      ["../ws/", ""],
      ["a.txt", ""],
      ["~/x", ""],
    ];
    for (const [p, base] of cases) expect(claudeBaseToCheck(p), p).toBe(base);
  });
});

describe("a segment that spells .., edge by edge", () => {
  it("an escape in a class is its character, as a range's start or its end", () => {
    expect(classCanBeDot("\\-."), "an escaped - lists itself, then the dot").toBe(true);
    expect(spellsDotDot("[\\-.]."), "[\\-.]").toBe(true);
    expect(classCanBeDot("#-\\-"), "# to an escaped - stops short of the dot").toBe(false);
    expect(classCanBeDot("#-\\/"), "# to an escaped / passes the dot").toBe(true);
  });
  it("a backslash last in a class body escapes nothing and is itself", () => {
    expect(classCanBeDot("#-\\"), "# to \\ passes the dot").toBe(true);
    expect(classCanBeDot("\\"), "a lone \\ lists no dot").toBe(false);
  });
  it("a - first or last in a class is one it lists, not a range", () => {
    expect(classCanBeDot(".-")).toBe(true);
    expect(spellsDotDot("[.-].")).toBe(true);
    expect(classCanBeDot("!-/"), "negated: - and / left out, so the dot is in").toBe(true);
    expect(spellsDotDot("[!-/].")).toBe(true);
  });
  it("characters with no - between them are each listed, after a range too", () => {
    expect(classCanBeDot("a.b")).toBe(true);
    expect(classCanBeDot("a-b.")).toBe(true);
    expect(spellsDotDot("[a.b].")).toBe(true);
  });
  it("a ] first after ^ is listed, as after !", () => {
    expect(classEnd("[^]a]", 0)).toBe(4);
    expect(spellsDotDot("[^]]."), "anything but ], so a dot").toBe(true);
  });
  it("a collating or equivalence item holding ] does not end the class", () => {
    expect(classEnd("[[.].]]", 0)).toBe(6);
    expect(classEnd("[[=]=]]", 0)).toBe(6);
  });
  it("a stray closer in a brace alternative is a character: the next alternative still counts", () => {
    expect(splitTopLevel("a),b", ",")).toEqual(["a)", "b"]);
    expect(spellsDotDot("{a),.}.")).toBe(true);
  });
  it("?, * and the other extglob marks open a group only right before a (", () => {
    expect(spellsDotDot("..?x(y)"), "? is one more character").toBe(false);
    expect(spellsDotDot("..*x(y)"), "x(y) is literal after *").toBe(false);
  });
  it("a ] with no [ before it is a character, not a class", () => {
    expect(spellsDotDot("x.].")).toBe(false);
  });
  it("a backslash last in a segment escapes nothing and is itself", () => {
    expect(() => spellingRe("..\\")).not.toThrow();
    expect(spellingRe("..\\")).toBe("\\.\\.\\\\");
    expect(spellsDotDot("..\\")).toBe(false);
  });
});

describe("where a group starts and ends, read as node's fs.glob reads it", () => {
  it("a group with a / that never closes is reported from its opener, not from the pattern's start", () => {
    expect(groupHoldingSlash("src/{a/b")).toBe("{a/b");
    expect(refusePattern("src/*/(x/y")?.piece).toBe("(x/y");
  });
  it("an escaped opener starts no alternative: \\{~x is a literal name, {~x a path from HOME", () => {
    expect(refusePattern("\\{~x")).toBe(null);
    expect(refusePattern("{~x"), "control: unescaped").toEqual({
      rule: "group-alternative-from-root",
      pattern: "{~x",
      piece: "~x",
    });
  });
  it("a closer ends its group: a , or | after it starts no alternative", () => {
    expect(refusePattern("(a)|~x")).toBe(null);
    expect(refusePattern("{a},~x")).toBe(null);
    expect(refusePattern("(a|~x)")?.piece, "control: inside the group").toBe("~x");
  });
  it("a closer ends only its own level: the outer group's next alternative still counts, and a stray closer hides none", () => {
    expect(refusePattern("{{a},~x}")?.piece).toBe("~x");
    expect(refusePattern("}{a,~x}")?.piece).toBe("~x");
    expect(refusePattern(")(a|~x)")?.piece).toBe("~x");
  });
});
