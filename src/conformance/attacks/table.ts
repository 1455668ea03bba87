// The live attack table: what a turn's shell tries from inside a session the shipped launcher
// started, the layers that stop each attempt, and how the host tells whether it got through. Each
// row runs as root and as an unprivileged uid; its control removes every layer and must get
// through; each "alone" arm removes all layers but one, which must still stop it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SESSION_LIMITS } from "../../core/sandbox/limits.ts";
import { ETC_FILES } from "../../core/sandbox/etc.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { canaryPattern } from "../traps/canary.ts";
import { gitRows } from "./git-rows.ts";
import { CAPABILITY_LABEL } from "./world.ts";
import type { AttackWorld, Identity } from "./world.ts";

/**
 * What an arm left: the turn's reply (its stdout), the session's exit, whether the runner replied at
 * all, and what the row's `during` saw while the session still ran.
 */
export type Outcome = {
  out: string;
  status: number | null;
  signal: string | null;
  stderr: string;
  replied: boolean;
  during?: unknown;
};

export interface AttackRow {
  id: string;
  klass: string;
  what: string;
  /** The protections that stop it, as layer ids (layers.ts); per identity where they differ. */
  layers: readonly string[] | ((id: Identity) => readonly string[]);
  /** Identities whose control gets through; where another has none, the row says why in `note`. */
  controlFor?: readonly Identity[];
  note?: string;
  script: (w: AttackWorld) => string;
  /** True when the attack got through: read off the output and the host, never off an exit code alone. */
  through: (r: Outcome, w: AttackWorld) => boolean;
  /** What the control removes, where it is more than the row's layers (the io_uring rows: libuv aborts when setup passes and enter does not). */
  controlRemoves?: readonly string[];
  /**
   * The script runs in the runner's place (an argv edit in every arm) and writes to stderr: for an
   * attack on what pid 1 holds that no turn can reach, each turn being in a session of its own.
   */
  asRunner?: true;
  /** The arm's launcher runs under a terminal of its own (TIOCSTI: the host's terminal is the target). */
  terminal?: true;
  /** How long one run may take, where more than the default 30 s (memory touched page by page). */
  timeoutMs?: number;
  /** The identities the row runs for, where not both; the other's Limit is in `note`. */
  only?: readonly Identity[];
  /** Looks at the host after the turn, while the session still runs (its sockets still served); the answer is the outcome's `during`. */
  during?: (w: AttackWorld) => unknown;
  /** Changes the world before the sandbox is planned (git-rows.ts) or reads it; what it returns goes to teardown. */
  setup?: (w: AttackWorld) => unknown;
  /** Puts back what the attack (or a control that got through) changed on the host. */
  teardown?: (w: AttackWorld, saved: unknown) => void;
}

const SYSCALLS = JSON.parse(readFileSync(join(REPO_ROOT, "baselines/syscalls.json"), "utf8")) as Record<
  string,
  Record<string, number>
>;
const ARCH = process.arch === "arm64" ? "aarch64" : "x86_64";
const nr = (name: string): number => {
  const n = SYSCALLS[ARCH]![name];
  if (n === undefined) throw new Error(`baselines/syscalls.json: no ${ARCH} ${name}`);
  return n;
};

/** A perl one-liner printing `ERR <errno>` or `OK <ret>` for one raw syscall. */
/** Perl wants writable buffers for string arguments, so each string literal becomes a variable first. */
const syscall = (name: string, args: string) => {
  const strings: string[] = [];
  const list = args.replace(/"[^"]*"/g, (lit) => `$s${strings.push(lit) - 1}`);
  const decl = strings.map((lit, i) => `my $s${i} = ${lit}; `).join("");
  return `perl -e '${decl}my $r = syscall(${nr(name)}${list === "" ? "" : `, ${list}`}); print(($r < 0 ? "ERR " . ($! + 0) : "OK $r"), "\\n")'`;
};
const EPERM = /^ERR 1$/m;
const MiB = 1048576;
/** More than a process may map (dataBytes), less than the session's whole (memoryBytes). */
const MEMORY_ONE = SESSION_LIMITS.dataBytes.value + 512 * MiB;
/** Past the session's whole (memoryBytes), in MiB: one memfd of it. */
const MEMFD_MIB = (SESSION_LIMITS.memoryBytes.value + 512 * MiB) / MiB;
/** A share under dataBytes; three of them pass memoryBytes. */
const MEMORY_SHARE = Math.ceil((SESSION_LIMITS.memoryBytes.value + 256 * MiB) / 3);
/** The names directly under /etc that the allowlist's entries make. */
const ETC_TOP = new Set(ETC_FILES.map((e) => e.path.split("/")[2]!));
const reachedKernel = (r: Outcome) => /^(OK|ERR) /m.test(r.out) && !EPERM.test(r.out);
const read = (p: string) => (existsSync(p) && !isDir(p) ? readFileSync(p, "utf8") : null);

