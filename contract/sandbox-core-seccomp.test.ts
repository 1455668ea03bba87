// The filter as a session gets it, built while each test runs: contract/seccomp.test.ts builds it
// while collecting, so the generated sweep saw none of seccompItems' mutants. The reviewed goldens
// of that file are the expected listing and bytes here; the socket control drops the family check.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sha256Bytes } from "../src/core/bundle/digest.ts";
import { goldenPath } from "../src/conformance/golden/golden.ts";
import { AUDIT_ARCH, RET, SECCOMP_ARCHES, SECCOMP_RULES, seccompProgram } from "../src/core/sandbox/seccomp.ts";
import { runSeccomp } from "./support/bpf-interpreter.ts";

/** The reviewed golden's lines, without its provenance header. */
const golden = (arch: string): string[] =>
  readFileSync(goldenPath("sandbox/seccomp", arch.replace("_", "-"), "txt"), "utf8")
    .trimEnd()
    .split("\n")
    .filter((l) => !l.startsWith("# "));

describe.each(SECCOMP_ARCHES)("the seccomp filter for %s, built in the test", (arch) => {
  it("is the reviewed golden: every instruction, its note, and the bytes' sha256", () => {
    const prog = seccompProgram(arch);
    expect([...prog.listing, `sha256 ${sha256Bytes(prog.bytes)}`]).toEqual(golden(arch));
  });
  it("without the family allowlist (a control), socket() opens any family and the rest still holds", () => {
    const prog = seccompProgram(arch, { ...SECCOMP_RULES, socketFamilies: null });
    // Numbers from asm/unistd_64.h and asm-generic/unistd.h (baselines/syscalls.json): socket, ptrace.
    const nr = arch === "x86_64" ? { socket: 41, ptrace: 101 } : { socket: 198, ptrace: 117 };
    const run = (n: number, args: bigint[] = []) => runSeccomp(prog.bytes, { nr: n, arch: AUDIT_ARCH[arch], args });
    // AF_PACKET is 17 in linux/socket.h.
    expect(run(nr.socket, [17n, 3n, 0n]), "socket(AF_PACKET) is let through").toBe(RET.ALLOW);
    expect(run(nr.ptrace), "ptrace is still denied").toBe((RET.ERRNO | 1) >>> 0);
    expect(
      prog.listing.some((l) => l.includes("socket")),
      "no instruction looks at socket()",
    ).toBe(false);
  });
});

describe.each(SECCOMP_ARCHES)("a denied syscall's errno, for %s", (arch) => {
  it("each errno a deny row may name has its return: a row denying with EAFNOSUPPORT gets 97", () => {
    // No shipped row denies with EAFNOSUPPORT today; a rule set that does must still assemble and
    // land on that return, not fail to find its label. 97 is EAFNOSUPPORT in asm-generic/errno.h.
    const ptrace = SECCOMP_RULES.deny.find((r) => r.name === "ptrace")!;
    const rules = { ...SECCOMP_RULES, deny: [{ ...ptrace, errno: "EAFNOSUPPORT" as const }] };
    const prog = seccompProgram(arch, rules);
    const nr = arch === "x86_64" ? 101 : 117;
    expect(runSeccomp(prog.bytes, { nr, arch: AUDIT_ARCH[arch], args: [] })).toBe((RET.ERRNO | 97) >>> 0);
  });
});
