// The golden review's rules one by one, on changes built by hand: each rule's test against the
// cases just inside and just outside it, so a rule that fires on the wrong side of its line (a
// gate block that loses a check ranked neutral, a mount widened ranked narrowed) is seen. The
// fixture pairs in contract/review.test.ts show each rule firing on a real golden; these show
// where each stops. Pure: no files, no git.
import { describe, expect, it } from "vitest";
import { MODEL_URL } from "../src/core/network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../src/core/network/placeholder.ts";
import type { Change, Fact } from "../src/review/model.ts";
import { type Context, findRule, mountWidth, RULES } from "../src/review/rules.ts";

let lineNo = 0;
/** A fact; lines count up in the order facts are made, so "next" in a listing is the one made after. */
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
const moved = (f: Fact): Change => ({ op: "moved", before: f, after: f });
/** The same fact with other field values: the after side of a change. */
const withFields = (f: Fact, fields: Record<string, string>): Fact => ({ ...f, fields: { ...f.fields, ...fields } });
const NONE: Context = { before: [], after: [] };

/** The id of the rule that classifies a change, or null when none does (the change is unknown). */
const ruleOf = (c: Change, ctx: Context = NONE) => findRule(c, ctx)?.id ?? null;
const ctx = (before: Fact[], after: Fact[]): Context => ({ before, after });
const rule = (id: string) => {
  const r = RULES.find((x) => x.id === id);
  if (!r?.when) throw new Error(`no rule ${id} with a test`);
  return r.when;
};

const bind = (key: string, mode: string, fields: Record<string, string> = {}) =>
  F("bind", key, { source: key, mode, why: "w", shadowedBy: "", ...fields });
const argv = (key: string, option: string, fields: Record<string, string> = {}) =>
  F("bwrap-mount", key, { option, source: key, afterRemount: "no", shadowedBy: "", ...fields });

describe("the mount rules: what a removed mount uncovers", () => {
  it("a read-only mount removed from under a kept writable one (rw or devices) uncovers it; nothing else does", () => {
    const inner = bind("/w/bundle", "ro");
    expect(ruleOf(removed(inner), ctx([], [bind("/w", "rw")]))).toBe("ro-over-rw-removed");
    expect(ruleOf(removed(inner), ctx([], [bind("/w", "ro")]))).toBe("mount-removed");
    expect(ruleOf(removed(inner), ctx([bind("/w", "rw")], []))).toBe("mount-removed");
    expect(ruleOf(removed(inner), ctx([], [bind("/wx", "rw")]))).toBe("mount-removed");
    expect(ruleOf(removed(inner), ctx([], [bind("/w/bundle", "rw")]))).toBe("mount-removed");
    // Only a mount of the same table covers it.
    expect(ruleOf(removed(inner), ctx([], [argv("/w", "--bind")]))).toBe("mount-removed");
    const arg = argv("/w/bundle", "--ro-bind");
    expect(ruleOf(removed(arg), ctx([], [argv("/w", "--dev-bind")]))).toBe("ro-over-rw-removed");
    expect(ruleOf(removed(arg), ctx([], [argv("/w", "--bind")]))).toBe("ro-over-rw-removed");
    expect(ruleOf(removed(arg), ctx([], [argv("/w", "--tmpfs")]))).toBe("mount-removed");
    // A writable mount removed is not a read-only cover.
    expect(ruleOf(removed(argv("/w/b", "--bind", { source: "/elsewhere" })), ctx([], [argv("/w", "--bind")]))).toBe(
      "mount-removed",
    );
  });

  it("an empty stand-in or a self-bind removed from inside a kept writable tree", () => {
    const keep = ctx([], [bind("/w", "rw")]);
    expect(ruleOf(removed(bind("/w/.claude", "ro-empty")), keep)).toBe("stand-in-over-rw-removed");
    expect(ruleOf(removed(bind("/w/.claude", "ro-empty")), ctx([], [bind("/w", "ro")]))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/w/.claude", "ro-empty")), ctx([], [bind("/w/.claude", "rw")]))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/w/.claude", "ro-empty")), ctx([], [bind("/v", "rw")]))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/w/.git", "rw")), keep)).toBe("mount-point-removed");
    expect(ruleOf(removed(bind("/w/.git", "rw", { source: "/other" })), keep)).toBe("mount-removed");
    expect(ruleOf(removed(bind("/w/.git", "rw")), ctx([], [bind("/w", "ro")]))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/w/.git", "rw")), ctx([], [bind("/x", "rw")]))).toBe("mount-removed");
  });

  it("a pinned read-only bind from another host path removed; one from itself or from nothing is a plain mount", () => {
    expect(ruleOf(removed(bind("/usr/bin/claude", "ro", { source: "/opt/claude" })))).toBe("pinned-bind-removed");
    expect(ruleOf(removed(bind("/usr/bin/claude", "ro", { source: "" })))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/usr/bin/claude", "ro")))).toBe("mount-removed");
    expect(ruleOf(removed(bind("/usr/bin/claude", "rw", { source: "/opt/claude" })))).toBe("mount-removed");
  });

  it("a tmpfs with a size removed; one without is a plain mount", () => {
    expect(ruleOf(removed(argv("/dev/shm", "--tmpfs", { size: "1000" })))).toBe("bounded-tmpfs-removed");
    expect(ruleOf(removed(argv("/dev/shm", "--tmpfs", { size: "" })))).toBe("mount-removed");
    expect(ruleOf(removed(argv("/dev/shm", "--tmpfs")))).toBe("mount-removed");
  });

  it("a read-only cover removed from inside the session's own /proc or /dev", () => {
    const sys = bind("/proc/sys", "ro");
    expect(ruleOf(removed(sys), ctx([], [bind("/proc", "private")]))).toBe("kernel-cover-removed");
    expect(ruleOf(removed(sys), ctx([bind("/proc", "private")], []))).toBe("mount-removed");
    expect(ruleOf(removed(sys), ctx([], [bind("/proc", "tmpfs")]))).toBe("mount-removed");
    expect(ruleOf(removed(sys), ctx([], [bind("/proc/sys", "private")]))).toBe("mount-removed");
    expect(ruleOf(removed(sys), ctx([], [bind("/other", "private")]))).toBe("mount-removed");
    expect(ruleOf(removed(sys), ctx([], [argv("/proc", "--proc")]))).toBe("mount-removed");
    const asys = argv("/proc/sys", "--ro-bind");
    expect(ruleOf(removed(asys), ctx([], [argv("/proc", "--proc")]))).toBe("kernel-cover-removed");
    expect(ruleOf(removed(asys), ctx([], [argv("/", "--dev")]))).toBe("kernel-cover-removed");
    expect(ruleOf(removed(asys), ctx([], [argv("/proc", "--tmpfs")]))).toBe("mount-removed");
    expect(ruleOf(removed(argv("/proc/sys", "--tmpfs")), ctx([], [argv("/proc", "--proc")]))).toBe("mount-removed");
    expect(ruleOf(removed(argv("/proc/sys", "--bind")), ctx([], [argv("/proc", "--proc")]))).toBe("mount-removed");
  });

  it("each removal test answers no for a change that removes nothing", () => {
    const c = added(bind("/w/x", "ro"));
    const x = ctx([bind("/w", "rw")], [bind("/w", "rw")]);
    for (const id of ["ro-over-rw-removed", "stand-in-over-rw-removed", "mount-point-removed"])
      expect(rule(id)(c, x), id).toBe(false);
    expect(rule("pinned-bind-removed")(added(bind("/x", "ro", { source: "/y" })), NONE)).toBe(false);
    expect(rule("bounded-tmpfs-removed")(added(argv("/t", "--tmpfs", { size: "1" })), NONE)).toBe(false);
    expect(rule("kernel-cover-removed")(added(bind("/proc/sys", "ro")), ctx([], [bind("/proc", "private")]))).toBe(
      false,
    );
  });
});