/** A syscall that must never reach the kernel: the filter answers EPERM before the kernel looks at its arguments. */
function probe(name: string, args: string, why: string, extra: Partial<AttackRow> = {}): AttackRow {
  return {
    id: `seccomp-${name.replaceAll("_", "-")}`,
    klass: "seccomp",
    what: `${name} never reaches the kernel: ${why}`,
    layers: [`seccomp:${name}`],
    script: () => syscall(name, args),
    through: reachedKernel,
    ...extra,
  };
}

/** A syscall the kernel refuses without capabilities anyway: the filter's row shows alone only with the capabilities back. */
function capProbe(name: string, args: string, why: string): AttackRow {
  return probe(name, args, why, {
    layers: asRootAlso("session-uid", ["cap-drop", `seccomp:${name}`, "disable-userns"]),
    controlFor: ["root"],
    note: "a user caller has no capabilities in bwrap's namespace to begin with, so its kernel refuses this too; --disable-userns puts the session in a user namespace below the one owning its mounts, which refuses it as well; a root caller's session, dropped to its own uid, is in the user caller's place",
  });
}

/**
 * A root caller's layers add the drop to the session's uid where it stops the attack by itself:
 * an unprivileged bwrap gives its sandbox no capabilities, and kuid 65534 owns nothing of root's.
 */
function asRootAlso(extra: string, layers: readonly string[]): (id: Identity) => readonly string[] {
  return (id) => (id === "root" ? [...layers, extra] : layers);
}

/** A sysctl file as the host sees it; written back after a control that got through. */
const hostSysctl = (name: string) => `/proc/sys/${name.replaceAll(".", "/")}`;
const sysctlRow = (id: string, name: string, layers: readonly string[], why: string): AttackRow => ({
  id,
  klass: "host kernel",
  what: `${name} on the host cannot be written from a session: ${why}`,
  layers: (i) => (i === "root" ? [...layers, "session-uid"] : layers),
  controlFor: ["root"],
  note: "a user caller's session is its own unprivileged kuid, which owns no sysctl",
  setup: () => readFileSync(hostSysctl(name), "utf8"),
  script: (w) => `printf '%s\n' '${sysctlValue(name, w)}' > ${hostSysctl(name)} && echo WROTE; cat ${hostSysctl(name)}`,
  through: (_r, w) => readFileSync(hostSysctl(name), "utf8").trim() === sysctlValue(name, w),
  teardown: (_w, saved) => {
    if (typeof saved === "string" && readFileSync(hostSysctl(name), "utf8") !== saved)
      writeFileSync(hostSysctl(name), saved);
  },
});
/** A value for the sysctl that the host would never hold by itself, and that harms nothing while it does. */
const sysctlValue = (name: string, w: AttackWorld) =>
  name === "kernel.domainname" ? `mosaic-attack-${w.identity}` : "9731";

/** Whether another local uid (neither the caller nor the session) can connect to a socket: spawned as that uid. */
export const OTHER_UID = 65533;
function otherUidConnects(path: string): boolean {
  const r = spawnSync(
    "setpriv",
    [
      `--reuid=${OTHER_UID}`,
      `--regid=${OTHER_UID}`,
      "--clear-groups",
      "--",
      "perl",
      "-MIO::Socket::UNIX",
      "-e",
      `IO::Socket::UNIX->new(Peer => $ARGV[0]) or do { print "NO $!\n"; exit 1 }; print "CONNECTED\n"`,
      path,
    ],
    { encoding: "utf8" },
  );
  return r.status === 0 && r.stdout.includes("CONNECTED");
}

const WRITE_PROTECTED = (path: string, body: string) => (w: AttackWorld) =>
  `mkdir -p "$(dirname "${w.ws}/${path}")" 2>/dev/null; printf '%s' '${body}' > "${w.ws}/${path}" && echo WROTE`;
export const protectedRow = (id: string, path: string, layerPath: string, why: string): AttackRow => ({
  id,
  klass: "code-that-runs-later",
  what: `${path} cannot be written or created in the workspace: ${why}`,
  layers: [`protected:${layerPath}`],
  script: WRITE_PROTECTED(path, `echo planted-by-the-session`),
  through: (_r, w) => (read(join(w.ws, path)) ?? "").includes("planted-by-the-session"),
});

