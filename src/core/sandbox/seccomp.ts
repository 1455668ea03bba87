import { NEXT, assemble, encode, listing, type Item } from "./bpf.ts";

/** The architectures the filter is written for; any other host refuses sandbox-unavailable. */
export const SECCOMP_ARCHES = ["x86_64", "aarch64"] as const;
export type SeccompArch = (typeof SECCOMP_ARCHES)[number];

/** AUDIT_ARCH_* (linux/audit.h): what seccomp_data.arch holds for each. */
export const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** seccomp return actions (linux/seccomp.h). */
export const RET = { KILL_PROCESS: 0x80000000, ERRNO: 0x00050000, ALLOW: 0x7fff0000 } as const;
export const ERRNO = { EPERM: 1, ENOSYS: 38, EPROTONOSUPPORT: 93, EAFNOSUPPORT: 97 } as const;

/** x32 syscalls on x86_64 carry this bit; the table's numbers are the 64-bit ABI's. */
const X32_SYSCALL_BIT = 0x40000000;

/** seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i; the low 32 bits first on little-endian. */
const OFF = { nr: 0, arch: 4, argLow: (i: number) => 16 + 8 * i } as const;

type Nr = Readonly<Record<SeccompArch, number>>;
type DenyRow = { name: string; nr: Nr; errno: keyof typeof ERRNO; why: string };

const both = (n: number): Nr => ({ x86_64: n, aarch64: n });

/**
 * Syscalls a session never needs, each denied with its errno. Numbers: x86_64 from
 * asm/unistd_64.h, aarch64 from asm-generic/unistd.h (baselines/syscalls.json pins both).
 */
