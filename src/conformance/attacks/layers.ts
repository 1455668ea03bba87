// The protections an attack row names, each as a way to remove it on purpose from a prepared
// launch (the controls/ vocabulary), before start() carries it out. A row's control removes all of
// its layers and shows the attack gets through; each "alone" arm removes all but one and shows that
// one still stops it. Nothing here is used by a session: only the live tier breaks.
import type { PreparedLaunch } from "../../host/launcher.ts";
import { withoutAnyOf, withoutPair, withoutPrefixed } from "../controls/argv.ts";
import { exposedBind, withBindsBeforeLast, withoutBinds, withoutRow, withUnboundedTmpfs } from "../controls/binds.ts";
import {
  launchReplanned,
  launchWithBinds,
  launchWithBwrapArgv,
  launchWithModelPort,
  launchWithRunnerNode,
  launchWithSeccomp,
  launchWithSession,
  launchWithoutCgroup,
  launchWithoutDrop,
  launchWithoutEndCheck,
} from "../controls/launch.ts";
import { withoutSeccompRule, withSeccompCheck } from "../controls/seccomp.ts";

/** What a layer's removal needs from the world: a readable node, the founder's HOME, a free host port. */
export type LayerContext = { readableNode: string; founderHome: string; freePort: number };

/**
 * One protection: `plan` edits the prepared launch (its spec, facts, binds, identity, seccomp rules,
 * cgroups, end check), `argv` edits bwrap's argv once every plan edit is in (a change of the binds
 * rebuilds the argv, so argv edits come last).
 */
export type Layer = {
  id: string;
  why: string;
  plan?: (p: PreparedLaunch, ctx: LayerContext) => PreparedLaunch;
  argv?: (a: string[]) => string[];
};

const argvLayer = (id: string, why: string, argv: (a: string[]) => string[]): Layer => ({ id, why, argv });
const bindLayer = (id: string, why: string, edit: Parameters<typeof launchWithBinds>[1]): Layer => ({
  id,
  why,
  plan: (p) => launchWithBinds(p, edit),
});