export const ATTACKS: readonly AttackRow[] = [
  // Capabilities: a root caller keeps them all inside bwrap's user namespace unless they are dropped.
  {
    id: "cap-eff",
    klass: "capabilities",
    what: "the session holds no capability",
    layers: asRootAlso("session-uid", ["cap-drop"]),
    controlFor: ["root"],
    note: "bwrap gives a user caller no capabilities whatever the flags, and a root caller's session runs as its own uid",
    script: () => "grep CapEff /proc/self/status",
    through: (r) => !/CapEff:\s+0{16}/.test(r.out),
  },
  {
    id: "remount-bundle-rw",
    klass: "capabilities",
    what: "the read-only bundle cannot be remounted read-write and rewritten",
    layers: asRootAlso("session-uid", ["cap-drop", "seccomp:mount", "disable-userns"]),
    controlFor: ["root"],
    note: "a user caller has no CAP_SYS_ADMIN in bwrap's namespace to remount with",
    script: (w) => `mount -o remount,rw,bind "${w.run}/bundle" && echo pwned > "${w.run}/bundle/policy.json"`,
    through: (_r, w) => read(join(w.run, "bundle/policy.json")) === "pwned\n",
  },
  {
    id: "umount-session-json",
    klass: "capabilities",
    what: "the read-only session.json cannot be unmounted to reach the writable file under it",
    layers: asRootAlso("session-uid", ["cap-drop", "seccomp:umount2", "disable-userns"]),
    controlFor: ["root"],
    note: "a user caller has no CAP_SYS_ADMIN in bwrap's namespace to unmount with",
    script: (w) => `umount "${w.run}/session.json" && echo pwned > "${w.run}/session.json"`,
    through: (_r, w) => read(join(w.run, "session.json")) === "pwned\n",
  },
  {
    id: "mknod",
    klass: "capabilities",
    what: "no device node can be made",
    layers: ["cap-drop"],
    controlFor: [],
    note: "the kernel refuses device nodes in any user namespace but the host's, so no flag removed lets this through; the row holds the refusal in place",
    script: () => "mknod /tmp/null2 c 1 3 && echo MADE",
    through: (r) => r.out.includes("MADE"),
  },
  {
    id: "no-new-privs",
    klass: "capabilities",
    what: "NoNewPrivs is set, so setuid binaries and file capabilities grant nothing",
    layers: [],
    controlFor: [],
    note: "bwrap sets it unconditionally; no flag removes it",
    script: () => "grep NoNewPrivs /proc/self/status",
    through: (r) => !/NoNewPrivs:\s+1/.test(r.out),
  },
  // Nested user namespaces.
  {
    id: "nested-userns",
    klass: "user namespaces",
    what: "no nested user namespace can be made",
    layers: ["disable-userns", "seccomp:unshare"],
    script: () => "unshare -U true && echo NESTED",
    through: (r) => r.out.includes("NESTED"),
  },
  {
    id: "clone-newuser",
    klass: "user namespaces",
    what: "clone with CLONE_NEWUSER is refused",
    layers: ["disable-userns", "seccomp:clone-namespaces"],
    script: () =>
      `perl -e 'my $r = syscall(${nr("clone")}, 0x10000000 | 17, 0, 0, 0, 0); if ($r == 0) { exec("/bin/true") } print(($r < 0 ? "ERR " . ($! + 0) : "OK"), "\\n")'`,
    through: (r) => r.out.includes("OK"),
  },
  {
    id: "userns-replace-session-json",
    klass: "user namespaces",
    what: "a nested namespace's pivot_root cannot detach the read-only session.json and replace the host's file",
    layers: ["disable-userns", "seccomp"],
    // The issue's attack, unprivileged: a file made beforehand, a handle on the run directory, a
    // nested user and mount namespace (no uid map needed), a pivot_root into a bind of /tmp/nr,
    // the old root detached (and with it the read-only binds), then a rename through the handle.
    script: (w) =>
      [
        `mkdir -p /tmp/nr/old && printf 'pwned\\n' > "${w.run}/new.json" || exit 1`,
        // One process throughout: an exec after unshare in an unmapped namespace would drop its capabilities.
        `perl -e 'opendir(my $d, "${w.run}") or die "opendir: $!"; syscall(${nr("unshare")}, 0x10000000 | 0x00020000) == 0 or die "unshare: $!"; my ($a, $b, $n, $o) = ("/tmp/nr", "/tmp/nr", "", "old"); syscall(${nr("mount")}, $a, $b, $n, 0x5000, 0) == 0 or die "mount: $!"; chdir "/tmp/nr" or die "chdir: $!"; my $dot = "."; syscall(${nr("pivot_root")}, $dot, $o) == 0 or die "pivot_root: $!"; my $old = "/old"; syscall(${nr("umount2")}, $old, 2) == 0 or die "umount2: $!"; chdir($d) or die "fchdir: $!"; rename("new.json", "session.json") or die "rename: $!"; print "REPLACED\\n"' 2>&1`,
      ].join("\n"),
    through: (_r, w) => read(join(w.run, "session.json")) === "pwned\n",
  },
  // The runner (pid 1) holds the capability: nothing may trace it or read its memory.
  {
    id: "ptrace-runner",
    klass: "ptrace",
    what: "the runner cannot be ptrace-attached",
    layers: ["seccomp:ptrace", "runner-node"],
    script: () => syscall("ptrace", "0x4206, 1, 0, 0"),
    through: (r) => /^OK /m.test(r.out),
  },
  {
    id: "runner-memory",
    klass: "ptrace",
    what: "the runner's memory cannot be read through /proc/1/mem, so its capability stays its own",
    layers: ["runner-node"],
    script: () =>
      `perl -e 'open(my $m, "<", "/proc/1/maps") or do { print "MAPS-DENIED\\n"; exit 0 }; open(my $f, "<:raw", "/proc/1/mem") or do { print "MEM-DENIED\\n"; exit 0 }; while (<$m>) { next unless /^([0-9a-f]+)-([0-9a-f]+) r/; my ($a, $b) = (hex $1, hex $2); next if $b - $a > 256 * 1048576; seek($f, $a, 0) or next; my $buf; my $n = sysread($f, $buf, $b - $a); next unless $n; while ($buf =~ /(${canaryPattern(CAPABILITY_LABEL)})/g) { print "FOUND $1\\n" } }'`,
    through: (r, w) => r.out.includes(`FOUND ${w.capability}`),
  },
  {
    id: "runner-environ",
    klass: "ptrace",
    what: "the runner's environment cannot be read through /proc/1/environ",
    layers: ["runner-node"],
    script: () => "tr '\\0' '\\n' < /proc/1/environ",
    through: (r, w) => r.out.includes(w.envCanary),
  },
  {
    id: "process-vm-readv-runner",
    klass: "ptrace",
    what: "process_vm_readv cannot read the runner's memory",
    layers: ["seccomp:process_vm_readv", "runner-node"],
    script: () =>
      `perl -e 'my $addr = 0x400000; if (open(my $m, "<", "/proc/1/maps")) { my $l = <$m>; $addr = hex((split /-/, $l)[0]) } my $buf = "\\0" x 16; my $local = pack("QQ", unpack("Q", pack("p", $buf)), 16); my $remote = pack("QQ", $addr, 16); my $r = syscall(${nr("process_vm_readv")}, 1, $local, 1, $remote, 1, 0); print(($r < 0 ? "ERR " . ($! + 0) : "OK $r"), "\\n")'`,
    through: (r) => /^OK 16$/m.test(r.out),
  },
  {
    id: "kill-runner",
    klass: "pid namespace",
    what: "a turn cannot kill the runner: as pid 1 of its namespace it ignores SIGKILL from inside",
    layers: ["as-pid-1"],
    // The turn's shell is the runner's child: its parent is the runner, pid 1 or not.
    script: () => 'r=$PPID; kill -9 "$r"; sleep 0.2; echo "SENT to $r"',
    through: (r) => !r.replied,
  },
  // Other processes of the host, of the same uid.
  {
    id: "neighbour-signal",
    klass: "pid namespace",
    what: "a process of the host, of the same uid, cannot be signalled by pid",
    layers: ["pid-namespace"],
    script: (w) => `kill -0 ${w.neighbor.pid} && echo SIGNALLED`,
    through: (r) => r.out.includes("SIGNALLED"),
  },
  {
    id: "neighbour-visible",
    klass: "pid namespace",
    what: "no process of the host is visible in /proc, so none can be named",
    layers: ["pid-namespace"],
    script: (w) => `test -e /proc/${w.neighbor.pid}/status && echo VISIBLE`,
    through: (r) => r.out.includes("VISIBLE"),
  },
  {
    id: "neighbour-environ",
    klass: "pid namespace",
    what: "another process's environment, working directory and root stay closed even where its pid is visible",
    layers: ["pid-namespace"],
    controlFor: [],
    note: "the kernel's ptrace check refuses a process in another user namespace its /proc/<pid>/environ, cwd and root, so even with the PID namespace removed this holds",
    script: (w) =>
      `tr '\\0' '\\n' < /proc/${w.neighbor.pid}/environ; cat /proc/${w.neighbor.pid}/cwd/.ssh/id_ed25519; cat /proc/${w.neighbor.pid}/root${w.stand.files.gitCredentials}`,
    through: (r, w) => r.out.includes(w.neighbor.canary) || r.out.includes(w.stand.secret),
  },
  // Files beside the session.
  {
    id: "hardlink-bundle",
    klass: "binds",
    what: "a hard link into the read-only bundle cannot be made, so the host's policy cannot be written through one",
    layers: ["bundle-ro"],
    script: (w) =>
      `ln "${w.run}/bundle/policy.json" "${w.run}/policy-link" && echo pwned > "${w.run}/policy-link" && echo LINKED`,
    through: (_r, w) => read(join(w.run, "bundle/policy.json")) === "pwned\n",
  },
  {
    id: "write-bundle",
    klass: "binds",
    what: "the bundle stays as the host wrote it",
    layers: ["bundle-ro"],
    script: (w) => `echo pwned > "${w.run}/bundle/policy.json"`,
    through: (_r, w) => read(join(w.run, "bundle/policy.json")) === "pwned\n",
  },
  {
    id: "write-session-json",
    klass: "binds",
    what: "session.json stays as the host wrote it",
    layers: ["session-json-ro"],
    script: (w) => `echo pwned > "${w.run}/session.json"`,
    through: (_r, w) => read(join(w.run, "session.json")) === "pwned\n",
  },
  {
    id: "symlink-swap-founder",
    klass: "binds",
    what: "a link swapped back and forth between a workspace file and the founder's key never reads the key",
    layers: ["no-founder-home"],
    script: (w) =>
      `i=0; while [ $i -lt 100 ]; do ln -sfn "${w.stand.files.sshKey}" "${w.ws}/k"; cat "${w.ws}/k" 2>/dev/null; ln -sfn "${w.ws}/inside.txt" "${w.ws}/k"; cat "${w.ws}/k" >/dev/null; i=$((i+1)); done; rm -f "${w.ws}/k"`,
    through: (r, w) => r.out.includes(w.stand.secret),
  },
  {
    id: "launch-socket-coder",
    klass: "binds",
    what: "a coder cannot reach the host's launch socket",
    layers: ["no-launch-socket"],
    script: (w) =>
      `perl -MIO::Socket::UNIX -e 'my $s = IO::Socket::UNIX->new(Peer => "${w.launchSocket}") or do { print "NO-CONNECT\\n"; exit 0 }; print "CONNECTED\\n"'`,
    through: (r, w) => r.out.includes("CONNECTED") && w.connections.launch > 0,
  },
  {
    id: "etc-beyond-allowlist",
    klass: "binds",
    what: "nothing of the host's /etc is visible but its allowlist (ETC_FILES): an environment file or a service's config can hold a key",
    layers: ["etc-allowlist"],
    script: () => "ls -A /etc",
    through: (r) =>
      r.out
        .split("\n")
        .map((n) => n.trim())
        .some((n) => n !== "" && !n.startsWith("ATTACK-END") && !ETC_TOP.has(n)),
  },
  // The network: the session's only way out is the model port (docs/network.md).
  {
    id: "host-loopback-tcp",
    klass: "network",
    what: "a TCP listener on the host's 127.0.0.1 is out of reach",
    layers: ["unshare-net"],
    script: (w) =>
      `perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => ${w.traps.tcpPort}, Timeout => 2) or do { print "NO-CONNECT $!\\n"; exit 0 }; print "CONNECTED\\n"; sleep 1'`,
    through: (_r, w) => w.connections.tcpTrap > 0,
  },
  {
    id: "abstract-unix-socket",
    klass: "network",
    what: "an abstract Unix socket of the host is out of reach (abstract names belong to a network namespace)",
    layers: ["unshare-net"],
    script: (w) =>
      `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die; connect($s, pack_sockaddr_un("\\0${w.traps.abstract}")) or do { print "NO-CONNECT $!\\n"; exit 0 }; print "CONNECTED\\n"; sleep 1'`,
    through: (_r, w) => w.connections.abstractTrap > 0,
  },
  {
    id: "proc-net-listeners",
    klass: "network",
    what: "/proc/net/tcp and /proc/net/unix do not list the host's listeners",
    layers: ["unshare-net"],
    script: () => "cat /proc/net/tcp /proc/net/unix",
    through: (r, w) =>
      r.out.toUpperCase().includes(`:${w.traps.tcpPort.toString(16).toUpperCase().padStart(4, "0")} `) ||
      r.out.includes(w.traps.abstract),
  },
  // Terminals.
  {
    id: "tiocsti",
    klass: "terminal",
    what: "no keystroke can be pushed into the terminal the session was started from",
    layers: ["new-session", "seccomp:TIOCSTI", "launcher-session"],
    note: "the script runs in the runner's place, on a launcher started under a terminal: a turn runs in a session of its own (turn.ts), which no plan edit removes, so only pid 1 could ever hold the host's terminal",
    asRunner: true,
    terminal: true,
    script: () =>
      `perl -e 'my $t; open($t, "+<", "/dev/tty") or $t = \\*STDERR; my $c = "x"; my $r = ioctl($t, 0x5412, $c); print STDERR (($r ? "STI-OK" : "STI-ERR " . ($! + 0)), "\\n")'`,
    through: (r) => r.out.includes("STI-OK"),
  },
  probe("TIOCLINUX", "", "the virtual console's input", {
    id: "seccomp-ioctl-tioclinux",
    script: () =>
      `perl -e 'my $c = "\\x02"; my $r = ioctl(STDOUT, 0x541c, $c); print(($r ? "OK 0" : "ERR " . ($! + 0)), "\\n")'`,
  }),
  // Files in the workspace that the host later runs or loads.
  {
    id: "git-hook",
    klass: "code-that-runs-later",
    what: ".git/hooks takes no new hook for the host's git to run",
    layers: ["protected:.git/hooks"],
    script: (w) =>
      `printf '#!/bin/sh\\ntouch planted\\n' > "${w.ws}/.git/hooks/post-checkout" && chmod +x "${w.ws}/.git/hooks/post-checkout" && echo PLANTED`,
    through: (_r, w) => existsSync(join(w.ws, ".git/hooks/post-checkout")),
  },
  {
    id: "git-config-fsmonitor",
    klass: "code-that-runs-later",
    what: ".git/config cannot name a core.fsmonitor for the host's git status to run",
    layers: ["protected:.git/config"],
    script: (w) => `git -C "${w.ws}" config core.fsmonitor 'touch /planted' && echo SET`,
    through: (_r, w) => (read(join(w.ws, ".git/config")) ?? "").includes("fsmonitor"),
  },
  {
    id: "git-replace",
    klass: "code-that-runs-later",
    what: ".git cannot be moved aside and replaced by a repository of the session's making",
    layers: ["protected:.git"],
    script: (w) =>
      `mv "${w.ws}/.git" "${w.ws}/.git-aside" && git init -q "${w.ws}" && printf '#!/bin/sh\\n' > "${w.ws}/.git/hooks/post-checkout" && echo REPLACED`,
    through: (_r, w) => existsSync(join(w.ws, ".git-aside")),
  },
  // The end-of-session check quarantines it too: a file among submodules' git directories is foreign.
  {
    ...protectedRow("git-modules", ".git/modules/evil/hooks/post-checkout", ".git/modules", "a submodule's hooks"),
    layers: ["protected:.git/modules", "end-check"],
  },
  protectedRow("gitmodules", ".gitmodules", ".gitmodules", "submodule URLs"),
  protectedRow("mcp-json", ".mcp.json", ".mcp.json", "MCP servers Claude Code starts"),
  protectedRow("claude-settings", ".claude/settings.json", ".claude", "hooks Claude Code runs"),
  protectedRow("pi-extension", ".pi/extensions/evil.ts", ".pi", "extensions Pi loads"),
  protectedRow("vscode-tasks", ".vscode/tasks.json", ".vscode", "tasks VS Code runs"),
  protectedRow("idea-run", ".idea/workspace.xml", ".idea", "JetBrains run configurations"),
  protectedRow("devcontainer", ".devcontainer/devcontainer.json", ".devcontainer", "lifecycle commands"),
  protectedRow("envrc", ".envrc", ".envrc", "what direnv runs"),
  // The host kernel: a root caller's session never runs as kuid 0, and keeps its own UTS and cgroup namespaces.
  sysctlRow(
    "sysctl-domainname",
    "kernel.domainname",
    ["proc-sys-ro", "unshare-uts"],
    "it is UTS-namespaced, so the session's own namespace takes the write",
  ),
  sysctlRow(
    "sysctl-global",
    "kernel.printk_ratelimit_burst",
    ["proc-sys-ro"],
    "like kernel.core_pattern, it belongs to no namespace: a write reaches the host",
  ),
  {
    id: "etc-shadow",
    klass: "host kernel",
    what: "/etc/shadow and the other root-only files under /etc stay unreadable",
    layers: (i) => (i === "root" ? ["session-uid", "etc-allowlist"] : ["etc-allowlist"]),
    controlFor: ["root"],
    note: "a user caller's session is its own unprivileged kuid, for which /etc/shadow was never readable, /etc whole or not",
    script: () => "cat /etc/shadow",
    through: (r) => r.out.split("\n").some((l) => /^root:/.test(l)),
  },
  {
    id: "setuid-root-plant",
    klass: "host kernel",
    what: "no setuid-root binary can be planted in the workspace for a local user to run on the host",
    layers: ["session-uid", "end-check"],
    only: ["root"],
    note: "a user caller's session can only make files of its own uid; a setuid file of that uid is the setuid row's",
    script: (w) =>
      `cp /usr/bin/true "${w.ws}/suid-plant" && chmod 4755 "${w.ws}/suid-plant" && ls -ln "${w.ws}/suid-plant"`,
    through: (_r, w) => {
      try {
        const st = statSync(join(w.ws, "suid-plant"));
        return (st.mode & 0o4000) !== 0 && st.uid === 0;
      } catch {
        return false;
      }
    },
  },
  {
    id: "cgroup-paths",
    klass: "host kernel",
    what: "the host's cgroup paths stay out of /proc/self/cgroup",
    layers: ["unshare-cgroup"],
    controlFor: ["root"],
    note: "a user caller's session has no cgroup of its own, and on a host where its caller sits at every hierarchy's root nothing would show",
    script: () => "cat /proc/self/cgroup",
    through: (r) => r.out.split("\n").some((l) => /^\d+:[^:]*:\/./.test(l)),
  },
  // Sockets the session could open to another uid.
  {
    id: "sockets-rechmod",
    klass: "sockets",
    what: "the session cannot chmod its run directory and tools.sock so that another local uid connects",
    layers: ["sockets-ro"],
    script: (w) =>
      `chmod 0777 "${w.run}" "${w.run}/sock"; chmod 0666 "${w.run}/sock/tools.sock"; ls -ld "${w.run}" "${w.run}/sock" "${w.run}/sock/tools.sock"`,
    // Tried while the session still runs: its runner serves tools.sock until the end.
    during: (w) => otherUidConnects(join(w.run, "sock/tools.sock")),
    through: (r) => r.during === true,
  },
  // Socket families the network namespace does not cover.
  {
    id: "socket-vsock",
    klass: "seccomp",
    what: "AF_VSOCK never reaches the kernel: its ports are the host's whatever the network namespace",
    layers: ["seccomp:socket-families"],
    script: () =>
      `perl -e 'my $r = syscall(${nr("socket")}, 40, 1, 0); print(($r < 0 ? "ERR " . ($! + 0) : "OK $r"), "\\n")'`,
    through: (r) => /^(OK|ERR) /m.test(r.out) && !/^ERR 97$/m.test(r.out),
  },
  {
    id: "socket-packet",
    klass: "seccomp",
    what: "AF_PACKET never reaches the kernel",
    layers: ["seccomp:socket-families"],
    script: () =>
      `perl -e 'my $r = syscall(${nr("socket")}, 17, 3, 0); print(($r < 0 ? "ERR " . ($! + 0) : "OK $r"), "\\n")'`,
    through: (r) => /^(OK|ERR) /m.test(r.out) && !/^ERR 97$/m.test(r.out),
  },
  {
    id: "socket-netlink-uevent",
    klass: "seccomp",
    what: "netlink beyond NETLINK_ROUTE (here the kernel's uevents) never reaches the kernel, while NETLINK_ROUTE still opens",
    layers: ["seccomp:socket-families"],
    script: () =>
      `perl -e 'my $r = syscall(${nr("socket")}, 16, 3, 15); print(($r < 0 ? "ERR " . ($! + 0) : "OK $r"), "\\n"); my $q = syscall(${nr("socket")}, 16, 3, 0); print(($q < 0 ? "ROUTE-ERR " . ($! + 0) : "ROUTE-OK"), "\\n")'`,
    through: (r) => /^(OK|ERR) /m.test(r.out) && !/^ERR 93$/m.test(r.out),
  },
  ...gitRows(),
  // Resources.
  {
    id: "fork-bomb",
    klass: "resources",
    what: `the session's tasks stop at the bound, far below the host's pid table`,
    layers: (id) => (id === "root" ? ["cgroup", "nproc"] : ["nproc"]),
    script: () =>
      `perl -e 'my @k; my $n = 0; while ($n < 700) { my $p = fork(); last unless defined $p; if ($p == 0) { sleep 30; exit 0 } push @k, $p; $n++ } print "FORKS $n\\n"; kill 9, @k'`,
    through: (r) => Number(/FORKS (\d+)/.exec(r.out)?.[1] ?? 0) >= 700,
  },
  {
    id: "tmp-fill",
    klass: "resources",
    what: "/tmp holds at most its bound, and none of it on the host's disk",
    layers: ["tmp-size"],
    script: () => "dd if=/dev/zero of=/tmp/fill bs=1M count=300 2>/dev/null; echo BYTES $(stat -c %s /tmp/fill)",
    through: (r) => Number(/BYTES (\d+)/.exec(r.out)?.[1] ?? 0) >= 300 * 1048576,
  },
  {
    id: "shm-fill",
    klass: "resources",
    what: "/dev/shm holds at most its bound, not half the host's RAM",
    layers: ["shm-size"],
    script: () =>
      "dd if=/dev/zero of=/dev/shm/fill bs=1M count=100 2>/dev/null; echo BYTES $(stat -c %s /dev/shm/fill)",
    through: (r) => Number(/BYTES (\d+)/.exec(r.out)?.[1] ?? 0) >= 100 * 1048576,
  },
  {
    id: "memory-one-process",
    klass: "resources",
    what: `one process cannot map more writable memory than its bound (${SESSION_LIMITS.dataBytes.value / 1048576} MiB)`,
    layers: ["rlimit-data"],
    // mmap alone: RLIMIT_DATA refuses the mapping itself, so nothing need be touched to show it.
    script: () =>
      `perl -e 'my $r = syscall(${nr("mmap")}, 0, ${MEMORY_ONE}, 3, 0x22, -1, 0); print(($r == -1 ? "ERR " . ($! + 0) : "MAPPED"), "\\n")'`,
    through: (r) => /^MAPPED$/m.test(r.out),
  },
  {
    id: "memory-together",
    klass: "resources",
    what: `processes that each stay under the per-process bound cannot together touch more than the session's ${SESSION_LIMITS.memoryBytes.value / 1048576} MiB`,
    layers: ["memory-cgroup"],
    only: ["root"],
    timeoutMs: 120_000,
    note: "a user caller has no memory cgroup it may write: its session is bounded per process (RLIMIT_DATA) only; docs/hardening.md Limits",
    // Three processes touch their share at once; each waits until all three hold it, so the
    // control shows the whole sum resident together.
    script: () =>
      `for i in 1 2 3; do perl -e 'my $x; vec($x, ${MEMORY_SHARE} - 1, 8) = 1; open(my $f, ">", "/tmp/held.$$"); close $f; for (1..60) { my @h = glob("/tmp/held.*"); last if @h >= 3; select(undef, undef, undef, 0.1) } my @h = glob("/tmp/held.*"); print((@h >= 3 ? "DONE" : "ALONE"), "\\n")' & done; wait`,
    through: (r) => (r.out.match(/^DONE$/gm) ?? []).length === 3,
  },
  {
    id: "memory-memfd",
    klass: "resources",
    what: `one process cannot hold more shared memory (a memfd, which RLIMIT_DATA does not count) than the session's ${SESSION_LIMITS.memoryBytes.value / MiB} MiB`,
    layers: ["memory-cgroup"],
    only: ["root"],
    timeoutMs: 120_000,
    note: "a user caller has no memory cgroup it may write, and its RLIMIT_DATA does not count a memfd: measured in docs/hardening.md Limits",
    // oom_score_adj 1000: the cgroup's OOM killer ends this process, not the runner, whose resident
    // set is larger than this one's (a memfd written, not mapped, is in no process's).
    script: () =>
      `perl -e 'if (open(my $o, ">", "/proc/self/oom_score_adj")) { print $o "1000"; close $o } my $name = "held"; my $fd = syscall(${nr("memfd_create")}, $name, 0); if ($fd < 0) { print "NOMEMFD ", $! + 0, "\\n"; exit } open(my $f, ">&=", $fd) or do { print "NOFD\\n"; exit }; my $b = "\\1" x 1048576; my $n = 0; while ($n < ${MEMFD_MIB}) { last unless (syswrite($f, $b) // 0) == 1048576; $n++ } print "HELD $n\\n"'`,
    through: (r) => new RegExp(`^HELD ${MEMFD_MIB}$`, "m").test(r.out),
  },
  {
    id: "home-fill",
    klass: "resources",
    what: "HOME holds at most its bound",
    layers: ["home-size"],
    script: () => 'dd if=/dev/zero of="$HOME/fill" bs=1M count=80 2>/dev/null; echo BYTES $(stat -c %s "$HOME/fill")',
    through: (r) => Number(/BYTES (\d+)/.exec(r.out)?.[1] ?? 0) >= 80 * 1048576,
  },
  // The rest of the filter: each syscall answered EPERM before the kernel sees it.
  probe("io_uring_setup", "1, 0", "io_uring runs operations the filter never sees", {
    controlRemoves: ["seccomp:io_uring_setup", "seccomp:io_uring_enter", "seccomp:io_uring_register"],
  }),
  probe("io_uring_enter", "-1, 0, 0, 0, 0, 0", "io_uring runs operations the filter never sees", {
    controlRemoves: ["seccomp:io_uring_setup", "seccomp:io_uring_enter", "seccomp:io_uring_register"],
  }),
  probe("io_uring_register", "-1, 0, 0, 0", "io_uring runs operations the filter never sees", {
    controlRemoves: ["seccomp:io_uring_setup", "seccomp:io_uring_enter", "seccomp:io_uring_register"],
  }),
  probe("bpf", "999, 0, 0", "programs loaded into the kernel"),
  probe("perf_event_open", "0, 0, -1, -1, 0", "kernel and cross-process observation"),
  probe("userfaultfd", "-1", "the usual primitive for kernel races"),
  probe("keyctl", "999, 0, 0, 0, 0", "the kernel keyrings"),
  probe("add_key", "0, 0, 0, 0, 0", "the kernel keyrings"),
  probe("request_key", "0, 0, 0, 0", "the kernel keyrings"),
  probe("open_by_handle_at", "-1, 0, 0", "opening files past every bind"),
  probe("name_to_handle_at", '-1, "/nonexistent-x", 0, 0, 0', "minting file handles"),
  probe("kexec_load", "0, 0, 0, 0", "replacing the kernel"),
  probe("kexec_file_load", "-1, -1, 0, 0, 0", "replacing the kernel"),
  probe("init_module", "0, 0, 0", "loading modules"),
  probe("finit_module", "-1, 0, 0", "loading modules"),
  probe("delete_module", '"nosuchmodule", 0', "unloading modules"),
  probe("setns", "-1, 0", "joining another namespace"),
  probe("unshare", "0x80000000", "new namespaces"),
  probe("ptrace", "16, 999999, 0, 0", "tracing anything"),
  probe("process_vm_writev", "999999, 0, 0, 0, 0, 0", "writing another process's memory"),
  probe("open_tree", '-1, "/nonexistent-x", 0', "the new mount API"),
  probe("open_tree_attr", '-1, "/nonexistent-x", 0, 0, 0', "the new mount API"),
  probe("mount_setattr", '-1, "/nonexistent-x", 0, 0, 0', "clearing a bind's read-only flag"),
  probe("fsconfig", "-1, 0, 0, 0, 0", "the new mount API"),
  capProbe("fsopen", '"tmpfs", 0', "a new filesystem context"),
  capProbe("fsmount", "-1, 0, 0", "mounting a filesystem context"),
  capProbe("fspick", '-1, "/nonexistent-x", 0', "reconfiguring a mount"),
  capProbe("move_mount", '-1, "", -1, "", 0', "moving a bind"),
  capProbe("pivot_root", '"/nonexistent-x", "/nonexistent-y"', "detaching the root"),
  probe("clone3", "0, 0", "its flags live in memory; ENOSYS sends libc back to clone", {
    through: (r) => /^(OK|ERR) /m.test(r.out) && !/^ERR 38$/m.test(r.out),
  }),
  ...(ARCH === "x86_64"
    ? [
        {
          id: "seccomp-x32",
          klass: "seccomp",
          what: "an x32 syscall, whose number would dodge the 64-bit table, kills the process",
          layers: ["seccomp:x32"],
          script: () =>
            `perl -e 'syscall(0x40000000 | ${nr("ptrace")}, 16, 1, 0, 0); print "SURVIVED\\n"'; echo "EXIT $?"`,
          through: (r: Outcome) => r.out.includes("SURVIVED"),
        } satisfies AttackRow,
      ]
    : []),
];

/** The workspace's top-level names and .git/hooks, to put the host back as it was between runs. */
export function workspaceSnapshot(w: AttackWorld): { top: string[]; hooks: string[]; config: string } {
  return {
    top: readdirSync(w.ws).sort(),
    hooks: readdirSync(join(w.ws, ".git/hooks")).sort(),
    config: readFileSync(join(w.ws, ".git/config"), "utf8"),
  };
}

export function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