export const SECCOMP_DENY: readonly DenyRow[] = [
  {
    name: "ptrace",
    nr: { x86_64: 101, aarch64: 117 },
    errno: "EPERM",
    why: "tracing pid 1 (the runner, which holds the capability) or another turn",
  }, // safety: seccomp-ptrace
  {
    name: "process_vm_readv",
    nr: { x86_64: 310, aarch64: 270 },
    errno: "EPERM",
    why: "reading another process's memory without ptrace",
  }, // safety: seccomp-process-vm-readv
  {
    name: "process_vm_writev",
    nr: { x86_64: 311, aarch64: 271 },
    errno: "EPERM",
    why: "writing another process's memory without ptrace",
  }, // safety: seccomp-process-vm-writev
  { name: "io_uring_setup", nr: both(425), errno: "EPERM", why: "io_uring runs operations this filter never sees" }, // safety: seccomp-io-uring-setup
  { name: "io_uring_enter", nr: both(426), errno: "EPERM", why: "io_uring runs operations this filter never sees" }, // safety: seccomp-io-uring-enter
  { name: "io_uring_register", nr: both(427), errno: "EPERM", why: "io_uring runs operations this filter never sees" }, // safety: seccomp-io-uring-register
  { name: "bpf", nr: { x86_64: 321, aarch64: 280 }, errno: "EPERM", why: "loading programs into the kernel" }, // safety: seccomp-bpf
  {
    name: "perf_event_open",
    nr: { x86_64: 298, aarch64: 241 },
    errno: "EPERM",
    why: "observing the kernel and other processes; a frequent escalation surface",
  }, // safety: seccomp-perf-event-open
  {
    name: "userfaultfd",
    nr: { x86_64: 323, aarch64: 282 },
    errno: "EPERM",
    why: "stalling kernel copies, the usual primitive for exploiting races",
  }, // safety: seccomp-userfaultfd
  {
    name: "keyctl",
    nr: { x86_64: 250, aarch64: 219 },
    errno: "EPERM",
    why: "the kernel keyrings, which reach beyond the sandbox",
  }, // safety: seccomp-keyctl
  {
    name: "add_key",
    nr: { x86_64: 248, aarch64: 217 },
    errno: "EPERM",
    why: "the kernel keyrings, which reach beyond the sandbox",
  }, // safety: seccomp-add-key
  {
    name: "request_key",
    nr: { x86_64: 249, aarch64: 218 },
    errno: "EPERM",
    why: "the kernel keyrings, which reach beyond the sandbox",
  }, // safety: seccomp-request-key
  {
    name: "mount",
    nr: { x86_64: 165, aarch64: 40 },
    errno: "EPERM",
    why: "remounting a read-only bind read-write, or covering one",
  }, // safety: seccomp-mount
  {
    name: "umount2",
    nr: { x86_64: 166, aarch64: 39 },
    errno: "EPERM",
    why: "unmounting the read-only bundle/ and session.json to reach what lies under",
  }, // safety: seccomp-umount2
  { name: "pivot_root", nr: { x86_64: 155, aarch64: 41 }, errno: "EPERM", why: "detaching the sandbox's root" }, // safety: seccomp-pivot-root
  { name: "move_mount", nr: both(429), errno: "EPERM", why: "the new mount API: moving a bind" }, // safety: seccomp-move-mount
  {
    name: "open_tree",
    nr: both(428),
    errno: "EPERM",
    why: "the new mount API: cloning a bind to reattach it writable",
  }, // safety: seccomp-open-tree
  { name: "open_tree_attr", nr: both(467), errno: "EPERM", why: "the new mount API: open_tree with attributes" }, // safety: seccomp-open-tree-attr
  { name: "fsopen", nr: both(430), errno: "EPERM", why: "the new mount API: a new filesystem context" }, // safety: seccomp-fsopen
  { name: "fsconfig", nr: both(431), errno: "EPERM", why: "the new mount API: configuring a filesystem context" }, // safety: seccomp-fsconfig
  { name: "fsmount", nr: both(432), errno: "EPERM", why: "the new mount API: mounting a filesystem context" }, // safety: seccomp-fsmount
  { name: "fspick", nr: both(433), errno: "EPERM", why: "the new mount API: reconfiguring a mounted filesystem" }, // safety: seccomp-fspick
  { name: "mount_setattr", nr: both(442), errno: "EPERM", why: "clearing a bind's read-only flag" }, // safety: seccomp-mount-setattr
  {
    name: "setns",
    nr: { x86_64: 308, aarch64: 268 },
    errno: "EPERM",
    why: "joining another namespace through an inherited descriptor",
  }, // safety: seccomp-setns
  {
    name: "unshare",
    nr: { x86_64: 272, aarch64: 97 },
    errno: "EPERM",
    why: "new namespaces, in which a pivot_root hides the read-only binds",
  }, // safety: seccomp-unshare
  {
    name: "clone3",
    nr: both(435),
    errno: "ENOSYS",
    why: "its flags live in memory this filter cannot read; ENOSYS makes libc fall back to clone",
  }, // safety: seccomp-clone3
  {
    name: "open_by_handle_at",
    nr: { x86_64: 304, aarch64: 265 },
    errno: "EPERM",
    why: "opening files by handle, past every bind (the shocker escape)",
  }, // safety: seccomp-open-by-handle-at
  {
    name: "name_to_handle_at",
    nr: { x86_64: 303, aarch64: 264 },
    errno: "EPERM",
    why: "minting the handles open_by_handle_at takes",
  }, // safety: seccomp-name-to-handle-at
  { name: "kexec_load", nr: { x86_64: 246, aarch64: 104 }, errno: "EPERM", why: "replacing the running kernel" }, // safety: seccomp-kexec-load
  { name: "kexec_file_load", nr: { x86_64: 320, aarch64: 294 }, errno: "EPERM", why: "replacing the running kernel" }, // safety: seccomp-kexec-file-load
  { name: "init_module", nr: { x86_64: 175, aarch64: 105 }, errno: "EPERM", why: "loading kernel modules" }, // safety: seccomp-init-module
  { name: "finit_module", nr: { x86_64: 313, aarch64: 273 }, errno: "EPERM", why: "loading kernel modules" }, // safety: seccomp-finit-module
  { name: "delete_module", nr: { x86_64: 176, aarch64: 106 }, errno: "EPERM", why: "unloading kernel modules" }, // safety: seccomp-delete-module
];

