// bwrap's options as one table: how many operands each takes, which modify the mount after them,
// which mount something and how much of the host that shows, and which confine or widen the
// session. The argv renderer, the review's parser and rules, and the baseline check all read it,
// so an option is described once. Complete for every pinned bwrap (baselines/bwrap/).

/** How wide a view a mount gives: 0 nothing of the host, 1 read-only, 2 writable, 3 with devices. */
export type MountWidth = 0 | 1 | 2 | 3;

export interface BwrapOption {
  /** The operands it takes after its name. */
  operands: number;
  /** It modifies the mount option after it (and shares its line): the mount's field it sets. */
  modifies?: "perms" | "size";
  /** It mounts something at its last operand; how wide a view of the host that is, and why. */
  mount?: { width: MountWidth; why: string };
  /** Its presence confines the session: removing it weakens, under this review rule. */
  confines?: { rule: string; why: string };
  /** Its presence widens what the session can do or outlive. */
  widens?: string;
}

const NAMESPACE = {
  rule: "namespace-removed",
  why: "a namespace shared with the host again: pid lets the session see and signal host processes, net reach the network, user, ipc, uts and cgroup the host's own",
};
const NO_USERNS = {
  rule: "disable-userns-removed",
  why: "nested user namespaces come back, and with them a rename that replaces read-only binds",
};
const SECCOMP = {
  rule: "seccomp-filter-removed",
  why: "no seccomp filter: ptrace of pid 1 and every call the filter denies are back",
};
const JOINS = "the session joins a namespace made outside the sandbox";

const flag = (extra: Omit<BwrapOption, "operands"> = {}): BwrapOption => ({ operands: 0, ...extra });
const takes = (operands: number, extra: Omit<BwrapOption, "operands"> = {}): BwrapOption => ({ operands, ...extra });
const mount = (operands: number, width: MountWidth, why: string): BwrapOption => ({
  operands,
  mount: { width, why },
});

export const BWRAP_OPTIONS: Readonly<Record<string, BwrapOption>> = {
  "--help": flag(),
  "--version": flag(),
  "--args": takes(1),
  "--argv0": takes(1),
  "--unshare-all": flag({ confines: NAMESPACE }),
  "--share-net": flag({ widens: "the session gets the host's network" }),
  "--unshare-user": flag({ confines: NAMESPACE }),
  "--unshare-user-try": flag({ confines: NAMESPACE }),
  "--unshare-ipc": flag({ confines: NAMESPACE }),
  "--unshare-pid": flag({ confines: NAMESPACE }),
  "--unshare-net": flag({ confines: NAMESPACE }),
  "--unshare-uts": flag({ confines: NAMESPACE }),
  "--unshare-cgroup": flag({ confines: NAMESPACE }),
  "--unshare-cgroup-try": flag({ confines: NAMESPACE }),
  "--userns": takes(1, { widens: JOINS }),
  "--userns2": takes(1, { widens: JOINS }),
  "--pidns": takes(1, { widens: JOINS }),
  "--disable-userns": flag({ confines: NO_USERNS }),
  "--assert-userns-disabled": flag({ confines: NO_USERNS }),
  "--uid": takes(1),
  "--gid": takes(1),
  "--hostname": takes(1),
  "--chdir": takes(1),
  "--clearenv": flag(),
  "--setenv": takes(2),
  "--unsetenv": takes(1),
  "--lock-file": takes(1),
  "--sync-fd": takes(1),
  "--perms": takes(1, { modifies: "perms" }),
  "--size": takes(1, { modifies: "size" }),
  "--bind": mount(2, 2, "a host path, writable"),
  "--bind-try": mount(2, 2, "a host path, writable, skipped when missing"),
  "--dev-bind": mount(2, 3, "a host path with its devices usable"),
  "--dev-bind-try": mount(2, 3, "a host path with its devices usable, skipped when missing"),
  "--ro-bind": mount(2, 1, "a host path, read-only"),
  "--ro-bind-try": mount(2, 1, "a host path, read-only, skipped when missing"),
  "--bind-fd": mount(2, 2, "a host directory held open, writable"),
  "--ro-bind-fd": mount(2, 1, "a host directory held open, read-only"),
  "--remount-ro": takes(1),
  "--exec-label": takes(1),
  "--file-label": takes(1),
  "--proc": mount(1, 0, "the session's own /proc"),
  "--dev": mount(1, 0, "a private /dev with no host device"),
  "--tmpfs": mount(1, 0, "an empty private directory"),
  "--mqueue": mount(1, 0, "a private message-queue mount"),
  "--dir": mount(1, 0, "an empty directory"),
  "--file": mount(2, 2, "a writable file from a descriptor"),
  "--bind-data": mount(2, 2, "a writable file from a descriptor"),
  "--ro-bind-data": mount(2, 1, "a read-only file from a descriptor"),
  "--symlink": mount(2, 0, "a link, showing nothing of the host by itself"),
  "--seccomp": takes(1, { confines: SECCOMP }),
  "--add-seccomp-fd": takes(1, { confines: SECCOMP }),
  "--block-fd": takes(1),
  "--userns-block-fd": takes(1),
  "--info-fd": takes(1),
  "--json-status-fd": takes(1),
  "--new-session": flag({
    confines: {
      rule: "new-session-removed",
      why: "the session shares the host's terminal session: TIOCSTI can type commands into it",
    },
  }),
  "--die-with-parent": flag({
    widens:
      "bwrap would die with a host that died hard, so no later host could find and end the session; the runner dies with bwrap through setpriv's parent-death signal instead",
  }),
  "--as-pid-1": flag(),
  "--cap-add": takes(1, { widens: "a capability given back to the session" }),
  "--cap-drop": takes(1, {
    confines: {
      rule: "cap-drop-removed",
      why: "a root caller keeps its capabilities inside the sandbox's user namespace",
    },
  }),
  "--chmod": takes(2),
};

/** The row of `name`, or undefined for a name bwrap does not have (`constructor` among them). */
export const optionOf = (name: string): BwrapOption | undefined =>
  Object.hasOwn(BWRAP_OPTIONS, name) ? BWRAP_OPTIONS[name] : undefined;

/** The operands `name` takes: 0 for a flag or a name bwrap does not have. */
export const operandsOf = (name: string): number => optionOf(name)?.operands ?? 0;
