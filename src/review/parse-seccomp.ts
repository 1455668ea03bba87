// The seccomp listing: the filter one BPF instruction a line, the denied syscalls as rows, and the
// program's sha256. The format is read through LINE_FORMS, so a listing written another way is one
// row to change here; a line no form knows stays a whole line, and a change to it is unknown.
// A listing whose instructions carry an index and a comment (`0004 jeq 0x65 jt 0047 jf 0005 ; deny
// ptrace EPERM: why`) is read by meaning: each instruction keyed by what its comment says it does,
// its jumps by where they land, so a row removed shifts no other row.
import { uniqueKeys, type Fact } from "./model.ts";
import { bodyLines, fact, headerFact, plainLine, type Line } from "./parse-lines.ts";

/** What a seccomp return does, narrowest last: a call that returns an error can be retried, one that kills cannot. */
export const SECCOMP_ACTIONS: readonly { action: string; test: RegExp; width: number }[] = [
  { action: "allow", test: /^(allow|SECCOMP_RET_ALLOW|0x7fff0000)$/i, width: 3 },
  { action: "log", test: /^(log|SECCOMP_RET_LOG|0x7ffc0000)$/i, width: 3 },
  { action: "trace", test: /^(trace|SECCOMP_RET_TRACE)/i, width: 2 },
  { action: "errno", test: /^(errno|SECCOMP_RET_ERRNO|0x0005|E[A-Z]+$|\d+$)/i, width: 1 },
  { action: "trap", test: /^(trap|SECCOMP_RET_TRAP|0x00030000)$/i, width: 1 },
  { action: "kill", test: /^(kill|kill_process|kill_thread|SECCOMP_RET_KILL|0x80000000|0x00000000)/i, width: 0 },
];