/** ioctl requests denied on any descriptor (asm-generic/ioctls.h; the same on both arches). */
export const IOCTL_DENY: readonly { name: string; request: number; why: string }[] = [
  { name: "TIOCSTI", request: 0x5412, why: "pushing keystrokes into a terminal's input, run by the shell outside" }, // safety: seccomp-ioctl-tiocsti
  { name: "TIOCLINUX", request: 0x541c, why: "the virtual console's selection and input, run outside" }, // safety: seccomp-ioctl-tioclinux
];

/** clone flags that make a new namespace (linux/sched.h); clone with any of them is denied. */
export const CLONE_NAMESPACE_FLAGS: readonly { name: string; flag: number }[] = [
  { name: "CLONE_NEWTIME", flag: 0x00000080 },
  { name: "CLONE_NEWNS", flag: 0x00020000 },
  { name: "CLONE_NEWCGROUP", flag: 0x02000000 }, // safety: seccomp-clone-flag-value
  { name: "CLONE_NEWUTS", flag: 0x04000000 },
  { name: "CLONE_NEWIPC", flag: 0x08000000 },
  { name: "CLONE_NEWUSER", flag: 0x10000000 },
  { name: "CLONE_NEWPID", flag: 0x20000000 },
  { name: "CLONE_NEWNET", flag: 0x40000000 },
];

/**
 * The address families a session may open sockets in (linux/socket.h); socket() and socketpair()
 * in any other family get EAFNOSUPPORT, which libraries take as "not built in" and carry on.
 * Flatpak's allowlist, without its optional CAN and Bluetooth. An allowlist, not a list of the
 * bad ones: the next family the kernel grows is denied too.
 */
export const SOCKET_FAMILIES: readonly { name: string; family: number; netlinkRouteOnly?: true; why: string }[] = [
  // safety: seccomp-socket-family-added
  { name: "AF_UNIX", family: 1, why: "the broker, launch, tool and model sockets, and node's own IPC" },
  { name: "AF_INET", family: 2, why: "the model port on 127.0.0.1, in the session's own network namespace" },
  { name: "AF_INET6", family: 10, why: "the same over ::1; libc and node probe it" },
  {
    name: "AF_NETLINK",
    family: 16,
    netlinkRouteOnly: true,
    why: "NETLINK_ROUTE of the session's own network namespace: getifaddrs, node's os.networkInterfaces()",
  }, // safety: seccomp-netlink-any-protocol
];

/**
 * Families the default denial keeps out, named for a reviewer (and each probed by the contract
 * tier's interpreter); the filter itself lists only SOCKET_FAMILIES.
 */
export const SOCKET_FAMILIES_DENIED: readonly { name: string; family: number; why: string }[] = [
  {
    name: "AF_VSOCK",
    family: 40,
    why: "vsock ports are not per network namespace: a bind inside collides with the host's, and a connect reaches the hypervisor's services",
  },
  { name: "AF_PACKET", family: 17, why: "raw link-layer frames" },
  { name: "AF_KEY", family: 15, why: "the kernel's IPsec key management" },
  { name: "AF_ALG", family: 38, why: "the kernel's crypto API, a frequent exploit surface" },
  { name: "AF_XDP", family: 44, why: "express data path sockets: packet buffers shared with the kernel" },
  { name: "AF_TIPC", family: 30, why: "a cluster transport the host may have loaded" },
  { name: "AF_RDS", family: 21, why: "a transport with a history of kernel bugs" },
  { name: "AF_BLUETOOTH", family: 31, why: "the host's radios" },
  { name: "AF_CAN", family: 29, why: "the host's CAN buses" },
];

