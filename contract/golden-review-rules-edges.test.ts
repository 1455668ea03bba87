// The golden review's rules at the edges the generated sweep found unguarded: equal values, a
// value no table knows, a fact of another type or place standing beside the right one, and each
// rule's own test called on a change of another kind. The rule-by-rule cases are in
// contract/golden-review-rules.test.ts. Pure: no files, no git.
import { describe, expect, it } from "vitest";
import type { Change, Fact } from "../src/review/model.ts";
import { type Context, findRule, RULES } from "../src/review/rules.ts";

let lineNo = 0;
const F = (type: string, key: string, fields: Record<string, string> = {}, at = "", text = key): Fact => ({
  type,
  key,
  at,
  fields,
  text,
  line: ++lineNo,
});
const added = (after: Fact): Change => ({ op: "added", after });
const removed = (before: Fact): Change => ({ op: "removed", before });
const changed = (field: string, before: Fact, after: Fact): Change => ({ op: "changed", field, before, after });
const withFields = (f: Fact, fields: Record<string, string>): Fact => ({ ...f, fields: { ...f.fields, ...fields } });
const NONE: Context = { before: [], after: [] };
const ctx = (before: Fact[], after: Fact[]): Context => ({ before, after });
const ruleOf = (c: Change, x: Context = NONE) => findRule(c, x)?.id ?? null;
const when = (id: string) => {
  const r = RULES.find((x) => x.id === id);
  if (!r?.when) throw new Error(`no rule ${id} with a test`);
  return r.when;
};
const bind = (key: string, mode: string, fields: Record<string, string> = {}) =>
  F("bind", key, { source: key, mode, why: "w", shadowedBy: "", ...fields });
const argv = (key: string, option: string, fields: Record<string, string> = {}) =>
  F("bwrap-mount", key, { option, source: key, afterRemount: "no", shadowedBy: "", ...fields });

describe("mount edges", () => {
  it("the cover is the mount the shadow names, not the first of its table", () => {
    const self = (sh: string) => bind("/w/a", "ro", { shadowedBy: sh });
    const x = ctx([], [bind("/other", "ro"), bind("/w", "rw")]);
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), x)).toBe("mount-covered-by-wider");
    const y = ctx([bind("/other", "ro"), bind("/w", "rw")], []);
    expect(ruleOf(changed("shadowedBy", self("/w"), self("")), y)).toBe("mount-uncovered-narrower");
  });

  it("a mount of width 0 is compared like any other: an empty stand-in covered by a writable mount, a read-only one by a tmpfs", () => {
    const standIn = (sh: string) => bind("/w/.claude", "ro-empty", { shadowedBy: sh });
    expect(ruleOf(changed("shadowedBy", standIn(""), standIn("/w")), ctx([], [bind("/w", "rw")]))).toBe(
      "mount-covered-by-wider",
    );
    const ro = (sh: string) => bind("/w/a", "ro", { shadowedBy: sh });
    expect(ruleOf(changed("shadowedBy", ro(""), ro("/w")), ctx([], [bind("/w", "tmpfs")]))).toBe(
      "mount-covered-by-narrower",
    );
  });

  it("a self-bind removed from a writable tree is a mount point only when it is writable, not when it shows devices or nothing known", () => {
    const keep = ctx([], [argv("/w", "--bind")]);
    expect(ruleOf(removed(argv("/w/.git", "--bind")), keep)).toBe("mount-point-removed");
    expect(ruleOf(removed(argv("/w/dev", "--dev-bind")), keep)).toBe("mount-removed");
    expect(ruleOf(removed(argv("/w/odd", "--odd")), keep)).toBe("mount-removed");
  });

  it("a tmpfs size written another way but the same bound is no change of bound", () => {
    const t = (b: string, a: string) =>
      ruleOf(changed("size", argv("/tmp", "--tmpfs", { size: b }), argv("/tmp", "--tmpfs", { size: a })));
    expect(t("100", "0100")).toBe(null);
    expect(t("", "none")).toBe(null);
  });
});