describe("the mount rules: modes, sizes, covers and the remount", () => {
  it("a mode changed wider or narrower; an unknown mode or the same width is neither", () => {
    const ro = bind("/h", "ro");
    expect(ruleOf(changed("mode", ro, withFields(ro, { mode: "rw" })))).toBe("mount-widened");
    expect(ruleOf(changed("mode", withFields(ro, { mode: "rw" }), ro))).toBe("mount-narrowed");
    expect(ruleOf(changed("mode", withFields(ro, { mode: "odd" }), withFields(ro, { mode: "rw" })))).toBe(null);
    expect(ruleOf(changed("mode", withFields(ro, { mode: "rw" }), withFields(ro, { mode: "odd" })))).toBe(null);
    expect(ruleOf(changed("mode", withFields(ro, { mode: "ro-empty" }), withFields(ro, { mode: "tmpfs" })))).toBe(null);
    const a = argv("/h", "--ro-bind");
    expect(ruleOf(changed("option", a, withFields(a, { option: "--dev-bind" })))).toBe("mount-widened");
    expect(ruleOf(changed("option", withFields(a, { option: "--dev-bind" }), a))).toBe("mount-narrowed");
    expect(rule("mount-widened")(removed(ro), NONE)).toBe(false);
    expect(rule("mount-narrowed")(removed(ro), NONE)).toBe(false);
  });

  it("how wide each mount is, and -1 for none or a mode no table knows", () => {
    expect(mountWidth(undefined)).toBe(-1);
    expect(mountWidth(bind("/a", "private"))).toBe(0);
    expect(mountWidth(bind("/a", "ro"))).toBe(1);
    expect(mountWidth(bind("/a", "rw"))).toBe(2);
    expect(mountWidth(bind("/a", "odd"))).toBe(-1);
    expect(mountWidth(F("bind", "/a", {}))).toBe(-1);
    expect(mountWidth(argv("/a", "--dev-bind"))).toBe(3);
    expect(mountWidth(argv("/a", "--odd"))).toBe(-1);
    expect(mountWidth(F("bwrap-mount", "/a", {}))).toBe(-1);
  });

  it("a tmpfs size: gone or larger loosens, added or smaller tightens, a size that is not a number is none", () => {
    const t = (b: string, a: string) =>
      ruleOf(changed("size", argv("/tmp", "--tmpfs", { size: b }), argv("/tmp", "--tmpfs", { size: a })));
    expect(t("100", "200")).toBe("tmpfs-bound-loosened");
    expect(t("200", "100")).toBe("tmpfs-bound-tightened");
    expect(t("100", "")).toBe("tmpfs-bound-loosened");
    expect(t("", "100")).toBe("tmpfs-bound-tightened");
    expect(t("x100", "100")).toBe("tmpfs-bound-tightened");
    expect(t("100x", "100")).toBe("tmpfs-bound-tightened");
    expect(t("100", "x100")).toBe("tmpfs-bound-loosened");
  });

  it("a mount newly covered, or uncovered, by a wider or a narrower one", () => {
    const self = (sh: string, mode = "ro") => bind("/w/a", mode, { shadowedBy: sh });
    const cover = (mode: string) => bind("/w", mode);
    // Covered now: its own after side against the cover in the after revision.
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), ctx([], [cover("rw")]))).toBe("mount-covered-by-wider");
    expect(ruleOf(changed("shadowedBy", self("", "rw"), self("/w", "rw")), ctx([], [cover("ro")]))).toBe(
      "mount-covered-by-narrower",
    );
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), ctx([], [cover("ro")]))).toBe(null);
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), ctx([cover("rw")], []))).toBe(null);
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), ctx([cover("ro")], [cover("rw")]))).toBe(
      "mount-covered-by-wider",
    );
    expect(ruleOf(changed("shadowedBy", self("", "rw"), self("/w")), ctx([], [cover("rw")]))).toBe(
      "mount-covered-by-wider",
    );
    // The cover must be a mount of the same table.
    expect(ruleOf(changed("shadowedBy", self(""), self("/w")), ctx([], [argv("/w", "--bind")]))).toBe(null);
    expect(ruleOf(changed("shadowedBy", self(""), self("/w", "odd")), ctx([], [cover("rw")]))).toBe(null);
    // Uncovered now: its own before side against the cover it had in the before revision.
    expect(ruleOf(changed("shadowedBy", self("/w", "rw"), self("")), ctx([cover("ro")], []))).toBe(
      "mount-uncovered-wider",
    );
    expect(ruleOf(changed("shadowedBy", self("/w"), self("")), ctx([cover("rw")], []))).toBe(
      "mount-uncovered-narrower",
    );
    expect(ruleOf(changed("shadowedBy", self("/w", "rw"), self("", "ro")), ctx([cover("ro")], []))).toBe(
      "mount-uncovered-wider",
    );
    expect(ruleOf(changed("shadowedBy", self("/w", "rw"), self("")), ctx([cover("ro")], [cover("rw")]))).toBe(
      "mount-uncovered-wider",
    );
    expect(ruleOf(changed("shadowedBy", self("/w", "rw"), self("")), ctx([], [cover("ro")]))).toBe(null);
    // Covered by another mount than before: neither newly covered nor uncovered.
    expect(ruleOf(changed("shadowedBy", self("/v"), self("/w")), ctx([cover("rw")], [cover("rw")]))).toBe(null);
    expect(ruleOf(changed("shadowedBy", self("/w"), self("/v")), ctx([cover("rw")], [cover("rw")]))).toBe(null);
    // A fact with no shadowedBy field on one side reads as uncovered there.
    const bare = F("bind", "/w/a", { mode: "ro" });
    expect(ruleOf(changed("shadowedBy", bare, self("/w")), ctx([], [cover("rw")]))).toBe("mount-covered-by-wider");
    expect(ruleOf(changed("shadowedBy", self("/w"), bare), ctx([cover("rw")], []))).toBe("mount-uncovered-narrower");
    expect(rule("mount-covered-by-wider")(changed("mode", self(""), self("/w")), ctx([], [cover("rw")]))).toBe(false);
    expect(rule("mount-uncovered-narrower")(changed("mode", self("/w"), self("")), ctx([cover("rw")], []))).toBe(false);
  });

  it("a mount moved after or back before --remount-ro /", () => {
    const m = (v: string) => argv("/x", "--bind", { afterRemount: v });
    expect(ruleOf(changed("afterRemount", m("no"), m("yes")))).toBe("mount-after-remount");
    expect(ruleOf(changed("afterRemount", m("yes"), m("no")))).toBe("mount-before-remount");
    expect(ruleOf(changed("afterRemount", m("yes"), m("")))).toBe(null);
  });
});

