// Why bwrap failed on this host, and what the user does about it: a pure table from what the probe
// saw (bwrap's line at the first step it failed, its version, the user-namespace sysctls, whether
// bwrap is setuid, whether the host is itself a container) to a named cause and its fix. The first
// row that matches decides. A failure no row names still refuses, with bwrap's line, as unknown.

/** What the probe saw when bwrap failed, and the host facts that tell one cause from another. */
export interface ProbeSeen {
  /** The first probe step bwrap failed at (probe-plan.ts), and bwrap's first stderr line for it. */
  step: string;
  line: string;
  /** `bwrap --version`'s output ("bubblewrap 0.8.0"), or null when it gave none. */
  bwrapVersion: string | null;
  /** Each sysctl's value, or null where the kernel has no such file. */
  sysctls: {
    "kernel.apparmor_restrict_unprivileged_userns": number | null;
    "kernel.unprivileged_userns_clone": number | null;
    "user.max_user_namespaces": number | null;
  };
  bwrapSetuid: boolean;
  /** The host is a container itself (/.dockerenv, /run/.containerenv, or $container). */
  inContainer: boolean;
}

export type DiagnosisId =
  | "proc-masked"
  | "bwrap-too-old"
  | "apparmor-userns"
  | "max-user-namespaces"
  | "userns-clone-disabled"
  | "container-seccomp"
  | "no-userns-kernel"
  | "setuid-bwrap";

export interface DiagnosisRow {
  id: DiagnosisId;
  cause: string;
  fix: string;
  /** Why these signs mean this cause, and where they were seen. */
  why: string;
  matches: (s: ProbeSeen) => boolean;
}

export type Diagnosis = { kind: "known"; row: DiagnosisRow } | { kind: "unknown" };

/** The oldest bwrap with --disable-userns and --assert-userns-disabled, which every session gets. */
export const MIN_BWRAP: readonly [number, number, number] = [0, 8, 0];

/** [major, minor, patch] of `bubblewrap x.y.z`, or null when the text names no version. */
export function bwrapVersionOf(text: string | null): [number, number, number] | null {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text ?? "");
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

const older = (v: readonly number[], than: readonly number[]) => {
  for (let i = 0; i < 3; i++) if (v[i] !== than[i]) return v[i]! < than[i]!;
  return false;
};

const NO_PERMISSION =
  /No permissions to creat(e|ing) new namespace|Creating new namespace failed: Operation not permitted/;

