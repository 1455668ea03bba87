/**
 * A tiny classic-BPF assembler for seccomp filters: labels instead of hand-counted jump offsets,
 * the 8-byte `struct sock_filter` encoding the kernel reads, and a one-instruction-per-line listing.
 */

/** Opcodes used here (linux/filter.h, linux/bpf_common.h). */
export const BPF = {
  LD_W_ABS: 0x20, // A = *(u32 *)(seccomp_data + k)
  JEQ_K: 0x15, // pc += (A == k) ? jt : jf
  JGE_K: 0x35, // pc += (A >= k) ? jt : jf
  JSET_K: 0x45, // pc += (A & k) ? jt : jf
  RET_K: 0x06, // return k
} as const;

export type Insn =
  | { op: "ld"; offset: number; note: string }
  | { op: "jeq" | "jge" | "jset"; k: number; jt: string; jf: string; note: string }
  | { op: "ret"; k: number; note: string };

export type Item = Insn | { label: string };

export type Encoded = { code: number; jt: number; jf: number; k: number; insn: Insn };

const CODES = { ld: BPF.LD_W_ABS, jeq: BPF.JEQ_K, jge: BPF.JGE_K, jset: BPF.JSET_K, ret: BPF.RET_K } as const;

/** The label that means "the next instruction": a jump of 0. */
export const NEXT = "+0";

/** Resolves labels into forward jump offsets; a backward or too-far jump is a bug in the program. */
export function assemble(items: readonly Item[]): Encoded[] {
  const labels = new Map<string, number>();
  const insns: Insn[] = [];
  for (const it of items) {
    if ("label" in it) {
      if (labels.has(it.label)) throw new Error(`bpf: label ${it.label} defined twice`);
      labels.set(it.label, insns.length);
    } else insns.push(it);
  }
  return insns.map((insn, pc) => {
    if (insn.op === "ld" || insn.op === "ret")
      return { code: CODES[insn.op], jt: 0, jf: 0, k: insn.op === "ld" ? insn.offset : insn.k, insn };
    const off = (label: string): number => {
      if (label === NEXT) return 0;
      const at = labels.get(label);
      if (at === undefined) throw new Error(`bpf: jump to undefined label ${label}`);
      const d = at - (pc + 1);
      if (d < 0 || d > 255) throw new Error(`bpf: jump from ${pc} to ${label} (${d}) is out of range`);
      return d;
    };
    return { code: CODES[insn.op], jt: off(insn.jt), jf: off(insn.jf), k: insn.k, insn };
  });
}

/** The program as the kernel reads it: u16 code, u8 jt, u8 jf, u32 k, little-endian (x86_64, aarch64). */
export function encode(program: readonly Encoded[]): Uint8Array {
  const out = new Uint8Array(program.length * 8);
  const view = new DataView(out.buffer);
  program.forEach((p, i) => {
    view.setUint16(i * 8, p.code, true);
    view.setUint8(i * 8 + 2, p.jt);
    view.setUint8(i * 8 + 3, p.jf);
    view.setUint32(i * 8 + 4, p.k >>> 0, true);
  });
  return out;
}

const hex = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
const at = (pc: number) => pc.toString().padStart(4, "0");

/** One instruction per line: pc, mnemonic, operand, absolute jump targets, and why. */
export function listing(program: readonly Encoded[]): string[] {
  return program.map((p, pc) => {
    const i = p.insn;
    const body =
      i.op === "ld"
        ? `ld   [${i.offset}]`
        : i.op === "ret"
          ? `ret  ${hex(i.k)}`
          : `${i.op.padEnd(4)} ${hex(i.k)} jt ${at(pc + 1 + p.jt)} jf ${at(pc + 1 + p.jf)}`;
    return `${at(pc)} ${body.padEnd(40)} ; ${i.note}`;
  });
}