describe("bwrap's options, identity and command", () => {
  const opt = (key: string, operands = "") => F("bwrap-option", key, { operands });
  it("hardening and widening options by their key", () => {
    expect(ruleOf(added(opt("--unshare-pid")))).toBe("hardening-added");
    expect(ruleOf(added(opt("--odd")))).toBe(null);
    expect(ruleOf(added(opt("--share-net")))).toBe("bwrap-widening-added");
    expect(ruleOf(removed(opt("--die-with-parent")))).toBe("bwrap-widening-removed");
    expect(ruleOf(removed(opt("--odd")))).toBe(null);
    expect(ruleOf(changed("operands", opt("--cap-drop", "ALL"), opt("--cap-drop", "CAP_X")))).toBe("cap-drop-narrowed");
    expect(ruleOf(changed("operands", opt("--cap-drop", "CAP_X"), opt("--cap-drop", "ALL")))).toBe(null);
  });

  it("setpriv's parent-death signal lost or gained", () => {
    const cmd = (wrapper: string) => F("bwrap-command", "command", { wrapper });
    const w = "setpriv --pdeathsig=TERM --";
    expect(ruleOf(changed("wrapper", cmd(w), cmd("setpriv --")))).toBe("pdeathsig-removed");
    expect(ruleOf(changed("wrapper", cmd("setpriv --"), cmd(w)))).toBe("pdeathsig-added");
    expect(ruleOf(changed("wrapper", cmd(w), cmd(`${w} x`)))).toBe(null);
    expect(ruleOf(changed("wrapper", cmd("a"), cmd("b")))).toBe(null);
  });

  it("the session's identity: root when a uid or gid is 0 or not a number, or the groups are kept", () => {
    const id = (reuid: string, regid: string, clearGroups = "yes") =>
      F("bwrap-identity", "identity", { reuid, regid, clearGroups });
    const c = (after: Fact) => ruleOf(changed("reuid", id("1000", "1000"), after));
    expect(c(id("1001", "1000"))).toBe(null);
    expect(c(id("0", "1000"))).toBe("session-identity-root");
    expect(c(id("1000", "0"))).toBe("session-identity-root");
    expect(c(id("1000", "1000", "no"))).toBe("session-identity-root");
    expect(c(id("", "1000"))).toBe("session-identity-root");
    expect(c(id("x1000", "1000"))).toBe("session-identity-root");
    expect(c(id("1000x", "1000"))).toBe("session-identity-root");
    expect(c(id("1000", "1000x"))).toBe("session-identity-root");
  });

  it("prlimit's --data and --nproc bounds, each read on its own", () => {
    const cmd = (limits: string) => F("bwrap-command", "command", { limits });
    const c = (b: string, a: string) => ruleOf(changed("limits", cmd(b), cmd(a)));
    expect(c("prlimit --data=100 --", "prlimit --data=200 --")).toBe("memory-limit-loosened");
    expect(c("prlimit --data=100 --", "prlimit --data=20 --")).toBe("memory-limit-tightened");
    expect(c("prlimit --data 100 --", "prlimit --")).toBe("memory-limit-loosened");
    expect(c("prlimit --", "prlimit --data 100 --")).toBe("memory-limit-tightened");
    expect(c("prlimit --nproc=10 --", "prlimit --nproc=20 --")).toBe("task-limit-loosened");
    expect(c("prlimit --nproc=10 --", "prlimit --nproc=9 --")).toBe("task-limit-tightened");
    expect(c("prlimit --nproc 10 --", "prlimit --")).toBe("task-limit-loosened");
    expect(c("prlimit --", "prlimit --nproc 10 --")).toBe("task-limit-tightened");
    expect(c("prlimit --data=1 --nproc=10 --", "prlimit --data=1 --nproc=10 --x")).toBe(null);
    expect(c("prlimit --datax=1 --", "prlimit --datax=2 --")).toBe(null);
    expect(c("prlimit --nprocx=1 --", "prlimit --nprocx=2 --")).toBe(null);
  });

  it("the runner's node: the execute-only copy lost or gained", () => {
    const cmd = (program: string) => F("bwrap-command", "command", { program });
    const x = "/run/runner-node/node-abc";
    expect(ruleOf(changed("program", cmd(x), cmd("/usr/bin/node")))).toBe("runner-node-readable");
    expect(ruleOf(changed("program", cmd("/usr/bin/node"), cmd(x)))).toBe("runner-node-execute-only");
    expect(ruleOf(changed("program", cmd(x), cmd("/run/runner-node/node-def")))).toBe(null);
    expect(ruleOf(changed("program", cmd("/a"), cmd("/b")))).toBe(null);
  });
});

describe("the adapter's argv and environment", () => {
  const listed = (key: string, at: string) => F("adapter-listed", key, {}, at);
  const option = (key: string, value = "") => F("adapter-option", key, { value });
  it("a listed tool follows its option only when the option itself comes or goes", () => {
    const both = ctx([option("--tools")], [option("--tools")]);
    expect(ruleOf(added(listed("Bash", "--tools")), both)).toBe("tool-added");
    expect(ruleOf(removed(listed("Bash", "--tools")), both)).toBe("tool-removed");
    expect(ruleOf(added(listed("Bash", "--tools")), ctx([], [option("--tools")]))).toBe("tool-follows-limit");
    expect(ruleOf(removed(listed("Bash", "--tools")), ctx([option("--tools")], []))).toBe("tool-follows-limit");
    expect(ruleOf(added(listed("Bash", "--tools")), ctx([option("--tools")], [option("--other")]))).toBe(
      "tool-follows-limit",
    );
    const env = F("adapter-env", "--tools", {});
    expect(ruleOf(added(listed("Bash", "--tools")), ctx([option("--tools"), env], [env]))).toBe("tool-follows-limit");
    expect(ruleOf(added(listed("Bash", "--tools")), ctx([env], [option("--tools"), env]))).toBe("tool-follows-limit");
  });

  it("a tool in a limit: the catalog's tools, the option's list, and the policy's tool lists by name", () => {
    const member = (at: string) => F("policy-member", "Bash", {}, at);
    expect(ruleOf(added(F("tool", "Bash")))).toBe("tool-added");
    expect(ruleOf(removed(F("tool", "Bash")))).toBe("tool-removed");
    expect(ruleOf(added(member("builtInTools")))).toBe("tool-added");
    expect(ruleOf(added(member("typedTools")))).toBe("tool-added");
    expect(ruleOf(added(member("builtInTools(all)")))).toBe("tool-added");
    expect(ruleOf(added(member("builtInToolsX")))).toBe(null);
    expect(ruleOf(added(member("xtypedTools")))).toBe(null);
    expect(ruleOf(added(member("builtInTools(al)")))).toBe(null);
  });

  it("confining and opening options added or removed", () => {
    expect(ruleOf(added(option("--restricted")))).toBe("adapter-hardening-added");
    expect(ruleOf(added(option("--odd")))).toBe(null);
    expect(ruleOf(added(option("--bare")))).toBe("adapter-widening-added");
    expect(ruleOf(removed(option("--bare")))).toBe("adapter-widening-removed");
    expect(ruleOf(removed(option("--odd")))).toBe(null);
  });

  it("option values: setting sources, permission mode and the prompt", () => {
    const c = (key: string, b: string, a: string) => ruleOf(changed("value", option(key, b), option(key, a)));
    expect(c("--setting-sources", '""', "user")).toBe("setting-sources-widened");
    expect(c("--setting-sources", "user", '""')).toBe(null);
    expect(c("--permission-mode", "dontAsk", "default")).toBe("permission-mode-loosened");
    expect(c("--permission-mode", "default", "dontAsk")).toBe("permission-mode-tightened");
    expect(c("--permission-mode", "a", "b")).toBe(null);
    expect(c("--append-system-prompt", "a", "b")).toBe("prompt-changed");
    expect(c("--append-system-prompt-file", "a", "b")).toBe("prompt-changed");
    expect(c("--append-system-promptx", "a", "b")).toBe(null);
    expect(c("x--append-system-prompt", "a", "b")).toBe(null);
    expect(ruleOf(added(F("prompt-line", "be careful")))).toBe("prompt-changed");
    expect(ruleOf(added(option("--append-system-prompt")))).toBe("prompt-changed");
  });

  it("a credential's value: placeholder for credential, credential for placeholder, or shown", () => {
    const env = (key: string, value: string) => F("adapter-env", key, { value });
    const c = (key: string, b: string, a: string) => ruleOf(changed("value", env(key, b), env(key, a)));
    expect(c("TOKEN", "<set>", "<placeholder>")).toBe("credential-to-placeholder");
    expect(c("TOKEN", "<placeholder>", "<set>")).toBe("placeholder-to-credential");
    expect(c("TOKEN", "<placeholder>", "abc")).toBe("placeholder-to-credential");
    expect(c("TOKEN", "<set>", "abc")).toBe("credential-shown");
    expect(c("TOKEN", "a", "<placeholder>")).toBe(null);
    expect(c("FOO", "a", "b")).toBe(null);
  });

  it("a variable of the adapter's environment, or a module's adapterEnv, added or removed", () => {
    expect(ruleOf(added(F("adapter-env", "FOO", { value: "1" })))).toBe("env-added");
    expect(ruleOf(removed(F("adapter-env", "FOO", { value: "1" })))).toBe("env-removed");
    expect(ruleOf(added(F("module-member", "FOO", {}, "adapterEnv")))).toBe("env-added");
    expect(ruleOf(removed(F("module-member", "FOO", {}, "adapterEnv")))).toBe("env-removed");
    expect(ruleOf(added(F("module-member", "FOO", {}, "other")))).toBe(null);
  });
});