/** The width of an action text (`kill`, `errno EPERM`, `ERRNO(1)`, `ALLOW`), or -1 when no row knows it. */
export function actionWidth(text: string): number {
  const head = text.trim().split(/[\s(]/)[0] ?? "";
  return SECCOMP_ACTIONS.find((a) => a.test.test(head))?.width ?? -1;
}

type Form = { test: RegExp; read: (m: RegExpExecArray, l: Line) => Fact };

/** The line forms of a listing, tried in order. */
export const LINE_FORMS: readonly Form[] = [
  // sha256 <hex> / sha256: <hex> / # sha256 <hex>
  { test: /^#?\s*sha256:?\s+(\S+)\s*$/i, read: (m, l) => fact("seccomp-digest", "sha256", { value: m[1]! }, l) },
  // deny <syscall> <action>, or <syscall> | <action>
  { test: /^deny\s+(\S+)\s+(.+)$/i, read: (m, l) => fact("seccomp-deny", m[1]!, { action: m[2]!.trim() }, l) },
  {
    test: /^([a-z_][a-z0-9_]*)\s+\|\s+(.+)$/,
    read: (m, l) => fact("seccomp-deny", m[1]!, { action: m[2]!.trim() }, l),
  },
  // an instruction, with or without a leading index: `3: jeq #0x65 jt 0 jf 1`, `ret ERRNO(1)`
  {
    test: /^(?:\d+\s*[:|]?\s+)?(ld|ldh|ldb|ldx|ldxb|st|stx|jeq|jne|jgt|jge|jlt|jle|jset|ja|jmp|ret|tax|txa|add|sub|mul|div|mod|and|or|xor|lsh|rsh|neg)\b\s*(.*)$/i,
    read: (m, l) =>
      fact(
        "seccomp-insn",
        `${m[1]!.toLowerCase()} ${m[2]!.trim()}`,
        { op: m[1]!.toLowerCase(), args: m[2]!.trim() },
        l,
      ),
  },
  { test: /^#/, read: (m, l) => fact("comment", m.input, {}, l) },
];

/** The ops of an instruction line. */
const OPS =
  "ld|ldh|ldb|ldx|ldxb|st|stx|jeq|jne|jgt|jge|jlt|jle|jset|ja|jmp|ret|tax|txa|add|sub|mul|div|mod|and|or|xor|lsh|rsh|neg";

/** An indexed, commented instruction: `NNNN op args ; comment`. */
const LISTED = new RegExp(`^(\\d+)\\s+(${OPS})\\b\\s*(.*?)\\s*;\\s*(.*)$`, "i");

/**
 * A comment that says the instruction denies a syscall: `deny <name> <action>` then `: why` or
 * `with any of <flags>`. The name may be two words (`ioctl TIOCSTI`); the action is an errno or a
 * return's name.
 */
const DENY_COMMENT = /^deny\s+(.+?)\s+(E[A-Z0-9]+|kill|kill_process|kill_thread|trap|log)\b\s*(.*)$/;

/** A conditional jump's two fields; each holds where it lands: NEXT, the target's key, or a missing index. */
export type Jump = "jt" | "jf";
export const NEXT = "next";

type Listed = {
  index: number;
  l: Line;
  op: string;
  args: string;
  jumps: Partial<Record<Jump, number>>;
  comment: string;
};

function readListed(m: RegExpExecArray, l: Line): Listed {
  const tokens = m[3]!.trim().split(/\s+/).filter(Boolean);
  const jumps: Partial<Record<Jump, number>> = {};
  const value: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if ((t === "jt" || t === "jf") && /^\d+$/.test(tokens[i + 1] ?? "")) jumps[t] = Number(tokens[++i]);
    else value.push(t);
  }
  return { index: Number(m[1]), l, op: m[2]!.toLowerCase(), args: value.join(" "), jumps, comment: m[4]!.trim() };
}

/** The fact of one listed instruction, before its jumps are resolved. */
function listedFact(x: Listed): Fact {
  const base = { op: x.op, args: x.args };
  const d = DENY_COMMENT.exec(x.comment);
  if (!d) return fact("seccomp-step", x.comment, base, x.l, "program");
  const tail = d[3]!.trim();
  const flags = /^with any of\s+(.*)$/.exec(tail);
  const extra: Record<string, string> = flags
    ? { flags: flags[1]!.trim() }
    : tail.startsWith(":")
      ? { why: tail.slice(1).trim() }
      : tail
        ? { note: tail }
        : {};
  return fact("seccomp-deny", d[1]!, { ...base, action: d[2]!, ...extra }, x.l, "program");
}

/**
 * Each listed instruction's jumps, by where they land: "next" for the instruction on the following
 * line, else the target's key. The compared text drops the index and the jump numbers, which only
 * the instruction's place decides.
 */
function resolveJumps(facts: Fact[], listed: ReadonlyMap<Fact, Listed>): Fact[] {
  const byIndex = new Map<number, Fact>();
  for (const [f, x] of listed) byIndex.set(x.index, f);
  return facts.map((f, i) => {
    const x = listed.get(f);
    if (!x) return f;
    const land = (n: number): string => {
      const t = byIndex.get(n);
      if (!t) return `(no instruction ${n})`;
      return t === facts[i + 1] && n === x.index + 1 ? NEXT : t.key;
    };
    const fields: Record<string, string> = { ...f.fields };
    for (const j of ["jt", "jf"] as const) if (x.jumps[j] !== undefined) fields[j] = land(x.jumps[j]!);
    const compare = f.text
      .replace(/^\d+\s+/, "")
      .replace(/\b(jt|jf)(\s+)(\d+)\b/g, (_, j: Jump, sp: string) => `${j}${sp}${fields[j]}`);
    return { ...f, fields, compare };
  });
}

export function parseSeccomp(text: string): Fact[] {
  const listed = new Map<Fact, Listed>();
  const facts = bodyLines(text)
    .filter((l) => l.text.trim() !== "")
    .map((l) => {
      const t = l.text.trim();
      const m = LISTED.exec(t);
      if (m) {
        const x = readListed(m, l);
        const f = listedFact(x);
        listed.set(f, x);
        return f;
      }
      for (const f of LINE_FORMS) {
        const m = f.test.exec(t);
        if (m) return f.read(m, l);
      }
      return plainLine(l);
    });
  // Keys made unique first, so a jump names the very instruction it lands on.
  const unique = uniqueKeys(facts);
  const relisted = new Map<Fact, Listed>();
  unique.forEach((f, i) => {
    const x = listed.get(facts[i]!);
    if (x) relisted.set(f, x);
  });
  return [...headerFact(text), ...resolveJumps(unique, relisted)];
}

/** The instruction a jump field lands on, in one revision's facts: "next" is the following line. */
export function landingOf(from: Fact, target: string, facts: readonly Fact[]): Fact | undefined {
  const listed = (f: Fact) => f.at === "program" && (f.type === "seccomp-step" || f.type === "seccomp-deny");
  if (target === NEXT) return facts.filter((f) => listed(f) && f.line > from.line).sort((a, b) => a.line - b.line)[0];
  return facts.find((f) => listed(f) && f.key === target);
}

/** A return that stops the call: a kill, a trap or an errno. */
export function isDenyReturn(f: Fact | undefined): boolean {
  if (!f || f.fields.op !== "ret") return false;
  const w = actionWidth((f.fields.args ?? "").replace(/^#/, ""));
  return w >= 0 && w <= 1;
}