/** NETLINK_ROUTE (linux/netlink.h): the one netlink protocol a session may open. */
const NETLINK_ROUTE = 0;

/** Syscall numbers the argument checks need. */
const ARG_SYSCALLS = {
  ioctl: { x86_64: 16, aarch64: 29 },
  clone: { x86_64: 56, aarch64: 220 },
  socket: { x86_64: 41, aarch64: 198 },
  socketpair: { x86_64: 53, aarch64: 199 },
} as const;

const errnoRet = (e: keyof typeof ERRNO) => (RET.ERRNO | ERRNO[e]) >>> 0;

/** What the filter denies. Sessions always get SECCOMP_RULES; the live tier's controls drop a rule on purpose. */
export interface SeccompRules {
  deny: readonly DenyRow[];
  ioctl: typeof IOCTL_DENY;
  cloneNamespaces: boolean;
  /** x86_64 only: kill any x32 syscall. */
  x32: boolean;
  /** The families socket() and socketpair() may use; null: any (a control only). */
  socketFamilies: typeof SOCKET_FAMILIES | null;
}

export const SECCOMP_RULES: SeccompRules = {
  deny: SECCOMP_DENY,
  ioctl: IOCTL_DENY,
  cloneNamespaces: true,
  x32: true,
  socketFamilies: SOCKET_FAMILIES,
};

/**
 * The filter for one architecture: the arch first (a mismatch kills, so a syscall number can never
 * be read in the wrong table), x32 killed on x86_64, then one check per denied syscall, then the
 * argument checks for ioctl and clone, then allow. Pure: the same arch gives the same bytes.
 */
export function seccompItems(arch: SeccompArch, rules: SeccompRules = SECCOMP_RULES): Item[] {
  const items: Item[] = [
    { op: "ld", offset: OFF.arch, note: "arch" },
    { op: "jeq", k: AUDIT_ARCH[arch], jt: "nr", jf: "kill", note: `arch is AUDIT_ARCH_${arch.toUpperCase()}` }, // safety: seccomp-no-arch-check
    { label: "nr" },
    { op: "ld", offset: OFF.nr, note: "syscall number" },
  ];
  if (arch === "x86_64" && rules.x32)
    items.push({ op: "jge", k: X32_SYSCALL_BIT, jt: "kill", jf: NEXT, note: "x32 syscall: kill" }); // safety: seccomp-x32-open
  for (const row of rules.deny) {
    items.push({
      op: "jeq",
      k: row.nr[arch],
      jt: `deny-${row.errno}`,
      jf: NEXT,
      note: `deny ${row.name} ${row.errno}: ${row.why}`,
    });
  }
  items.push(
    { op: "jeq", k: ARG_SYSCALLS.ioctl[arch], jt: "ioctl", jf: NEXT, note: "ioctl: check the request" },
    { op: "jeq", k: ARG_SYSCALLS.clone[arch], jt: "clone", jf: NEXT, note: "clone: check the flags" },
    ...(rules.socketFamilies === null
      ? []
      : [
          // safety: seccomp-socket-any-family
          { op: "jeq", k: ARG_SYSCALLS.socket[arch], jt: "socket", jf: NEXT, note: "socket: check the family" } as Item,
          {
            op: "jeq",
            k: ARG_SYSCALLS.socketpair[arch],
            jt: "socket",
            jf: NEXT,
            note: "socketpair: check the family",
          } as Item,
        ]),
    { op: "ret", k: RET.ALLOW, note: "allow" },
    { label: "ioctl" },
    // The kernel reads ioctl's request as an unsigned int, so only the low 32 bits count.
    { op: "ld", offset: OFF.argLow(1), note: "ioctl request (low 32 bits of args[1])" },
    ...rules.ioctl.map(
      (r): Item => ({
        op: "jeq",
        k: r.request,
        jt: "deny-EPERM",
        jf: NEXT,
        note: `deny ioctl ${r.name} EPERM: ${r.why}`,
      }),
    ),
    { op: "ret", k: RET.ALLOW, note: "allow other ioctl requests" },
    { label: "clone" },
    // clone() takes its flags from the low 32 bits of args[0] on both arches.
    { op: "ld", offset: OFF.argLow(0), note: "clone flags (low 32 bits of args[0])" },
    {
      op: "jset",
      k: rules.cloneNamespaces ? CLONE_NAMESPACE_FLAGS.reduce((m, f) => m | f.flag, 0) >>> 0 : 0, // safety: seccomp-clone-namespaces
      jt: "deny-EPERM",
      jf: NEXT,
      note: `deny clone EPERM with any of ${CLONE_NAMESPACE_FLAGS.map((f) => f.name).join(" ")}`,
    },
    { op: "ret", k: RET.ALLOW, note: "allow clone without namespace flags (fork, threads)" },
    ...socketItems(rules.socketFamilies),
    { label: "deny-EPERM" },
    { op: "ret", k: errnoRet("EPERM"), note: "errno EPERM" },
    { label: "deny-EAFNOSUPPORT" },
    { op: "ret", k: errnoRet("EAFNOSUPPORT"), note: "errno EAFNOSUPPORT" },
    { label: "deny-EPROTONOSUPPORT" },
    { op: "ret", k: errnoRet("EPROTONOSUPPORT"), note: "errno EPROTONOSUPPORT" },
    { label: "deny-ENOSYS" },
    { op: "ret", k: errnoRet("ENOSYS"), note: "errno ENOSYS" },
    { label: "kill" },
    { op: "ret", k: RET.KILL_PROCESS, note: "kill the process" },
  );
  return items;
}