describe("the gate's decisions", () => {
  const call = (decision: string) => F("gate-call", "read /x", { decision });
  const c = (b: string, a: string) => ruleOf(changed("decision", call(b), call(a)));
  const REAL = "block: /x resolved from the workspace's real path is outside";
  const GIVEN = "block: /x resolved from the workspace as given is outside";
  const BOTH = "block: /x resolved from the workspace's real path and from the workspace as given";

  it("a block turned allow, and an allow turned block", () => {
    expect(c("block: outside", "allow")).toBe("gate-block-to-allow");
    expect(c("allow", "block: outside")).toBe("gate-allow-to-block");
    expect(c("allow", "odd")).toBe(null);
    expect(c("odd", "allow")).toBe(null);
  });

  it("a block that loses a check it named weakens; one that only gains or keeps its checks is reworded", () => {
    expect(c(REAL, "block: /x is outside")).toBe("gate-block-check-changed");
    expect(c(REAL, GIVEN)).toBe("gate-block-check-changed");
    expect(c(BOTH, GIVEN)).toBe("gate-block-check-changed");
    expect(c(BOTH, REAL)).toBe("gate-block-check-changed");
    expect(c("block: /x is outside", REAL)).toBe("gate-reason-reworded");
    expect(c(REAL, BOTH)).toBe("gate-reason-reworded");
    expect(c(REAL, `${REAL}, reworded`)).toBe("gate-reason-reworded");
    expect(c("block: a", "block: b")).toBe("gate-reason-reworded");
    // A read spelling's label is part of the check: another label is another check.
    expect(c("block: Pi's read may open its NFD spelling", "block: Pi's read may open its AM spelling")).toBe(
      "gate-block-check-changed",
    );
    expect(c("block: Pi's read may open its NFD spelling", "block: Pi's read may open its NFD spelling, again")).toBe(
      "gate-reason-reworded",
    );
  });

  it("a call added or removed, by what the gate decided", () => {
    expect(ruleOf(added(call("allow")))).toBe("gate-call-added-allow");
    expect(ruleOf(added(call("block: x")))).toBe("gate-call-added-block");
    expect(ruleOf(added(call("odd")))).toBe(null);
    expect(ruleOf(removed(call("block: x")))).toBe("gate-call-removed-block");
    expect(ruleOf(removed(call("allow")))).toBe("gate-call-removed-allow");
    expect(ruleOf(removed(call("odd")))).toBe(null);
  });
});

describe("bundle files", () => {
  it("a JSON value comes with its entry only when its parent is new (or gone) on its side", () => {
    const mcp = (key: string, at = key) => F("mcp", key, { value: "1" }, at);
    const entry = mcp("mcpServers.x");
    expect(ruleOf(added(mcp("mcpServers.x.command")), ctx([], [entry]))).toBe("json-comes-with-entry");
    expect(ruleOf(added(mcp("mcpServers.x.command")), ctx([entry], [entry]))).toBe("mcp-server-changed");
    expect(ruleOf(added(mcp("mcpServers.x.command")), ctx([F("mcp-member", "mcpServers.x")], [entry]))).toBe(
      "json-comes-with-entry",
    );
    expect(ruleOf(removed(mcp("mcpServers.x.command")), ctx([entry], []))).toBe("json-comes-with-entry");
    expect(ruleOf(removed(mcp("mcpServers.x.command")), ctx([entry], [entry]))).toBe("mcp-server-changed");
    // A member belongs to the list it is at.
    const member = F("mcp-member", "mcpServers.x.args#1", {}, "mcpServers.x.args");
    expect(ruleOf(added(member), ctx([], [mcp("mcpServers.x.args")]))).toBe("json-comes-with-entry");
    expect(ruleOf(added(member), ctx([mcp("mcpServers.x.args")], [mcp("mcpServers.x.args")]))).toBe(
      "mcp-server-changed",
    );
    expect(ruleOf(added(member), ctx([], [mcp("mcpServers.x.other")]))).toBe("mcp-server-changed");
    // A list element's path goes on with "[".
    const tool = (key: string) => F("tools", key, { value: "1" }, key);
    expect(ruleOf(added(tool("tools[0].name")), ctx([], [tool("tools[0]")]))).toBe("json-comes-with-entry");
    expect(ruleOf(added(tool("tools[0].name")), ctx([], [tool("tools[1]")]))).toBe(null);
    expect(ruleOf(added(tool("tools[0]x")), ctx([], [tool("tools[0]")]))).toBe(null);
    // The root ("") is no entry; a value is not its own; a value that is not a member is not in a list by its place.
    expect(ruleOf(added(F("policy-member", "x", {}, "")), ctx([], [F("policy", "", {}, "")]))).toBe(null);
    expect(ruleOf(added(F("policy", ".x", {}, "")), ctx([], [F("policy", "", {}, "")]))).toBe(null);
    const self = F("mcp-member", "mcpServers.x.args", {}, "mcpServers.x.args");
    expect(ruleOf(added(self), ctx([], [mcp("mcpServers.x.args")]))).toBe("mcp-server-changed");
    expect(ruleOf(added(F("mcp", "zz", {}, "mcpServers.x")), ctx([], [entry]))).toBe("mcp-server-added");
    expect(rule("json-comes-with-entry")(changed("value", entry, entry), ctx([], [entry]))).toBe(false);
  });

  it("the gate hook: a settings value under hooks, or a module's gate", () => {
    const s = (at: string) => F("settings", at, { value: "1" }, at);
    expect(ruleOf(changed("value", s("hooks.PreToolUse"), s("hooks.PreToolUse")))).toBe("hook-changed");
    expect(ruleOf(changed("value", s("hooks[0]"), s("hooks[0]")))).toBe("hook-changed");
    expect(ruleOf(added(s("hooks")))).toBe("hook-changed");
    expect(ruleOf(added(s("hooksx")))).toBe(null);
    expect(ruleOf(added(s("xhooks")))).toBe(null);
    const m = (key: string) => F("module", key, { value: "1" });
    expect(ruleOf(changed("value", m("pi gate"), m("pi gate")))).toBe("hook-changed");
    expect(ruleOf(changed("value", m("pi gatex"), m("pi gatex")))).toBe(null);
    expect(ruleOf(changed("value", m("pigate"), m("pigate")))).toBe(null);
    expect(ruleOf(added(F("settings", "pi gate", {}, "x")))).toBe(null);
  });

  it("Pi's models.json: a key other than the placeholder, a URL other than the model port", () => {
    const models = (at: string, value: string) => F("models", at, { value }, at);
    const key = "providers.m.apiKey";
    expect(ruleOf(added(models(key, '"sk-real"')))).toBe("models-key-not-placeholder");
    expect(ruleOf(added(models(key, JSON.stringify(CREDENTIAL_PLACEHOLDER))))).toBe(null);
    const url = "providers.m.baseUrl";
    expect(ruleOf(added(models(url, '"http://elsewhere"')))).toBe("models-url-moved");
    expect(ruleOf(added(models(url, JSON.stringify(MODEL_URL))))).toBe(null);
  });

  it("a digest follows its file: the manifest's file digests and the seccomp digest", () => {
    const m = (at: string) => F("manifest", at, { value: "1" }, at);
    const c = (at: string) => ruleOf(changed("value", m(at), m(at)));
    expect(c("files.x")).toBe("digest-changed");
    expect(c("sources.x")).toBe("digest-changed");
    expect(c("resolvedDigest")).toBe("digest-changed");
    expect(c("resolvedDigestx")).toBe(null);
    expect(c("xfiles.y")).toBe(null);
    expect(c("filesx")).toBe(null);
    expect(ruleOf(changed("value", F("seccomp-digest", "sha256"), F("seccomp-digest", "sha256")))).toBe(
      "digest-changed",
    );
  });
});