describe("adapter and bundle edges", () => {
  const option = (key: string) => F("adapter-option", key, { value: "" });
  it("a listed tool's option must be on the before side too, not merely some option", () => {
    const listed = F("adapter-listed", "Bash", {}, "--tools");
    expect(ruleOf(added(listed), ctx([option("--other")], [option("--tools")]))).toBe("tool-follows-limit");
  });

  it("a JSON value's entry is of its own table, and a list element's path goes on with [", () => {
    const mcp = (key: string) => F("mcp", key, { value: "1" }, key);
    expect(ruleOf(added(mcp("mcpServers.x.command")), ctx([], [F("settings", "mcpServers.x")]))).toBe(
      "mcp-server-changed",
    );
    const tools = (key: string) => F("tools", key, { value: "1" }, key);
    expect(ruleOf(added(tools("tools[0]")), ctx([], [tools("tools")]))).toBe("json-comes-with-entry");
    expect(ruleOf(added(tools("tools[0]")), ctx([tools("tools")], [tools("tools")]))).toBe("typed-tool-added");
  });

  it("comesWithEntry reads only an added or removed value", () => {
    const entry = F("mcp", "mcpServers.x", {}, "mcpServers.x");
    const cmd = F("mcp", "mcpServers.x.command", {}, "mcpServers.x.command");
    expect(when("json-comes-with-entry")(changed("value", cmd, cmd), ctx([entry], []))).toBe(false);
    expect(when("json-comes-with-entry")(changed("value", cmd, cmd), ctx([], [entry]))).toBe(false);
  });

  it("a credential's placeholder is read from the value alone: another field's change is no credential", () => {
    const env = F("adapter-env", "TOKEN", { value: "<placeholder>", note: "a" });
    expect(ruleOf(changed("note", env, withFields(env, { note: "b" })))).toBe(null);
  });
});

describe("gate edges", () => {
  const call = (decision: string) => F("gate-call", "read /x", { decision });
  const c = (b: string, a: string) => ruleOf(changed("decision", call(b), call(a)));
  it("a check lost or a reason reworded needs a block on both sides", () => {
    const real = "from the workspace's real path";
    expect(c(`odd: ${real}`, "block: x")).toBe(null);
    expect(c(`block: ${real}`, "odd")).toBe(null);
    expect(c("block: a", "odd")).toBe(null);
    expect(c("odd", "block: a")).toBe(null);
  });
});

describe("session edges", () => {
  const sf = (key: string, value: string) => F("session-file", key, { value }, key);
  it("the launch socket is named or gone only when its value changes", () => {
    const s = sf("launchSocket", '"/s"');
    expect(ruleOf(changed("text", s, { ...s, text: "reworded" }))).toBe(null);
  });

  it("a bound switched to false from something other than true is no loosening", () => {
    const b = (v: string) => sf("bounds.x", v);
    expect(ruleOf(changed("value", b("10"), b("false")))).toBe(null);
    expect(ruleOf(changed("value", b("null"), b("false")))).toBe(null);
  });

  it("an end-of-session subject is its first two cells, kept apart", () => {
    const w = (text: string) => F("workspace-check-line", text, {}, "", text);
    expect(ruleOf(removed(w("a | bc | why")), ctx([], [w("ab | c | why")]))).toBe("workspace-entry-lost");
  });

  it("diagnosis-reworded's own test asks for the same row", () => {
    const d = (row: string, line: string) => F("diagnosis", "case", { row, line });
    expect(when("diagnosis-reworded")(changed("line", d("a", "x"), d("b", "y")), NONE)).toBe(false);
    expect(when("diagnosis-reworded")(changed("line", d("a", "x"), d("a", "y")), NONE)).toBe(true);
  });

  it("a removed credential set reads as needing no variables", () => {
    const s = F("credential-set", "proxy", { variables: "A" });
    expect(when("credential-set-loosened")(removed(s), NONE)).toBe(true);
    expect(when("credential-set-tightened")(removed(s), NONE)).toBe(false);
  });
});

describe("findRule edges", () => {
  it("a change that is not a field change has the empty field", () => {
    const rules = [
      { id: "empty-field", verdict: "neutral", why: "w", types: ["t"], op: ["added", "removed"], fields: [""] },
    ] as const;
    expect(findRule(added(F("t", "x")), NONE, rules)?.id).toBe("empty-field");
    expect(findRule(removed(F("t", "x")), NONE, rules)?.id).toBe("empty-field");
  });
});

