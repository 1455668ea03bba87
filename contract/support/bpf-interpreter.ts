import { BPF } from "../../src/core/sandbox/bpf.ts";

/** What a seccomp filter sees of one syscall: its number, the arch, and six 64-bit arguments. */
export interface SeccompData {
  nr: number;
  arch: number;
  args?: readonly bigint[];
}

/**
 * Runs a classic-BPF seccomp program over one syscall, as the kernel would, and returns the action
 * (the 32-bit return value). Only the instructions the assembler emits are understood; any other
 * opcode, a read past seccomp_data or running off the end is an error, never an "allow".
 */
export function runSeccomp(bytes: Uint8Array, data: SeccompData): number {
  const buf = new DataView(new ArrayBuffer(64));
  buf.setInt32(0, data.nr, true);
  buf.setUint32(4, data.arch, true);
  (data.args ?? []).forEach((a, i) => buf.setBigUint64(16 + 8 * i, BigInt.asUintN(64, a), true));
  const prog = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / 8;
  let acc = 0;
  for (let pc = 0; pc < n; ) {
    const code = prog.getUint16(pc * 8, true);
    const jt = prog.getUint8(pc * 8 + 2);
    const jf = prog.getUint8(pc * 8 + 3);
    const k = prog.getUint32(pc * 8 + 4, true);
    switch (code) {
      case BPF.LD_W_ABS:
        if (k + 4 > 64 || k % 4 !== 0) throw new Error(`bpf: load at ${k} outside seccomp_data`);
        acc = buf.getUint32(k, true);
        pc += 1;
        break;
      case BPF.JEQ_K:
        pc += 1 + (acc === k ? jt : jf);
        break;
      case BPF.JGE_K:
        pc += 1 + (acc >= k ? jt : jf);
        break;
      case BPF.JSET_K:
        pc += 1 + ((acc & k) >>> 0 !== 0 ? jt : jf);
        break;
      case BPF.RET_K:
        return k >>> 0;
      default:
        throw new Error(`bpf: opcode 0x${code.toString(16)} at ${pc} is not one the assembler emits`);
    }
  }
  throw new Error("bpf: the program ran off its end");
}