describe("the session's file, diagnoses and the tripwire", () => {
  const sf = (key: string, value: string, type = "session-file") => F(type, key, { value }, key);
  it("the launch socket named or gone", () => {
    expect(ruleOf(changed("value", sf("launchSocket", "null"), sf("launchSocket", '"/s"')))).toBe(
      "session-launch-socket-named",
    );
    expect(ruleOf(changed("value", sf("launchSocket", '"/s"'), sf("launchSocket", '"/t"')))).toBe(
      "session-launch-socket-named",
    );
    expect(ruleOf(changed("value", sf("launchSocket", '"/s"'), sf("launchSocket", "null")))).toBe(
      "session-launch-socket-gone",
    );
    expect(ruleOf(added(sf("launchSocket", '"/s"')))).toBe("session-launch-socket-named");
    expect(ruleOf(added(sf("launchSocket", "null")))).toBe(null);
    expect(ruleOf(added(sf("launchSocket", "")))).toBe(null);
  });

  it("a diagnosis with another row is changed; the same row with other words is reworded", () => {
    const d = (row: string, line: string) => F("diagnosis", "case", { row, line });
    expect(ruleOf(changed("row", d("a", "x"), d("b", "x")))).toBe("diagnosis-changed");
    expect(ruleOf(changed("line", d("a", "x"), d("b", "y")))).toBe("diagnosis-changed");
    expect(ruleOf(changed("line", d("a", "x"), d("a", "y")))).toBe("diagnosis-reworded");
  });

  it("the tripwire turned off or on, read from session.json's tripwire object on each side", () => {
    const on = sf("tripwire", "{…}");
    const off = sf("tripwire", "null");
    expect(ruleOf(changed("value", on, off), ctx([on], [off]))).toBe("session-tripwire-off");
    expect(ruleOf(changed("value", off, on), ctx([off], [on]))).toBe("session-tripwire-on");
    expect(ruleOf(removed(on), ctx([on], []))).toBe("session-tripwire-off");
    expect(ruleOf(added(on), ctx([], [on]))).toBe("session-tripwire-on");
    // Only session.json's own tripwire object counts as on.
    const member = sf("tripwire", "{…}", "session-file-member");
    expect(ruleOf(changed("value", on, off), ctx([member], [off]))).toBe(null);
    expect(ruleOf(changed("value", off, on), ctx([off], [member]))).toBe(null);
    const other = sf("tripwirex", "{…}");
    expect(ruleOf(changed("value", on, off), ctx([other], [off]))).toBe(null);
    expect(ruleOf(changed("value", on, off), ctx([sf("tripwire", "{}")], [off]))).toBe(null);
    // On on both sides: a member's change is its own rule.
    const typed = F("session-file-member", "tripwire.typedTools#1", {}, "tripwire.typedTools");
    expect(ruleOf(removed(typed), ctx([on], [on]))).toBe("tripwire-typed-tool-removed");
    expect(ruleOf(added(typed), ctx([on], [on]))).toBe("tripwire-typed-tool-added");
  });

  it("a session.json bound: a number up or a true switch off loosens, the reverse tightens, anything else neither", () => {
    const b = (v: string) => sf("bounds.x", v);
    const c = (x: string, y: string) => ruleOf(changed("value", b(x), b(y)));
    expect(c("true", "false")).toBe("session-bound-loosened");
    expect(c("false", "true")).toBe("session-bound-tightened");
    expect(c("10", "20")).toBe("session-bound-loosened");
    expect(c("20", "10")).toBe("session-bound-tightened");
    expect(c("10", "abc")).toBe(null);
    expect(c("true", "null")).toBe(null);
    expect(c("null", "true")).toBe(null);
    expect(c("false", "null")).toBe(null);
    expect(c("10 ", "20")).toBe(null);
    expect(c("10", " 20")).toBe(null);
    expect(c("10", "20 ")).toBe(null);
    expect(c(" 10", "20")).toBe(null);
  });
});

describe("the model proxy's decisions and limits", () => {
  const d = (text: string, type = "model-decision") => F(type, text, {}, "", text);
  it("a refusal lost, a refused request passing, a passed one refused", () => {
    const refuse = d("POST /v1/x → refuse 403: no");
    const refuse2 = d("POST /v1/x → refuse 403: reworded");
    const pass = d("POST /v1/x → pass");
    expect(ruleOf(removed(refuse), ctx([refuse], []))).toBe("decision-refusal-lost");
    expect(ruleOf(removed(refuse), ctx([refuse], [refuse2]))).toBe(null);
    expect(ruleOf(removed(refuse), ctx([refuse], [d("POST /v1/y → refuse 403: no")]))).toBe("decision-refusal-lost");
    expect(ruleOf(removed(refuse), ctx([refuse], [d("POST /v1/x → refuse 403: no", "proxy-limit")]))).toBe(
      "decision-refusal-lost",
    );
    expect(ruleOf(removed(refuse), ctx([refuse], [pass]))).toBe("decision-refusal-lost");
    expect(ruleOf(added(pass), ctx([refuse], [pass]))).toBe("decision-now-passes");
    expect(ruleOf(added(pass), ctx([d("POST /v1/y → refuse 403: no")], [pass]))).toBe(null);
    expect(ruleOf(added(pass), ctx([pass], [pass]))).toBe(null);
    expect(ruleOf(added(refuse), ctx([pass], [refuse]))).toBe("decision-now-refused");
    expect(ruleOf(added(refuse), ctx([refuse2], [refuse]))).toBe(null);
    expect(ruleOf(removed(pass), ctx([pass], [refuse]))).toBe("decision-now-refused");
    expect(ruleOf(removed(pass), ctx([pass], []))).toBe(null);
    expect(ruleOf(removed(pass), ctx([pass], [d("POST /v1/x → pass, again")]))).toBe(null);
    // An outcome is a whole word at the start of the decision.
    expect(ruleOf(added(d("POST /v1/x → passing")), ctx([refuse], []))).toBe(null);
    expect(ruleOf(removed(d("POST /v1/x → refused")), ctx([], []))).toBe(null);
    expect(ruleOf(added(d("POST /v1/x → x pass")), ctx([refuse], []))).toBe(null);
    expect(ruleOf(added(d("POST /v1/x")), ctx([d("POST /v1/x")], []))).toBe(null);
    expect(rule("decision-refusal-lost")(added(refuse), ctx([], []))).toBe(false);
    expect(rule("decision-now-passes")(removed(pass), ctx([refuse], []))).toBe(false);
    expect(rule("decision-now-refused")(changed("text", pass, pass), ctx([refuse], [refuse]))).toBe(false);
  });

  it("a proxy limit raised or lowered, against the same limit on the other side", () => {
    const l = (text: string) => F("proxy-limit", text, {}, "", text);
    const lo = l("maxBody | 100 | why");
    const hi = l("maxBody | 200 | why");
    expect(ruleOf(added(hi), ctx([lo], [hi]))).toBe("proxy-limit-raised");
    expect(ruleOf(added(lo), ctx([hi], [lo]))).toBe("proxy-limit-lowered");
    expect(ruleOf(removed(lo), ctx([lo], [hi]))).toBe("proxy-limit-raised");
    expect(ruleOf(removed(hi), ctx([hi], [lo]))).toBe("proxy-limit-lowered");
    expect(ruleOf(added(hi), ctx([l("other | 100 | why")], [hi]))).toBe(null);
    expect(ruleOf(added(hi), ctx([l("maxBody | 200 | old why")], [hi]))).toBe(null);
    expect(ruleOf(added(hi), ctx([], [hi]))).toBe(null);
    expect(ruleOf(removed(hi), ctx([hi], []))).toBe(null);
    expect(ruleOf(added(l("# maxBody | 200 |")), ctx([l("# maxBody | 100 |")], []))).toBe(null);
    expect(ruleOf(added(l("maxBody | 2x0 |")), ctx([l("maxBody | 100 |")], []))).toBe(null);
    expect(ruleOf(added(l("max-body | 200 |")), ctx([l("max-body | 100 |")], []))).toBe(null);
    // A line that is no limit row, against limit rows, is no change of a limit.
    expect(ruleOf(added(l("limits:")), ctx([lo, hi], []))).toBe(null);
    expect(ruleOf(removed(l("limits:")), ctx([], [lo, hi]))).toBe(null);
    expect(ruleOf(added(l("maxBody | 20 |")), ctx([lo], []))).toBe("proxy-limit-lowered");
    expect(ruleOf(added(l("maxBody | 1000 |")), ctx([hi], []))).toBe("proxy-limit-raised");
    expect(rule("proxy-limit-raised")(changed("text", lo, hi), ctx([lo], [hi]))).toBe(false);
    expect(rule("proxy-limit-lowered")(changed("text", hi, lo), ctx([hi], [lo]))).toBe(false);
  });
});

