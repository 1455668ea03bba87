// The pure pieces the end-of-session check's walk rests on, edge by edge: names as bytes and how a
// report shows them, the plain config form config.worktree is admitted in, the report's bounds and
// the order remedies are planned in. Each answer whole, so a changed rule is a failed test.
import { describe, expect, it } from "vitest";
import { bytesOf, shownPath } from "../src/core/workspace/bytes.ts";
import type { Finding } from "../src/core/workspace/findings.ts";
import {
  plainConfigKeys,
  WORKTREE_CONFIG_BYTES,
  WORKTREE_CONFIG_KEYS,
  worktreeConfigProblem,
} from "../src/core/workspace/git-config.ts";
import { type Done, planRemedies, REPORT_LISTS, reportOf, shownRelative } from "../src/core/workspace/remedy.ts";

/** A byte string from bytes given as numbers. */
const b = (...bytes: number[]) => String.fromCharCode(...bytes);

describe("names as bytes", () => {
  it("bytesOf is the UTF-8 bytes of a text, one char a byte", () => {
    expect(bytesOf("a/é€😀")).toBe(b(0x61, 0x2f, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80));
    expect(bytesOf("")).toBe("");
  });

  it("shownPath shows valid UTF-8 as its text, of every length", () => {
    expect(shownPath(bytesOf("plain/ascii.txt"))).toBe("plain/ascii.txt");
    expect(shownPath(bytesOf("é€😀"))).toBe("é€😀");
    expect(shownPath(b(0xc2, 0xa0))).toBe("\u00a0");
    expect(shownPath(b(0xdf, 0xbf, 0xef, 0xbf, 0xbf, 0xf4, 0x8f, 0xbf, 0xbf))).toBe("\u07ff\uffff\u{10ffff}");
    // The least code point of each length: U+0800, U+10000.
    expect(shownPath(b(0xe0, 0xa0, 0x80, 0xf0, 0x90, 0x80, 0x80))).toBe("\u0800\u{10000}");
  });

  it("shownPath shows every byte that is not valid UTF-8 as \\xNN, and goes on after it", () => {
    const cases: Array<[string, string]> = [
      [b(0x62, 0x61, 0x64, 0xff), "bad\\xff"],
      [b(0x80), "\\x80"],
      [b(0xc0, 0xaf), "\\xc0\\xaf"],
      [b(0xc1, 0xbf), "\\xc1\\xbf"],
      [b(0xe0, 0x80, 0xaf), "\\xe0\\x80\\xaf"],
      [b(0xed, 0xa0, 0x80), "\\xed\\xa0\\x80"],
      [b(0xf0, 0x80, 0x80, 0xaf), "\\xf0\\x80\\x80\\xaf"],
      [b(0xf4, 0x90, 0x80, 0x80), "\\xf4\\x90\\x80\\x80"],
      [b(0xf5, 0x80), "\\xf5\\x80"],
      [b(0xc3), "\\xc3"],
      [b(0xc3, 0x28), "\\xc3("],
      [b(0xe2, 0x82), "\\xe2\\x82"],
      [b(0xe2, 0x82, 0x41), "\\xe2\\x82A"],
      [b(0xf0, 0x9f, 0x98), "\\xf0\\x9f\\x98"],
      // Bytes that cannot lead a sequence, followed by what would complete one of 3 or 4 bytes.
      [b(0x81, 0x80, 0x80), "\\x81\\x80\\x80"],
      [b(0xc1, 0x80, 0x80, 0x80), "\\xc1\\x80\\x80\\x80"],
      [b(0xf5, 0x80, 0x80, 0x80), "\\xf5\\x80\\x80\\x80"],
      [b(0xfc, 0x80, 0x80, 0x80), "\\xfc\\x80\\x80\\x80"],
      // The last surrogate.
      [b(0xed, 0xbf, 0xbf), "\\xed\\xbf\\xbf"],
    ];
    for (const [bytes, shown] of cases) expect(shownPath(bytes), shown).toBe(shown);
  });

  it("shownPath escapes control characters, DEL, C1 controls and the backslash itself, so no name forges a line or an escape", () => {
    expect(shownPath(b(0x61, 0x0a, 0x62))).toBe("a\\x0ab");
    expect(shownPath(b(0x00, 0x09, 0x0d, 0x1f))).toBe("\\x00\\x09\\x0d\\x1f");
    expect(shownPath(b(0x7f))).toBe("\\x7f");
    expect(shownPath(b(0xc2, 0x80, 0xc2, 0x85, 0xc2, 0x9f))).toBe("\\xc2\\x80\\xc2\\x85\\xc2\\x9f");
    expect(shownPath("a\\xff")).toBe("a\\x5cxff");
    expect(shownPath(b(0x20, 0x7e))).toBe(" ~");
  });

  it("a path relative to the workspace is shown the same way", () => {
    expect(shownRelative("/ws", `/ws/bad${b(0xff)}/x`)).toBe("bad\\xff/x");
    expect(shownRelative("/ws", "/ws")).toBe(".");
  });
});

