// The protections an attack row names, each as a way to remove it on purpose. A row's control
// removes all of its layers and shows the attack gets through; each "alone" arm removes all but one
// and shows that one still stops it. Nothing here is used by a session: only the live tier breaks.
import type { SeccompRules } from "../../core/sandbox/seccomp.ts";
import type { Bind, SandboxSpec } from "../../core/sandbox/types.ts";
import { withoutAnyOf, withoutPair, withoutPrefixed } from "../controls/argv.ts";
import { exposedBind, withBindsBeforeLast, withoutBinds, withoutRow, withUnboundedTmpfs } from "../controls/binds.ts";
import { withoutSeccompRule, withSeccompCheck } from "../controls/seccomp.ts";

/** What a control may change: the spec, the bind table, the argv, the seccomp rules, the cgroups, the identity. */
export interface Planned {
  spec: SandboxSpec;
  binds: Bind[];
  /** Applied to the finished argv. */
  argv: Array<(a: string[]) => string[]>;
  seccomp: SeccompRules | null;
  /** Which of a root host's session cgroups the sandbox joins. */
  cgroups: { pids: boolean; memory: boolean };
  /** A root caller's drop to the session's identity (dropToSession). */
  dropSession: boolean;
  /** The node the runner runs on. */
  runnerNode: string;
  /** Whether the host checks the workspace when the session ends, as the launcher does. */
  endCheck: boolean;
}

export type Layer = {
  id: string;
  why: string;
  remove: (p: Planned, ctx: { readableNode: string; founderHome: string }) => Planned;
};

const withArgv = (p: Planned, f: (a: string[]) => string[]): Planned => ({ ...p, argv: [...p.argv, f] });