describe("seccomp edges", () => {
  it("a mask of 0 is a mask: gaining a bit from it widens, losing every bit narrows; the same value written otherwise is neither", () => {
    const d = (args: string) => F("seccomp-deny", "clone", { op: "jset", args }, "program");
    const c = (b: string, a: string) => ruleOf(changed("args", d(b), d(a)));
    expect(c("0x0", "0x1")).toBe("seccomp-clone-flags-widened");
    expect(c("0x1", "0x0")).toBe("seccomp-clone-flags-narrowed");
    expect(c("0x1", "1")).toBe(null);
    expect(c("0x3", "3")).toBe(null);
  });

  it("a return's leading # only is dropped: a # after the action leaves it unknown", () => {
    const r = (args: string) => F("seccomp-insn", `ret ${args}`, { op: "ret", args });
    expect(ruleOf(added(r("ALLOW#")))).toBe(null);
    expect(ruleOf(added(r("TRAP#")))).toBe(null);
    expect(ruleOf(removed(r("TRAP#")))).toBe(null);
    expect(ruleOf(added(r("#TRACE")))).toBe(null);
    expect(ruleOf(removed(r("#TRACE")))).toBe(null);
    expect(ruleOf(removed(r("#ALLOW")))).toBe(null);
    const j = F("seccomp-step", "j", { op: "jeq", jt: "a" }, "program");
    const a = F("seccomp-step", "a", { op: "ret", args: "ALLOW#" }, "program");
    expect(ruleOf(added(j), ctx([], [j, a]))).toBe(null);
  });

  it("a jump to next is no entry into an argument check, whatever follows", () => {
    const toNext = F("seccomp-step", "to next", { op: "jeq", jt: "next", jf: "x" }, "program");
    const follows = F("seccomp-step", "follows", { op: "jeq", jt: "y" }, "program");
    expect(ruleOf(removed(toNext), ctx([toNext, follows], []))).toBe(null);
  });

  it("the jump and mask rules' own tests answer no, not an error, for a change of another kind", () => {
    const check = F("seccomp-step", "check", { op: "jset", jt: "deny", args: "0x1" }, "program");
    const deny = F("seccomp-step", "deny", { op: "ret", args: "KILL" }, "program");
    const x = ctx([check, deny], [check, deny]);
    expect(when("seccomp-jump-off-deny")(added(check), x)).toBe(false);
    expect(when("seccomp-jump-to-allow")(removed(check), x)).toBe(false);
    expect(when("seccomp-clone-flags-narrowed")(added(check), x)).toBe(false);
    expect(when("seccomp-clone-flags-widened")(removed(check), x)).toBe(false);
  });
});

describe("mount edges: width 0 and a moved row", () => {
  it("a mount of width 0 widened to a writable one, and narrowed back", () => {
    const t = bind("/h", "tmpfs");
    expect(ruleOf(changed("mode", t, withFields(t, { mode: "rw" })))).toBe("mount-widened");
    expect(ruleOf(changed("mode", withFields(t, { mode: "rw" }), t))).toBe("mount-narrowed");
  });

  it("each mount rule's own test answers no for a moved row, even one whose mode or place would match", () => {
    const moved = (before: Fact, after: Fact = before): Change => ({ op: "moved", before, after });
    const ro = bind("/h", "ro");
    expect(when("mount-widened")(moved(ro, withFields(ro, { mode: "rw" })), NONE)).toBe(false);
    expect(when("mount-narrowed")(moved(withFields(ro, { mode: "rw" }), ro), NONE)).toBe(false);
    const keep = ctx([], [bind("/w", "rw")]);
    expect(when("ro-over-rw-removed")(moved(bind("/w/b", "ro")), keep)).toBe(false);
    expect(when("stand-in-over-rw-removed")(moved(bind("/w/.claude", "ro-empty")), keep)).toBe(false);
    expect(when("mount-point-removed")(moved(bind("/w/.git", "rw")), keep)).toBe(false);
    expect(when("pinned-bind-removed")(moved(bind("/usr/bin/claude", "ro", { source: "/opt/c" })), NONE)).toBe(false);
    expect(when("kernel-cover-removed")(moved(bind("/proc/sys", "ro")), ctx([], [bind("/proc", "private")]))).toBe(
      false,
    );
  });
});