describe("config.worktree in the plain form git writes", () => {
  it("the keys of sections and key lines, lower case, with comments, blank lines, CRLF and a key without a value", () => {
    expect(
      plainConfigKeys(
        "# the founder's\n; another\n\n[Core]\r\n\tsparseCheckout = true\n  SparseCheckoutCone=true ; inline\n[user]\n\temail = me@x\n\tbare\n",
      ),
    ).toEqual(["core.sparsecheckout", "core.sparsecheckoutcone", "user.email", "user.bare"]);
    expect(plainConfigKeys("")).toEqual([]);
  });

  it("anything else is not the plain form: a key before any section, a key on its section's line, a subsection, an old-style subsection, a quote, a backslash, a key not a name", () => {
    for (const text of [
      "fsmonitor = x\n",
      "[core] fsmonitor = x\n",
      '[core "x"]\n\tbare = false\n',
      "[core.x]\n\tbare = false\n",
      '[user]\n\temail = "a"\n',
      "[user]\n\temail = a\\\n",
      "[user]\n\t1email = a\n",
      "[user]\n\temail = a\n\t= b\n",
      "[]\n",
    ])
      expect(plainConfigKeys(text), JSON.stringify(text)).toBeNull();
  });

  it("admitted: git's sparse-checkout keys and a worktree's user; each other key, unreadable text, a long file or another form is named", () => {
    expect([...WORKTREE_CONFIG_KEYS].sort()).toEqual([
      "core.sparsecheckout",
      "core.sparsecheckoutcone",
      "index.sparse",
      "user.email",
      "user.name",
    ]);
    expect(
      worktreeConfigProblem("[core]\n\tsparseCheckout = true\n[index]\n\tsparse = true\n[user]\n\tname = F\n"),
    ).toBeNull();
    expect(worktreeConfigProblem("[core]\n\tfsmonitor = x\n\thooksPath = y\n\tfsmonitor = z\n")).toBe(
      "sets core.fsmonitor, core.hookspath, which git never writes there",
    );
    expect(worktreeConfigProblem(null)).toBe("cannot be read");
    expect(worktreeConfigProblem("#".repeat(WORKTREE_CONFIG_BYTES - 1))).toBeNull();
    expect(worktreeConfigProblem("#".repeat(WORKTREE_CONFIG_BYTES))).toBe(
      `longer than ${WORKTREE_CONFIG_BYTES - 1} bytes`,
    );
    expect(worktreeConfigProblem("[include]\n\tpath = x\n")).toBe("sets include.path, which git never writes there");
    expect(worktreeConfigProblem('[core "x"]\n')).toBe(
      "not in the plain form git writes (a subsection, an include, a quote or a backslash)",
    );
  });
});

describe("the remedies' order and the report's bounds", () => {
  const WS = "/ws";
  const Q = "/q";
  const f = (kind: Finding["kind"], rel: string): Finding => ({ kind, path: `${WS}/${rel}`, detail: "seen" });

  it("tree order: a path's descendants come right after it, before a sibling that sorts between them byte by byte", () => {
    const plan = planRemedies(WS, Q, [
      f("git-foreign-name", "a.b"),
      f("nested-repository", "a/.git"),
      f("unreadable", "a"),
    ]);
    expect(plan.map((r) => (r.op === "move" ? r.from : r.path))).toEqual([`${WS}/a`, `${WS}/a.b`]);
  });

  it("a finding only reported is never acted on, wherever it lies", () => {
    expect(planRemedies(WS, Q, [{ kind: "unexamined", path: `${WS}/sub`, detail: "the walk stopped" }])).toEqual([
      { op: "none", kind: "unexamined", path: `${WS}/sub`, detail: "the walk stopped" },
    ]);
  });

  it("the report counts what it leaves out of either list, and says nothing of it when it leaves nothing out", () => {
    const many = (n: number): Done[] =>
      Array.from({ length: n }, (_, i) => ({ kind: "setid-file", path: `b${i}`, did: "cleared-setid", detail: "x" }));
    const doneOnly = reportOf(WS, Q, many(REPORT_LISTS + 1), [], []);
    expect(doneOnly.verdict === "quarantined" && doneOnly.omitted).toEqual({ done: 1, failed: 0 });
    const failedOnly = reportOf(
      WS,
      Q,
      [],
      [],
      Array.from({ length: REPORT_LISTS + 1 }, (_, i) => f("setid-file", `c${i}`)),
    );
    expect(failedOnly.verdict === "unsafe" && failedOnly.omitted).toEqual({ done: 0, failed: 1 });
    expect("omitted" in reportOf(WS, Q, many(REPORT_LISTS), [], [])).toBe(false);
  });

  it("an unexamined workspace is reported and nothing is done for it: no move, not even of the workspace", () => {
    expect(planRemedies(WS, Q, [{ kind: "unexamined", path: WS, detail: "the walk stopped at 5 entries" }])).toEqual([
      { op: "none", kind: "unexamined", path: WS, detail: "the walk stopped at 5 entries" },
    ]);
  });

  it("the report lists REPORT_LISTS done and failed, counts the rest, and tells a failure once though the second look finds it again", () => {
    const done: Done[] = Array.from({ length: REPORT_LISTS + 3 }, (_, i) => ({
      kind: "setid-file",
      path: `b${i}`,
      did: "cleared-setid",
      detail: "mode 4755",
    }));
    const failed = [{ kind: "unexamined" as const, path: ".", error: "stopped" }];
    const left: Finding[] = [
      { kind: "unexamined", path: WS, detail: "stopped" },
      ...Array.from({ length: REPORT_LISTS + 1 }, (_, i) => f("setid-file", `c${i}`)),
    ];
    const r = reportOf(WS, Q, done, failed, left);
    expect(r.verdict).toBe("unsafe");
    if (r.verdict !== "unsafe") return;
    expect([r.done.length, r.failed.length, r.omitted]).toEqual([
      REPORT_LISTS,
      REPORT_LISTS,
      { done: 3, failed: REPORT_LISTS + 2 - REPORT_LISTS },
    ]);
    expect(r.failed[0]).toEqual({ kind: "unexamined", path: ".", error: "stopped" });
    expect(r.failed[1]).toEqual({ kind: "setid-file", path: "c0", error: "still there after the remedies: seen" });
    expect(reportOf(WS, Q, done.slice(0, 2), [], [])).toEqual({
      verdict: "quarantined",
      workspace: WS,
      quarantine: Q,
      done: done.slice(0, 2),
    });
  });
});