describe("the end-of-session check", () => {
  const w = (text: string) => F("workspace-check-line", text, {}, "", text);
  it("an entry kept for the same subject is reworded; one lost or added is not", () => {
    const a = w("hook | .git/hooks/pre-commit | a hook");
    const b = w("hook | .git/hooks/pre-commit | another reason");
    expect(ruleOf(removed(a), ctx([a], [b]))).toBe("workspace-entry-reworded");
    expect(ruleOf(added(b), ctx([a], [b]))).toBe("workspace-entry-reworded");
    expect(ruleOf(removed(a), ctx([a], []))).toBe("workspace-entry-lost");
    expect(ruleOf(added(b), ctx([], [b]))).toBe("workspace-entry-added");
    expect(ruleOf(removed(a), ctx([a], [w("hook | .git/hooks/post-commit | a hook")]))).toBe("workspace-entry-lost");
    expect(ruleOf(removed(a), ctx([a], [a]))).toBe("workspace-entry-lost");
    expect(ruleOf(removed(a), ctx([a], [F("other", "x", {}, "", b.text)]))).toBe("workspace-entry-lost");
    // A remedy's destination is not its subject.
    const m1 = w("moved | .git/hooks/x -> /q/1");
    const m2 = w("moved | .git/hooks/x -> /q/2");
    expect(ruleOf(added(m2), ctx([m1], [m2]))).toBe("workspace-entry-reworded");
    expect(ruleOf(added(m2), ctx([w("moved | .git/hooks/y -> /q/1")], [m2]))).toBe("workspace-entry-added");
    // The section headings are no entries.
    expect(ruleOf(removed(w("findings:")), ctx([], []))).toBe(null);
    expect(ruleOf(added(w("remedies:")), ctx([], []))).toBe(null);
    expect(ruleOf(added(w("findings:")), ctx([w("findings:x")], []))).toBe(null);
    expect(rule("workspace-entry-reworded")(changed("text", a, b), ctx([a], [b]))).toBe(false);
    expect(rule("workspace-entry-lost")(added(a), NONE)).toBe(false);
    expect(rule("workspace-entry-added")(removed(a), NONE)).toBe(false);
  });
});

describe("the proxy's egress cases", () => {
  const e = (decision: string) => F("egress-call", "GET /x", { decision });
  const c = (b: string, a: string) => ruleOf(changed("decision", e(b), e(a)));
  it("forward and refuse turned, reworded, added and removed", () => {
    expect(c("refuse 403: no", "forward: ok")).toBe("egress-refuse-to-forward");
    expect(c("forward: ok", "refuse 403: no")).toBe("egress-forward-to-refuse");
    expect(c("forward: ok", "forward: fine")).toBe("egress-reason-reworded");
    expect(c("refuse 403: no", "refuse 403: never")).toBe("egress-reason-reworded");
    expect(c("odd", "odder")).toBe(null);
    expect(c("odd", "forward: ok")).toBe(null);
    expect(ruleOf(added(e("forward: ok")))).toBe("egress-case-added-forward");
    expect(ruleOf(added(e("refuse 403: no")))).toBe("egress-case-added-refuse");
    expect(ruleOf(added(e("odd")))).toBe(null);
    expect(ruleOf(removed(e("refuse 403: no")))).toBe("egress-case-removed-refuse");
    expect(ruleOf(removed(e("forward: ok")))).toBe("egress-case-removed-forward");
    expect(ruleOf(removed(e("odd")))).toBe(null);
  });
});

describe("session tables", () => {
  it("a credential set needing fewer or more variables, counted without empty names", () => {
    const s = (variables: string) => F("credential-set", "proxy", { variables });
    const c = (b: string, a: string) => ruleOf(changed("variables", s(b), s(a)));
    expect(c("A + B", "A")).toBe("credential-set-loosened");
    expect(c("A", "A + B")).toBe("credential-set-tightened");
    expect(c("A + B", "A + C")).toBe(null);
    expect(c("A + B", "A + B + ")).toBe(null);
    expect(c("A + B", "A +  ")).toBe("credential-set-loosened");
    expect(c("A+B", "A + B")).toBe(null);
  });

  it("a signal's exit recorded as killed, or no longer", () => {
    const x = (outcome: string) => F("exit-map", "SIGKILL", { outcome });
    const c = (b: string, a: string) => ruleOf(changed("outcome", x(b), x(a)));
    expect(c('{"kind":"killed"}', '{"kind":"exit"}')).toBe("kill-unrecorded");
    expect(c('{"kind":"exit"}', '{"kind":"killed"}')).toBe("kill-recorded");
    expect(c('{"kind":"killed"}', '{"kind":"killed","code":9}')).toBe(null);
    expect(c('{"kind":"exit"}', '{"kind":"exit","code":1}')).toBe(null);
  });
});