/** socket() and socketpair(): the family (args[0]) against the allowlist, netlink's protocol (args[2]) against NETLINK_ROUTE. */
function socketItems(families: typeof SOCKET_FAMILIES | null): Item[] {
  if (families === null) return [];
  return [
    { label: "socket" },
    // Both take the family as an int: the low 32 bits of args[0].
    { op: "ld", offset: OFF.argLow(0), note: "socket family (low 32 bits of args[0])" },
    ...families.map(
      (f): Item => ({
        op: "jeq",
        k: f.family,
        jt: f.netlinkRouteOnly ? "netlink" : "socket-allow",
        jf: NEXT,
        note: `${f.name}: ${f.why}`,
      }),
    ),
    { op: "ret", k: errnoRet("EAFNOSUPPORT"), note: "any other family: EAFNOSUPPORT" },
    { label: "netlink" },
    { op: "ld", offset: OFF.argLow(2), note: "netlink protocol (low 32 bits of args[2])" },
    { op: "jeq", k: NETLINK_ROUTE, jt: "socket-allow", jf: "deny-EPROTONOSUPPORT", note: "NETLINK_ROUTE only" },
    { label: "socket-allow" },
    { op: "ret", k: RET.ALLOW, note: "allow a socket of an allowed family" },
  ];
}

export interface SeccompProgram {
  arch: SeccompArch;
  /** struct sock_filter[], as bwrap --seccomp reads it from its descriptor. */
  bytes: Uint8Array;
  /** One instruction per line, for the golden and for a reviewer. */
  listing: string[];
}

export function seccompProgram(arch: SeccompArch, rules: SeccompRules = SECCOMP_RULES): SeccompProgram {
  const program = assemble(seccompItems(arch, rules));
  return { arch, bytes: encode(program), listing: listing(program) };
}

/** node's process.arch to the filter's architecture; undefined for one the filter is not written for. */
export function seccompArchOf(nodeArch: string): SeccompArch | undefined {
  return nodeArch === "x64" ? "x86_64" : nodeArch === "arm64" ? "aarch64" : undefined;
}