const fixed: Record<string, Layer> = {
  "cap-drop": { id: "cap-drop", why: "--cap-drop ALL", remove: (p) => withArgv(p, withoutPair("--cap-drop", "ALL")) },
  "disable-userns": {
    id: "disable-userns",
    why: "--disable-userns",
    remove: (p) => withArgv(p, withoutAnyOf("--disable-userns", "--assert-userns-disabled")),
  },
  "unshare-net": {
    id: "unshare-net",
    why: "--unshare-net: the session's own network namespace",
    remove: (p) => withArgv(p, withoutAnyOf("--unshare-net")),
  },
  "new-session": { id: "new-session", why: "--new-session", remove: (p) => withArgv(p, withoutAnyOf("--new-session")) },
  seccomp: {
    id: "seccomp",
    why: "the whole seccomp filter",
    remove: (p) => ({ ...withArgv(p, withoutPair("--seccomp", "3")), seccomp: null }),
  },
  "seccomp:clone-namespaces": {
    id: "seccomp:clone-namespaces",
    why: "the filter's clone flag check",
    remove: (p) => ({ ...p, seccomp: withSeccompCheck(p.seccomp, { cloneNamespaces: false }) }),
  },
  "seccomp:x32": {
    id: "seccomp:x32",
    why: "the filter's x32 check",
    remove: (p) => ({ ...p, seccomp: withSeccompCheck(p.seccomp, { x32: false }) }),
  },
  "runner-node": {
    id: "runner-node",
    why: "the execute-only node under the runner",
    remove: (p, c) => ({ ...p, runnerNode: c.readableNode }),
  },
  "pid-namespace": {
    id: "pid-namespace",
    why: "the PID namespace (and so the /proc of the session's own)",
    remove: (p) =>
      withArgv(p, (a) => {
        const b = withoutAnyOf("--unshare-pid", "--as-pid-1")(a);
        const i = b.indexOf("--proc");
        return [...b.slice(0, i), "--bind", "/proc", "/proc", ...b.slice(i + 2)];
      }),
  },
  "as-pid-1": {
    id: "as-pid-1",
    why: "--as-pid-1: the runner is pid 1, whom nothing inside can kill",
    remove: (p) => withArgv(p, withoutAnyOf("--as-pid-1")),
  },
  nproc: {
    id: "nproc",
    why: "prlimit --nproc before the runner",
    remove: (p) => withArgv(p, withoutPrefixed("--nproc=")),
  },
  "rlimit-data": {
    id: "rlimit-data",
    why: "prlimit --data: each process's writable memory",
    remove: (p) => withArgv(p, withoutPrefixed("--data=")),
  },
  cgroup: {
    id: "cgroup",
    why: "the pids cgroup of a root host",
    remove: (p) => ({ ...p, cgroups: { ...p.cgroups, pids: false } }),
  },
  "memory-cgroup": {
    id: "memory-cgroup",
    why: "the memory cgroup of a root host: the session's memory as a whole",
    remove: (p) => ({ ...p, cgroups: { ...p.cgroups, memory: false } }),
  },
  "session-uid": {
    id: "session-uid",
    why: "a root caller's drop to the session's unprivileged uid",
    remove: (p) => ({ ...p, dropSession: false }),
  },
  "proc-sys-ro": {
    id: "proc-sys-ro",
    why: "/proc/sys bound read-only",
    remove: (p) => ({ ...p, binds: withoutRow(p.binds, "proc-sys") }),
  },
  "unshare-uts": {
    id: "unshare-uts",
    why: "--unshare-uts: the session's own hostname and domainname",
    remove: (p) => withArgv(p, withoutAnyOf("--unshare-uts")),
  },
  "unshare-cgroup": {
    id: "unshare-cgroup",
    why: "--unshare-cgroup: the session's own cgroup root",
    remove: (p) => withArgv(p, withoutAnyOf("--unshare-cgroup")),
  },
  "shm-size": {
    id: "shm-size",
    why: "/dev/shm as its own bounded tmpfs",
    remove: (p) => ({ ...p, binds: withoutRow(p.binds, "shm") }),
  },
  "sockets-ro": {
    id: "sockets-ro",
    why: "sock/ bound read-only, so its sockets cannot be chmodded",
    remove: (p) => ({ ...p, binds: withoutRow(p.binds, "sockets") }),
  },
  "seccomp:socket-families": {
    id: "seccomp:socket-families",
    why: "the filter's socket family allowlist",
    remove: (p) => ({ ...p, seccomp: withSeccompCheck(p.seccomp, { socketFamilies: null }) }),
  },
  "tmp-size": {
    id: "tmp-size",
    why: "the size of /tmp's tmpfs",
    remove: (p) => ({ ...p, binds: withUnboundedTmpfs(p.binds, "tmp") }),
  },
  "home-size": {
    id: "home-size",
    why: "the size of HOME's tmpfs",
    remove: (p) => ({ ...p, binds: withUnboundedTmpfs(p.binds, "home") }),
  },
  "bundle-ro": {
    id: "bundle-ro",
    why: "bundle/ bound read-only",
    remove: (p) => ({ ...p, binds: withoutRow(p.binds, "bundle") }),
  },
  "session-json-ro": {
    id: "session-json-ro",
    why: "session.json bound read-only",
    remove: (p) => ({ ...p, binds: withoutRow(p.binds, "session-json") }),
  },
  "no-founder-home": {
    id: "no-founder-home",
    why: "nothing of the founder's HOME in the bind table",
    remove: (p, c) => ({ ...p, binds: withBindsBeforeLast(p.binds, [exposedBind(c.founderHome)]) }),
  },
  "no-launch-socket": {
    id: "no-launch-socket",
    why: "the launch socket only for a launching role",
    remove: (p) => ({ ...p, spec: { ...p.spec, mayLaunch: true } }),
  },
  "no-other-workspace": { id: "no-other-workspace", why: "no other workspace in the bind table", remove: (p) => p },
  "end-check": {
    id: "end-check",
    why: "the host's check of the workspace when the session ends (src/host/workspace-check.ts)",
    remove: (p) => ({ ...p, endCheck: false }),
  },
};

/** A layer by id: a fixed one, `seccomp:<syscall or ioctl>`, or `protected:<path>`. */
export function layer(id: string): Layer {
  const f = fixed[id];
  if (f !== undefined) return f;
  if (id.startsWith("seccomp:")) {
    const name = id.slice("seccomp:".length);
    return {
      id,
      why: `the filter's ${name} rule`,
      remove: (p) => ({ ...p, seccomp: withoutSeccompRule(p.seccomp, name) }),
    };
  }
  if (id.startsWith("protected:")) {
    const path = id.slice("protected:".length);
    return {
      id,
      why: `${path} protected`,
      remove: (p) => ({
        ...p,
        binds: withoutBinds(p.binds, (b) => b.row === "protected" && b.inside === `${p.spec.workspace}/${path}`),
      }),
    };
  }
  throw new Error(`no layer ${id}`);
}