export const DIAGNOSES: readonly DiagnosisRow[] = [
  {
    id: "proc-masked",
    cause:
      "/proc is masked: the container runtime hides parts of it, and the kernel refuses a new procfs where one is partly hidden",
    fix: "run the container with /proc unmasked (podman --security-opt unmask=ALL, docker --security-opt systempaths=unconfined), or run sessions on the host",
    why: "bwrap's --proc fails with EPERM when every procfs mounted in the namespace has paths covered (kernel mnt_already_visible); Docker and podman cover /proc/kcore, /proc/acpi and others. Seen here with a tmpfs over /proc/acpi and /dev/null over /proc/kallsyms, and in containers/bubblewrap#284",
    // safety: diagnose-proc-masked
    matches: (s) => /Can't mount proc on \/newroot\/proc/.test(s.line),
  },
  {
    id: "bwrap-too-old",
    cause: `bubblewrap is older than ${MIN_BWRAP.join(".")}, so it has no --disable-userns`,
    fix: `install bubblewrap ${MIN_BWRAP.join(".")} or newer (Debian 12 and Ubuntu 24.04 ship it; Debian 11 has 0.4.1: take bookworm's package)`,
    why: "every session runs with --disable-userns and --assert-userns-disabled (bwrap 0.8.0, containers/bubblewrap#488); an older bwrap says `Unknown option` for them, and there is no weaker sandbox to fall back to",
    // safety: diagnose-bwrap-too-old
    matches: (s) => {
      const v = bwrapVersionOf(s.bwrapVersion);
      return (
        /Unknown option --(disable-userns|assert-userns-disabled)/.test(s.line) || (v !== null && older(v, MIN_BWRAP))
      );
    },
  },
  {
    id: "setuid-bwrap",
    cause: "bwrap is installed setuid root, and in that mode it cannot apply --disable-userns",
    fix: "install bubblewrap without the setuid bit (chmod u-s on it) on a kernel that allows unprivileged user namespaces",
    why: "a setuid bwrap runs --disable-userns as the caller, who may not open /proc/sys/user/max_user_namespaces; seen here with a setuid copy of bwrap 0.8.0 (`cannot open /proc/sys/user/max_user_namespaces: Permission denied`)",
    // safety: diagnose-setuid-bwrap
    matches: (s) => s.bwrapSetuid && /max_user_namespaces: Permission denied|setuid/.test(s.line),
  },
  {
    id: "apparmor-userns",
    cause: "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)",
    fix: "load an AppArmor profile that lets bwrap use them (on Ubuntu 24.04 the apparmor-profiles package's bwrap-userns-restrict, copied to /etc/apparmor.d and loaded with apparmor_parser -r), or set kernel.apparmor_restrict_unprivileged_userns=0",
    why: "Ubuntu 23.10 and later let the namespace be made, then strip its capabilities: bwrap fails at `setting up uid map: Permission denied`, or with --unshare-net at `loopback: Failed RTM_NEWADDR` (DevToys#1373, ai-jail#34, oh-my-agentic-coder#2)",
    // safety: diagnose-apparmor-userns
    matches: (s) =>
      s.sysctls["kernel.apparmor_restrict_unprivileged_userns"] === 1 &&
      /setting up uid map: Permission denied|Failed RTM_NEWADDR|Permission denied|Operation not permitted/.test(s.line),
  },
  {
    id: "max-user-namespaces",
    cause:
      "no user namespace may be made: user.max_user_namespaces is 0 or used up, or the caller already runs in a sandbox that disables them",
    fix: "set user.max_user_namespaces to a positive number (sysctl -w user.max_user_namespaces=15000, and in /etc/sysctl.d/ to keep it), or run the host outside a sandbox made with --disable-userns",
    why: "bwrap reports ENOSPC from unshare as `nesting depth or /proc/sys/user/max_*_namespaces exceeded`; seen here with the limit set to 0 in the caller's user namespace. RHEL 7.4 set it to 0 by default (containers/bubblewrap#215)",
    // safety: diagnose-max-user-namespaces
    matches: (s) => /max_\*_namespaces exceeded|\(ENOSPC\)/.test(s.line) || s.sysctls["user.max_user_namespaces"] === 0,
  },
  {
    id: "userns-clone-disabled",
    cause: "the kernel forbids unprivileged user namespaces (kernel.unprivileged_userns_clone=0)",
    fix: "set kernel.unprivileged_userns_clone=1 (sysctl -w, and in /etc/sysctl.d/ to keep it)",
    why: "Debian 10 and older kernels carry a patch with this switch, off by default before Debian 11; bwrap then gets EPERM from unshare and says `No permissions to create new namespace` (binpash/try#129)",
    // safety: diagnose-userns-clone-disabled
    matches: (s) => s.sysctls["kernel.unprivileged_userns_clone"] === 0 && NO_PERMISSION.test(s.line),
  },
  {
    id: "container-seccomp",
    cause: "the container's seccomp profile blocks the namespace system calls (unshare, clone with CLONE_NEWUSER)",
    fix: "run the container with a seccomp profile that allows them (--security-opt seccomp=unconfined, or a profile permitting unshare, clone, clone3, mount, umount2 and pivot_root), or run sessions on the host",
    why: "Docker's default profile answers unshare(CLONE_NEWUSER) with EPERM, which bwrap reports as `No permissions to create new namespace` (containers/bubblewrap#505); seen here with a seccomp filter that does the same, with every user-namespace sysctl allowing it",
    // safety: diagnose-container-seccomp
    matches: (s) => s.inContainer && NO_PERMISSION.test(s.line),
  },
  {
    id: "no-userns-kernel",
    cause: "the kernel has no user namespaces",
    fix: "run on a kernel built with CONFIG_USER_NS=y",
    why: "bwrap reports EINVAL from unshare as `the kernel does not support user namespaces` (containers/bubblewrap#139)",
    // safety: diagnose-no-userns-kernel
    matches: (s) => /kernel does not support user namespaces/.test(s.line),
  },
];

/** The first row that names the failure, or unknown. */
export function diagnoseProbe(s: ProbeSeen, rows: readonly DiagnosisRow[] = DIAGNOSES): Diagnosis {
  const row = rows.find((r) => r.matches(s));
  return row === undefined ? { kind: "unknown" } : { kind: "known", row };
}

/** The refusal's one line: `<cause>: <fix>`, then what bwrap said at which step. */
export function diagnosisLine(d: Diagnosis, s: ProbeSeen): string {
  const said = `bwrap cannot apply ${s.step} here: ${s.line}`;
  if (d.kind === "unknown") return `an unknown cause: ${said} (no row of the diagnosis table names it)`;
  return `${d.row.cause}: ${d.row.fix} (${said})`;
}
