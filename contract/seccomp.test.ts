import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Bytes } from "../src/core/bundle/digest.ts";
import {
  AUDIT_ARCH,
  CLONE_NAMESPACE_FLAGS,
  ERRNO,
  IOCTL_DENY,
  RET,
  SECCOMP_ARCHES,
  SECCOMP_DENY,
  SOCKET_FAMILIES,
  SOCKET_FAMILIES_DENIED,
  seccompArchOf,
  seccompProgram,
  type SeccompArch,
} from "../src/core/sandbox/seccomp.ts";
import { runSeccomp } from "./support/bpf-interpreter.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";

const baseline = JSON.parse(readFileSync(join(REPO_ROOT, "baselines/syscalls.json"), "utf8")) as Record<
  SeccompArch | "addressFamilies" | "netlinkProtocols" | "errno" | "cloneFlags" | "ioctls",
  Record<string, number>
>;
/** A value pinned in baselines/syscalls.json from the system headers, independent of the tables under test. */
const pinned = (
  table: "addressFamilies" | "netlinkProtocols" | "errno" | "cloneFlags" | "ioctls",
  name: string,
): number => {
  const n = baseline[table][name];
  if (typeof n !== "number") throw new Error(`baselines/syscalls.json has no ${table}.${name}`);
  return n;
};
const nr = (arch: SeccompArch, name: string) => {
  const n = baseline[arch][name];
  if (n === undefined) throw new Error(`baselines/syscalls.json has no ${arch} ${name}`);
  return n;
};
const errno = (e: keyof typeof ERRNO) => (RET.ERRNO | ERRNO[e]) >>> 0;

/** Syscalls every session makes: node, git, sh and both CLIs need each of them allowed. */
const MUST_ALLOW = [
  "read",
  "write",
  "openat",
  "close",
  "mmap",
  "execve",
  "futex",
  "wait4",
  "exit_group",
  "socket",
  "connect",
  "getpid",
  "rt_sigaction",
  "prctl",
];
const ALLOWED_NR: Record<SeccompArch, Record<string, number>> = {
  x86_64: {
    read: 0,
    write: 1,
    openat: 257,
    close: 3,
    mmap: 9,
    execve: 59,
    futex: 202,
    wait4: 61,
    exit_group: 231,
    socket: 41,
    connect: 42,
    getpid: 39,
    rt_sigaction: 13,
    prctl: 157,
  },
  aarch64: {
    read: 63,
    write: 64,
    openat: 56,
    close: 57,
    mmap: 222,
    execve: 221,
    futex: 98,
    wait4: 260,
    exit_group: 94,
    socket: 198,
    connect: 203,
    getpid: 172,
    rt_sigaction: 134,
    prctl: 167,
  },
};
const SIGCHLD = 17n;