const fixed: Record<string, Layer> = {
  "cap-drop": argvLayer("cap-drop", "--cap-drop ALL", withoutPair("--cap-drop", "ALL")),
  "disable-userns": argvLayer(
    "disable-userns",
    "--disable-userns",
    withoutAnyOf("--disable-userns", "--assert-userns-disabled"),
  ),
  "unshare-net": {
    id: "unshare-net",
    why: "--unshare-net: the session's own network namespace",
    argv: withoutAnyOf("--unshare-net"),
    // Sharing the host's network, the runner's model port must be free on the host.
    plan: (p, c) => launchWithModelPort(p, c.freePort),
  },
  "new-session": argvLayer("new-session", "--new-session", withoutAnyOf("--new-session")),
  "launcher-session": {
    id: "launcher-session",
    why: "the launcher starts each sandbox in a session of its own, with no controlling terminal",
    plan: (p) => launchWithSession(p, (s) => ({ ...s, ownSession: false })),
  },
  seccomp: argvLayer("seccomp", "the whole seccomp filter", withoutPair("--seccomp", "3")),
  "seccomp:clone-namespaces": {
    id: "seccomp:clone-namespaces",
    why: "the filter's clone flag check",
    plan: (p) => launchWithSeccomp(p, (r) => withSeccompCheck(r, { cloneNamespaces: false })),
  },
  "seccomp:x32": {
    id: "seccomp:x32",
    why: "the filter's x32 check",
    plan: (p) => launchWithSeccomp(p, (r) => withSeccompCheck(r, { x32: false })),
  },
  "seccomp:socket-families": {
    id: "seccomp:socket-families",
    why: "the filter's socket family allowlist",
    plan: (p) => launchWithSeccomp(p, (r) => withSeccompCheck(r, { socketFamilies: null })),
  },
  "runner-node": {
    id: "runner-node",
    why: "the execute-only node under the runner",
    plan: (p, c) => launchWithRunnerNode(p, c.readableNode, 0o755),
  },
  "pid-namespace": argvLayer("pid-namespace", "the PID namespace (and so the /proc of the session's own)", (a) => {
    const b = withoutAnyOf("--unshare-pid", "--as-pid-1")(a);
    const i = b.indexOf("--proc");
    return [...b.slice(0, i), "--bind", "/proc", "/proc", ...b.slice(i + 2)];
  }),
  "as-pid-1": argvLayer(
    "as-pid-1",
    "--as-pid-1: the runner is pid 1, whom nothing inside can kill",
    withoutAnyOf("--as-pid-1"),
  ),
  nproc: argvLayer("nproc", "prlimit --nproc before the runner", withoutPrefixed("--nproc=")),
  "rlimit-data": argvLayer("rlimit-data", "prlimit --data: each process's writable memory", withoutPrefixed("--data=")),
  cgroup: { id: "cgroup", why: "the pids cgroup of a root host", plan: (p) => launchWithoutCgroup(p, "pids") },
  "memory-cgroup": {
    id: "memory-cgroup",
    why: "the memory cgroup of a root host: the session's memory as a whole",
    plan: (p) => launchWithoutCgroup(p, "memory"),
  },
  "session-uid": {
    id: "session-uid",
    why: "a root caller's drop to the session's unprivileged uid",
    plan: (p) => launchWithoutDrop(p),
  },
  "proc-sys-ro": bindLayer("proc-sys-ro", "/proc/sys bound read-only", (t) => withoutRow(t, "proc-sys")),
  "unshare-uts": argvLayer(
    "unshare-uts",
    "--unshare-uts: the session's own hostname and domainname",
    withoutAnyOf("--unshare-uts"),
  ),
  "unshare-cgroup": argvLayer(
    "unshare-cgroup",
    "--unshare-cgroup: the session's own cgroup root",
    withoutAnyOf("--unshare-cgroup"),
  ),
  "shm-size": bindLayer("shm-size", "/dev/shm as its own bounded tmpfs", (t) => withoutRow(t, "shm")),
  "sockets-ro": bindLayer("sockets-ro", "sock/ bound read-only, so its sockets cannot be chmodded", (t) =>
    withoutRow(t, "sockets"),
  ),
  "tmp-size": bindLayer("tmp-size", "the size of /tmp's tmpfs", (t) => withUnboundedTmpfs(t, "tmp")),
  "home-size": bindLayer("home-size", "the size of HOME's tmpfs", (t) => withUnboundedTmpfs(t, "home")),
  "bundle-ro": bindLayer("bundle-ro", "bundle/ bound read-only", (t) => withoutRow(t, "bundle")),
  "session-json-ro": bindLayer("session-json-ro", "session.json bound read-only", (t) => withoutRow(t, "session-json")),
  "no-founder-home": {
    id: "no-founder-home",
    why: "nothing of the founder's HOME in the bind table",
    plan: (p, c) => launchWithBinds(p, (t) => withBindsBeforeLast(t, [exposedBind(c.founderHome)])),
  },
  "etc-allowlist": {
    id: "etc-allowlist",
    why: "only the allowlist's files of /etc (ETC_FILES), not /etc whole",
    plan: (p) =>
      launchWithBinds(p, (t) => {
        const first = t.find((b) => b.row === "etc");
        return t.flatMap((b) =>
          b.row !== "etc" ? [b] : b === first ? [{ ...b, source: "/etc", inside: "/etc", mode: "ro" as const }] : [],
        );
      }),
  },
  "no-checkout": {
    id: "no-checkout",
    why: "nothing of the checkout but the runner's own files",
    plan: (p) => launchWithBinds(p, (t) => withBindsBeforeLast(t, [exposedBind(p.session.spec.repo)])),
  },
  "no-launch-socket": {
    id: "no-launch-socket",
    why: "the launch socket only for a launching role",
    plan: (p) => launchReplanned(p, { spec: (s) => ({ ...s, mayLaunch: true }) }),
  },
  "no-other-workspace": { id: "no-other-workspace", why: "no other workspace in the bind table" },
  "end-check": {
    id: "end-check",
    why: "the host's check of the workspace when the session ends (src/host/workspace-check.ts)",
    plan: (p) => launchWithoutEndCheck(p),
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
      plan: (p) => launchWithSeccomp(p, (r) => withoutSeccompRule(r, name)),
    };
  }
  if (id.startsWith("protected:")) {
    const path = id.slice("protected:".length);
    return {
      id,
      why: `${path} protected`,
      plan: (p) =>
        launchWithBinds(p, (t) =>
          withoutBinds(t, (b) => b.row === "protected" && b.inside === `${p.session.spec.workspace}/${path}`),
        ),
    };
  }
  throw new Error(`no layer ${id}`);
}

/**
 * The prepared launch with the named layers removed: every layer's plan edit in the order given
 * (a spec or facts change plans the binds and argv again, a bind change the argv), then every
 * argv edit. Order matters: `no-launch-socket` plans the table afresh, so it goes first.
 */
export function withoutLayers(p: PreparedLaunch, ids: readonly string[], ctx: LayerContext): PreparedLaunch {
  const layers = ids.map(layer);
  const first = [
    ...layers.filter((l) => l.id === "no-launch-socket"),
    ...layers.filter((l) => l.id !== "no-launch-socket"),
  ];
  let q = p;
  for (const l of first) if (l.plan !== undefined) q = l.plan(q, ctx);
  for (const l of first) if (l.argv !== undefined) q = launchWithBwrapArgv(q, l.argv);
  return q;
}
