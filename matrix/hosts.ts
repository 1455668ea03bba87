// The host matrix's rows: each a host users run sessions on, made from a base image and the
// container's own settings, with what the probe must say there. Each row carries its why.
import type { DiagnosisId } from "../src/core/sandbox/diagnose.ts";
import type { BaseId } from "./bases.ts";

export type Expect = { kind: "works" } | { kind: "refuses"; cause: DiagnosisId };

export interface HostRow {
  id: string;
  base: BaseId;
  /** The container runtime's /proc masking left in place (the default); every other row lifts it. */
  procMasked?: boolean;
  /** A seccomp profile that refuses clone(CLONE_NEWUSER) and unshare, as Docker's default does. */
  seccompBlocksUserns?: boolean;
  /** node at /opt/node/bin and the Claude Code binary at /opt/claude/bin: neither under /usr nor the checkout. */
  nodeUnderOpt?: boolean;
  expect: Expect;
  /** Scenarios a session runs here, as root and as a user (only on a host that works). */
  scenarios: readonly string[];
  why: string;
}

/** The rows every session's scenario runs on a working host: the confined shell's effects. */
const SHELL = ["fake-shell-confined"] as const;

export const HOSTS: readonly HostRow[] = [
  {
    id: "deb12-merged",
    base: "deb12",
    expect: { kind: "works" },
    scenarios: SHELL,
    why: "the layout every other tier runs on, booted as its own host: the baseline the other rows differ from",
  },
  {
    id: "deb12-split-usr",
    base: "deb12-split",
    expect: { kind: "works" },
    scenarios: SHELL,
    why: "/bin, /lib and /sbin are directories: the bind table must bind them, or sh and the loader are missing",
  },
  {
    id: "deb13",
    base: "deb13",
    expect: { kind: "works" },
    scenarios: SHELL,
    why: "the next Debian release's bwrap and glibc",
  },
  {
    id: "deb11",
    base: "deb11",
    expect: { kind: "refuses", cause: "bwrap-too-old" },
    scenarios: [],
    why: "bwrap 0.4.1 has no --disable-userns; there is no weaker sandbox to fall back to",
  },
  {
    id: "node-under-opt",
    base: "deb12",
    nodeUnderOpt: true,
    expect: { kind: "works" },
    scenarios: [...SHELL, "claude-typed-send-message"],
    why: "node and the Claude Code binary outside /usr and the checkout: the bind table must bind each one",
  },
  {
    id: "seccomp-blocks-userns",
    base: "deb12",
    seccompBlocksUserns: true,
    expect: { kind: "refuses", cause: "container-seccomp" },
    scenarios: [],
    why: "Docker's default profile refuses the namespace calls bwrap starts with",
  },
  {
    id: "proc-masked",
    base: "deb12",
    procMasked: true,
    expect: { kind: "refuses", cause: "proc-masked" },
    scenarios: [],
    why: "podman and Docker cover parts of /proc, and the kernel then refuses a new procfs",
  },
];