describe.each(SECCOMP_ARCHES)("the seccomp filter for %s", (arch) => {
  const prog = seccompProgram(arch);
  const run = (name: string | number, args: bigint[] = [], a = AUDIT_ARCH[arch]) =>
    runSeccomp(prog.bytes, { nr: typeof name === "number" ? name : nr(arch, name), arch: a, args });

  it("golden: the listing, one instruction per line, and the bytes' sha256", async () => {
    await matchGolden(
      "sandbox/seccomp",
      arch.replace("_", "-"),
      "txt",
      `seccomp filter for ${arch}: one BPF instruction per line`,
      [...prog.listing, `sha256 ${sha256Bytes(prog.bytes)}`].join("\n"),
    );
  });

  it("checks the architecture first and kills a syscall from any other", () => {
    expect(prog.listing[0], "the first instruction loads the arch").toMatch(/ld {3}\[4\]/);
    const other = arch === "x86_64" ? AUDIT_ARCH.aarch64 : AUDIT_ARCH.x86_64;
    expect(run("ptrace", [], other), "a foreign arch is killed, not read in the wrong table").toBe(RET.KILL_PROCESS);
    expect(run(ALLOWED_NR[arch].getpid!, [], 0x40000003), "i386 is killed").toBe(RET.KILL_PROCESS);
  });

  it("denies every row of SECCOMP_DENY with its errno, by the pinned syscall numbers", () => {
    for (const row of SECCOMP_DENY) {
      expect(row.nr[arch], `${row.name}: the table's number is the pinned one`).toBe(nr(arch, row.name));
      expect(run(row.name), `${row.name} is denied with ${row.errno}`).toBe(errno(row.errno));
    }
    const must = [
      "ptrace",
      "process_vm_readv",
      "process_vm_writev",
      "io_uring_setup",
      "io_uring_enter",
      "io_uring_register",
      "bpf",
      "perf_event_open",
      "userfaultfd",
      "keyctl",
      "add_key",
      "request_key",
      "mount",
      "umount2",
      "pivot_root",
      "move_mount",
      "open_tree",
      "fsopen",
      "fsmount",
      "setns",
      "unshare",
    ];
    for (const name of must) expect(run(name), `${name} is denied (issue 8's list)`).toBe(errno("EPERM"));
    expect(run("clone3"), "clone3 gets ENOSYS, so libc falls back to clone").toBe(errno("ENOSYS"));
    for (const e of ["EPERM", "ENOSYS", "EPROTONOSUPPORT", "EAFNOSUPPORT"] as const)
      expect(ERRNO[e], `${e} is the headers' number`).toBe(pinned("errno", e));
  });

  it("allows what node, git, sh and the CLIs need", () => {
    for (const name of MUST_ALLOW.filter((n) => n !== "socket"))
      expect(run(ALLOWED_NR[arch][name]!), `${name} is allowed`).toBe(RET.ALLOW);
    expect(
      run(ALLOWED_NR[arch].socket!, [BigInt(pinned("addressFamilies", "AF_UNIX")), 1n, 0n]),
      "socket(AF_UNIX) is allowed",
    ).toBe(RET.ALLOW);
  });

  it("lets socket() and socketpair() open only the allowed families, netlink only as NETLINK_ROUTE", () => {
    const eafnosupport = (RET.ERRNO | pinned("errno", "EAFNOSUPPORT")) >>> 0;
    const eprotonosupport = (RET.ERRNO | pinned("errno", "EPROTONOSUPPORT")) >>> 0;
    for (const call of ["socket", "socketpair"]) {
      for (const f of SOCKET_FAMILIES) {
        expect(f.family, `${f.name}: the table's number is the one the headers define`).toBe(
          pinned("addressFamilies", f.name),
        );
        expect(run(call, [BigInt(f.family), 1n, 0n]), `${call}(${f.name}) is allowed`).toBe(RET.ALLOW);
      }
      for (const f of SOCKET_FAMILIES_DENIED) {
        expect(f.family, `${f.name}: the table's number is the one the headers define`).toBe(
          pinned("addressFamilies", f.name),
        );
        expect(run(call, [BigInt(f.family), 1n, 0n]), `${call}(${f.name}) gets EAFNOSUPPORT: ${f.why}`).toBe(
          eafnosupport,
        );
        expect(
          run(call, [(0xffffffffn << 32n) | BigInt(f.family), 1n, 0n]),
          `${call}(${f.name}) with junk in the upper bits (the kernel reads an int)`,
        ).toBe(eafnosupport);
      }
      expect(run(call, [0n, 1n, 0n]), `${call}(AF_UNSPEC) gets EAFNOSUPPORT`).toBe(eafnosupport);
      expect(
        run(call, [255n, 1n, 0n]),
        `${call} in a family the kernel has yet to grow gets EAFNOSUPPORT: an allowlist`,
      ).toBe(eafnosupport);
      const netlink = BigInt(pinned("addressFamilies", "AF_NETLINK"));
      expect(
        run(call, [netlink, 3n, BigInt(pinned("netlinkProtocols", "NETLINK_ROUTE"))]),
        `${call}(AF_NETLINK, NETLINK_ROUTE) is allowed`,
      ).toBe(RET.ALLOW);
      expect(
        run(call, [netlink, 3n, BigInt(pinned("netlinkProtocols", "NETLINK_KOBJECT_UEVENT"))]),
        `${call}(AF_NETLINK, NETLINK_KOBJECT_UEVENT) gets EPROTONOSUPPORT`,
      ).toBe(eprotonosupport);
    }
    expect(SOCKET_FAMILIES.map((f) => f.name).sort(), "the allowlist is exactly Flatpak's four").toEqual([
      "AF_INET",
      "AF_INET6",
      "AF_NETLINK",
      "AF_UNIX",
    ]);
  });

  it("denies TIOCSTI and TIOCLINUX whatever the request's upper 32 bits hold, and allows other ioctls", () => {
    expect(IOCTL_DENY.map((r) => r.name).sort(), "the pinned requests").toEqual(["TIOCLINUX", "TIOCSTI"]);
    for (const r of IOCTL_DENY) {
      // The headers' request, not the table's.
      const request = BigInt(pinned("ioctls", r.name));
      expect(run("ioctl", [0n, request]), `${r.name} is denied`).toBe(errno("EPERM"));
      expect(
        run("ioctl", [0n, (0xdeadbeefn << 32n) | request]),
        `${r.name} with junk in the upper bits (the kernel reads an unsigned int)`,
      ).toBe(errno("EPERM"));
    }
    expect(run("ioctl", [0n, 0x5401n]), "TCGETS is allowed").toBe(RET.ALLOW);
  });

  it("denies clone with any namespace flag, and allows fork and threads", () => {
    // The headers' values, not the table's: a wrong flag in the table is a namespace let through.
    const headers = Object.keys(baseline.cloneFlags).filter((k) => k !== "readWith");
    expect(CLONE_NAMESPACE_FLAGS.map((f) => f.name).sort(), "every CLONE_NEW* of linux/sched.h").toEqual(
      headers.sort(),
    );
    for (const name of headers)
      expect(run("clone", [BigInt(pinned("cloneFlags", name)) | SIGCHLD]), `clone with ${name} is denied`).toBe(
        errno("EPERM"),
      );
    expect(run("clone", [SIGCHLD]), "fork is allowed").toBe(RET.ALLOW);
    expect(run("clone", [0x3d0f00n]), "pthread_create's flags are allowed").toBe(RET.ALLOW);
  });

  if (arch === "x86_64") {
    it("kills x32 syscalls, whose numbers would dodge the table", () => {
      expect(run(0x40000000 + nr(arch, "ptrace")), "x32 ptrace").toBe(RET.KILL_PROCESS);
      expect(run(0x40000000 + ALLOWED_NR.x86_64.getpid!), "any x32 syscall").toBe(RET.KILL_PROCESS);
    });
  }
});

describe("architectures", () => {
  it("node's x64 and arm64 map to a filter; anything else has none", () => {
    expect([seccompArchOf("x64"), seccompArchOf("arm64"), seccompArchOf("ia32"), seccompArchOf("riscv64")]).toEqual([
      "x86_64",
      "aarch64",
      undefined,
      undefined,
    ]);
  });
  it("every row says why, and no syscall is listed twice", () => {
    expect(SECCOMP_DENY.every((r) => r.why.length > 10)).toBe(true);
    expect(new Set(SECCOMP_DENY.map((r) => r.name)).size).toBe(SECCOMP_DENY.length);
  });
});