describe("the seccomp listing", () => {
  it("a denied call's action widened or narrowed; an action no row knows is neither", () => {
    const d = (action: string) => F("seccomp-deny", "ptrace", { action });
    const c = (b: string, a: string) => ruleOf(changed("action", d(b), d(a)));
    expect(c("kill", "errno EPERM")).toBe("seccomp-action-widened");
    expect(c("errno EPERM", "kill")).toBe("seccomp-action-narrowed");
    expect(c("odd", "kill")).toBe(null);
    expect(c("kill", "odd")).toBe(null);
    expect(c("odd", "allow")).toBe(null);
    expect(c("errno EPERM", "trap")).toBe(null);
  });

  it("a flag test's mask or flag list losing or only gaining members", () => {
    const d = (field: string, v: string, op = "jset") => F("seccomp-deny", "clone", { op, [field]: v }, "program");
    const c = (field: string, b: string, a: string, op = "jset") =>
      ruleOf(changed(field, d(field, b, op), d(field, a, op)));
    expect(c("args", "0x7e020000", "0x7e000000")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", "0x7e000000", "0x7e020000")).toBe("seccomp-clone-flags-widened");
    expect(c("args", "0x1", "0x2")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", "12", "4")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", "0X1F", "0X0F")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", " 0x3", "0x1")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", "0x3", "0x1 ")).toBe("seccomp-clone-flags-narrowed");
    expect(c("args", "abc", "0x1")).toBe(null);
    expect(c("args", "0x1", "abc")).toBe(null);
    expect(c("args", "0x1", "0x1z")).toBe(null);
    expect(c("args", "z0x1", "0x1")).toBe(null);
    expect(c("args", "0x3", "0x1", "jeq")).toBe(null);
    expect(c("flags", "CLONE_NEWNS CLONE_NEWPID", "CLONE_NEWNS")).toBe("seccomp-clone-flags-narrowed");
    expect(c("flags", "CLONE_NEWNS", "CLONE_NEWNS CLONE_NEWPID")).toBe("seccomp-clone-flags-widened");
    expect(c("flags", "CLONE_NEWNS", "CLONE_NEWPID")).toBe("seccomp-clone-flags-narrowed");
    expect(c("flags", " CLONE_NEWNS", "CLONE_NEWNS")).toBe(null);
    expect(c("flags", "CLONE_NEWNS", "CLONE_NEWNS  ")).toBe(null);
    expect(c("flags", "A  B", "B A")).toBe(null);
    const x = F("seccomp-deny", "clone", { op: "jset", flags: "A" }, "program");
    const y = F("seccomp-deny", "clone", { op: "jeq", flags: "" }, "program");
    expect(ruleOf(changed("flags", x, y))).toBe(null);
    expect(ruleOf(changed("flags", y, x))).toBe(null);
  });

  /** A listing: a check that jumps to a deny, an allow or on to an argument check, and the returns. */
  function listing() {
    const step = (key: string, fields: Record<string, string>) => F("seccomp-step", key, fields, "program");
    const check = step("check", { op: "jeq", args: "#1", jt: "deny", jf: "next" });
    const argCheck = step("arg check", { op: "jeq", args: "#2", jt: "family", jf: "allow" });
    const family = step("family", { op: "jeq", args: "#3", jt: "allow", jf: "deny" });
    const allow = step("allow", { op: "ret", args: "#ALLOW" });
    const deny = step("deny", { op: "ret", args: "KILL" });
    const errno = step("errno", { op: "ret", args: "ERRNO(1)" });
    const trace = step("trace", { op: "ret", args: "TRACE" });
    const noArgs = step("bare", { op: "ret" });
    return { step, check, argCheck, family, allow, deny, errno, trace, noArgs };
  }

  it("a jump that leaves a deny, reaches one, or reaches an allow from a further check", () => {
    const l = listing();
    const facts = [l.check, l.argCheck, l.family, l.allow, l.deny, l.errno, l.trace, l.noArgs];
    const x = ctx(facts, facts);
    const jt = (b: string, a: string, at = l.check) =>
      ruleOf(changed("jt", withFields(at, { jt: b }), withFields(at, { jt: a })), x);
    expect(jt("deny", "allow")).toBe("seccomp-jump-off-deny");
    expect(jt("errno", "trace")).toBe("seccomp-jump-off-deny");
    expect(jt("allow", "deny")).toBe("seccomp-jump-to-deny");
    expect(jt("deny", "errno")).toBe(null);
    expect(jt("family", "allow")).toBe("seccomp-jump-to-allow");
    expect(jt("family", "trace")).toBe(null);
    expect(jt("trace", "bare")).toBe(null);
    expect(jt("family", "(no instruction 9)")).toBe(null);
    // "next" lands on the listed instruction after it.
    expect(jt("next", "deny")).toBe("seccomp-jump-to-deny");
    const beforeDeny = l.step("before deny", { op: "jeq", jt: "next" });
    const lastDeny = l.step("last deny", { op: "ret", args: "KILL" });
    const seq = [beforeDeny, lastDeny, l.allow];
    expect(ruleOf(changed("jt", beforeDeny, withFields(beforeDeny, { jt: "allow" })), ctx(seq, seq))).toBe(
      "seccomp-jump-off-deny",
    );
    // The jump's own side decides: the same jump read against the other side's listing.
    expect(
      ruleOf(
        changed("jt", withFields(l.check, { jt: "deny" }), withFields(l.check, { jt: "deny" })),
        ctx(
          facts,
          facts.filter((f) => f !== l.deny),
        ),
      ),
    ).toBe("seccomp-jump-off-deny");
    expect(
      ruleOf(
        changed("jf", withFields(l.check, { jf: "allow" }), withFields(l.check, { jf: "allow" })),
        ctx(
          facts.filter((f) => f !== l.allow),
          facts,
        ),
      ),
    ).toBe("seccomp-jump-to-allow");
    // A jump field one side lacks lands nowhere there.
    const noJt = F("seccomp-step", "check", { op: "jeq" }, "program");
    expect(ruleOf(changed("jt", noJt, withFields(noJt, { jt: "deny" })), x)).toBe("seccomp-jump-to-deny");
    expect(ruleOf(changed("jt", withFields(noJt, { jt: "deny" }), noJt), x)).toBe("seccomp-jump-off-deny");
    expect(ruleOf(changed("jt", noJt, withFields(noJt, { jt: "allow" })), x)).toBe("seccomp-jump-to-allow");
  });

  it("a check removed or added by where its jumps land", () => {
    const l = listing();
    const facts = [l.check, l.argCheck, l.family, l.allow, l.deny, l.errno];
    const x = ctx(facts, facts);
    expect(ruleOf(removed(l.check), x)).toBe("seccomp-check-removed");
    expect(ruleOf(removed(l.family), x)).toBe("seccomp-check-removed");
    expect(ruleOf(added(l.check), x)).toBe("seccomp-check-added");
    expect(ruleOf(removed(l.argCheck), x)).toBe("seccomp-arg-check-removed");
    expect(
      ruleOf(
        removed(l.check),
        ctx(
          facts.filter((f) => f !== l.deny),
          facts,
        ),
      ),
    ).toBe(null);
    expect(
      ruleOf(
        added(l.check),
        ctx(
          facts,
          facts.filter((f) => f !== l.deny),
        ),
      ),
    ).toBe(null);
    const toNext = l.step("to next", { op: "jeq", jt: "next", jf: "allow" });
    expect(ruleOf(removed(toNext), ctx([toNext, l.family, l.allow], []))).toBe(null);
    const toRet = l.step("to ret", { op: "jeq", jt: "allow" });
    expect(ruleOf(removed(toRet), ctx([toRet, l.allow], []))).toBe(null);
    const toNothing = l.step("to nothing", { op: "jeq", jt: "(no instruction 9)" });
    expect(ruleOf(removed(toNothing), ctx([toNothing], []))).toBe(null);
    const jset = l.step("jset", { op: "jset", jt: "family" });
    expect(ruleOf(removed(jset), ctx([jset, l.family, l.allow], []))).toBe(null);
    const noJt = l.step("no jt", { op: "jeq", jf: "family" });
    expect(ruleOf(removed(noJt), ctx([noJt, l.family], []))).toBe(null);
    expect(ruleOf(added(l.argCheck), x)).toBe("seccomp-allow-jump-added");
    expect(
      ruleOf(
        added(l.argCheck),
        ctx(
          facts,
          facts.filter((f) => f !== l.allow),
        ),
      ),
    ).toBe(null);
    expect(rule("seccomp-check-removed")(added(l.check), x)).toBe(false);
    expect(rule("seccomp-check-added")(removed(l.check), x)).toBe(false);
    expect(rule("seccomp-arg-check-removed")(added(l.argCheck), x)).toBe(false);
    expect(rule("seccomp-allow-jump-added")(removed(l.argCheck), x)).toBe(false);
    expect(rule("seccomp-jump-off-deny")(removed(l.check), x)).toBe(false);
    expect(rule("seccomp-jump-to-deny")(added(l.check), x)).toBe(false);
    expect(rule("seccomp-jump-to-allow")(added(l.argCheck), x)).toBe(false);
  });

  it("a return that allows added, one that denies removed or added", () => {
    const r = (args: string | undefined, type = "seccomp-insn") =>
      F(type, `ret ${args}`, args === undefined ? { op: "ret" } : { op: "ret", args });
    expect(ruleOf(added(r("#ALLOW")))).toBe("seccomp-allow-return-added");
    expect(ruleOf(added(r("0x7fff0000")))).toBe("seccomp-allow-return-added");
    expect(ruleOf(added(r("LOG")))).toBe("seccomp-allow-return-added");
    expect(ruleOf(added(r("TRACE")))).toBe(null);
    expect(ruleOf(added(r("#KILL")))).toBe("seccomp-deny-return-added");
    expect(ruleOf(added(r("ERRNO(1)")))).toBe("seccomp-deny-return-added");
    expect(ruleOf(added(r("TRAP")))).toBe("seccomp-deny-return-added");
    expect(ruleOf(added(r("odd")))).toBe(null);
    expect(ruleOf(added(r("x#KILL")))).toBe(null);
    expect(ruleOf(removed(r("#KILL")))).toBe("seccomp-deny-return-removed");
    expect(ruleOf(removed(r("#ERRNO(1)")))).toBe("seccomp-deny-return-removed");
    expect(ruleOf(removed(r("TRAP")))).toBe("seccomp-deny-return-removed");
    expect(ruleOf(removed(r("TRACE")))).toBe(null);
    expect(ruleOf(removed(r("ALLOW")))).toBe(null);
    expect(ruleOf(removed(r("odd")))).toBe(null);
    expect(ruleOf(removed(r("x#KILL")))).toBe(null);
    expect(ruleOf(added(F("seccomp-insn", "jeq", { op: "jeq", args: "ALLOW" })))).toBe(null);
    expect(ruleOf(removed(F("seccomp-insn", "jeq", { op: "jeq", args: "KILL" })))).toBe(null);
    // An allow return reached by a jump: its args read without their "#"; none is no allow.
    const j = F("seccomp-step", "j", { op: "jeq", jt: "a" }, "program");
    const allow = (args?: string) =>
      F("seccomp-step", "a", args === undefined ? { op: "ret" } : { op: "ret", args }, "program");
    expect(ruleOf(added(j), ctx([], [j, allow("#ALLOW")]))).toBe("seccomp-allow-jump-added");
    expect(ruleOf(added(j), ctx([], [j, allow("ALLOW")]))).toBe("seccomp-allow-jump-added");
    expect(ruleOf(added(j), ctx([], [j, allow("#LOG")]))).toBe("seccomp-allow-jump-added");
    expect(ruleOf(added(j), ctx([], [j, allow("#TRACE")]))).toBe(null);
    expect(ruleOf(added(j), ctx([], [j, allow()]))).toBe(null);
    expect(ruleOf(added(j), ctx([], [j, allow("x#ALLOW")]))).toBe(null);
    expect(ruleOf(added(j), ctx([], [j, F("seccomp-step", "a", { op: "jeq", args: "ALLOW" }, "program")]))).toBe(null);
  });

  it("a listed program's deny check moved is not a reorder; a deny table's row is", () => {
    expect(ruleOf(moved(F("seccomp-deny", "ptrace", {}, "program")))).toBe(null);
    expect(ruleOf(moved(F("seccomp-deny", "ptrace", {}, "")))).toBe("reorder-unordered");
    expect(ruleOf(moved(F("env-allow", "HOME", {}, "program")))).toBe("reorder-unordered");
  });
});

