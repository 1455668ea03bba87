// The seccomp listing: the filter one BPF instruction a line, the denied syscalls as rows, and the
// program's sha256. The format is read through LINE_FORMS, so a listing written another way is one
// row to change here; a line no form knows stays a whole line, and a change to it is unknown.
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
  { test: /^([a-z_][a-z0-9_]*)\s+\|\s+(.+)$/, read: (m, l) => fact("seccomp-deny", m[1]!, { action: m[2]!.trim() }, l) },
  // an instruction, with or without a leading index: `3: jeq #0x65 jt 0 jf 1`, `ret ERRNO(1)`
  {
    test: /^(?:\d+\s*[:|]?\s+)?(ld|ldh|ldb|ldx|ldxb|st|stx|jeq|jne|jgt|jge|jlt|jle|jset|ja|jmp|ret|tax|txa|add|sub|mul|div|mod|and|or|xor|lsh|rsh|neg)\b\s*(.*)$/i,
    read: (m, l) => fact("seccomp-insn", `${m[1]!.toLowerCase()} ${m[2]!.trim()}`, { op: m[1]!.toLowerCase(), args: m[2]!.trim() }, l),
  },
  { test: /^#/, read: (m, l) => fact("comment", m.input, {}, l) },
];

export function parseSeccomp(text: string): Fact[] {
  const facts = bodyLines(text).filter((l) => l.text.trim() !== "").map((l) => {
    const t = l.text.trim();
    for (const f of LINE_FORMS) {
      const m = f.test.exec(t);
      if (m) return f.read(m, l);
    }
    return plainLine(l);
  });
  return [...headerFact(text), ...uniqueKeys(facts)];
}