describe("the review's own report", () => {
  const f = (verdict: string, type = "review-finding") => F(type, "case · x", { verdict, detail: "d" });
  const c = (b: string, a: string, type?: string) => ruleOf(changed("verdict", f(b, type), f(a, type)));
  it("alarm lowered or raised from or to weakens or unknown; the rest is wording", () => {
    expect(c("weakens", "neutral")).toBe("review-alarm-lowered");
    expect(c("weakens", "unknown")).toBe("review-alarm-lowered");
    expect(c("unknown", "strengthens")).toBe("review-alarm-lowered");
    expect(c("strengthens", "neutral")).toBe("review-wording");
    expect(c("neutral", "strengthens")).toBe("review-wording");
    expect(c("neutral", "weakens")).toBe("review-alarm-raised");
    expect(c("strengthens", "unknown")).toBe("review-alarm-raised");
    expect(c("unknown", "weakens")).toBe("review-alarm-raised");
    expect(c("bogus", "weakens")).toBe("review-alarm-raised");
    expect(c("weakens", "bogus")).toBe("review-alarm-lowered");
    expect(c("bogus", "neutral")).toBe("review-wording");
    expect(c("odd", "bogus")).toBe("review-wording");
    expect(ruleOf(removed(f("weakens")))).toBe("review-alarm-lowered");
    expect(ruleOf(removed(f("unknown")))).toBe("review-alarm-lowered");
    expect(ruleOf(removed(f("strengthens")))).toBe("review-wording");
    expect(ruleOf(added(f("unknown")))).toBe("review-alarm-raised");
    expect(ruleOf(added(f("weakens")))).toBe("review-alarm-raised");
    expect(ruleOf(added(f("strengthens")))).toBe("review-wording");
    expect(ruleOf(added(F("review-finding", "x", {})))).toBe("review-wording");
    expect(ruleOf(removed(F("review-finding", "x", {})))).toBe("review-wording");
    expect(ruleOf(changed("detail", f("weakens"), withFields(f("weakens"), { detail: "e" })))).toBe("review-wording");
    // A summary's verdict field that rises to or falls from an alarm is no wording.
    expect(c("weakens", "neutral", "review-summary")).toBe(null);
    expect(c("neutral", "unknown", "review-summary")).toBe(null);
    expect(c("neutral", "strengthens", "review-summary")).toBe("review-wording");
    expect(ruleOf(moved(f("weakens", "review-section")))).toBe("review-wording");
  });
});

describe("findRule", () => {
  it("reads a rule's op list, fields, key and place, and returns the first that matches", () => {
    const rules = [
      { id: "by-list", verdict: "neutral", why: "w", types: ["t"], op: ["added", "removed"] },
      { id: "by-field", verdict: "neutral", why: "w", types: ["t"], op: "changed", fields: ["a"] },
      { id: "by-key", verdict: "neutral", why: "w", types: ["t"], op: "changed", key: /^k$/ },
      { id: "by-at", verdict: "neutral", why: "w", types: ["t"], op: "changed", at: /^p$/ },
      { id: "by-when", verdict: "neutral", why: "w", types: ["t"], op: "moved", when: () => false },
      { id: "last", verdict: "neutral", why: "w", types: ["t", "u"], op: ["moved", "changed"] },
    ] as const;
    const t = (key: string, at = "") => F("t", key, {}, at);
    const id = (c: Change) => findRule(c, NONE, rules)?.id ?? null;
    expect(id(added(t("x")))).toBe("by-list");
    expect(id(removed(t("x")))).toBe("by-list");
    expect(id(changed("a", t("x"), t("x")))).toBe("by-field");
    expect(id(changed("b", t("k"), t("k")))).toBe("by-key");
    expect(id(changed("b", t("x", "p"), t("x", "p")))).toBe("by-at");
    expect(id(changed("b", t("x", "q"), t("x", "q")))).toBe("last");
    expect(id(moved(t("x")))).toBe("last");
    expect(id(added(F("u", "x")))).toBe(null);
    expect(id(added(F("v", "x")))).toBe(null);
  });
});
