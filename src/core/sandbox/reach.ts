import { isWithin } from "../paths.ts";
import type { Bind, BindRow, SessionIdentity } from "./types.ts";

/** One path component as the host stat()ed it, without following a link at it. */
export interface PathStat {
  path: string;
  kind: "dir" | "file" | "socket" | "link" | "other" | "missing";
  /** Permission bits (mode & 0o7777). */
  mode: number;
  uid: number;
  gid: number;
}

export type Need = "search" | "read" | "exec" | "connect" | "write";

/**
 * What the session's identity must be able to do with each bind's source. bwrap opens every source
 * as that identity (a root caller's bwrap runs unprivileged), and the session then uses it: a
 * source it cannot reach makes bwrap fail with a bare "Can't find source path"; checked first, the
 * launcher refuses naming the path, its owner and mode instead.
 */
export const BIND_NEEDS: Readonly<Partial<Record<BindRow, { need: Need; why: string }>>> = {
  "runner-file": { need: "read", why: "node reads the runner's sources" },
  adapter: { need: "read", why: "the shell reads the adapter each turn" },
  node: { need: "exec", why: "node runs the gate and the MCP server" },
  "runner-node": { need: "exec", why: "the runner runs on it (execute-only: no read needed)" },
  "node-modules": { need: "read", why: "Pi and its packages load from it" },
  packages: { need: "read", why: "the MCP server loads them" },
  "claude-bin": { need: "exec", why: "each Claude Code turn runs it" },
  "broker-socket": { need: "connect", why: "the runner claims and calls through it" },
  "launch-socket": { need: "connect", why: "the launch tool calls it" },
  workspace: { need: "write", why: "the harness works in it" },
  "run-dir": { need: "write", why: "the runner writes turns/ and session/" },
};

const BITS: Record<Exclude<Need, "search">, number> = { read: 4, exec: 1, connect: 2, write: 2 };

/** The permission bits (rwx as 4, 2, 1) that apply to the identity: owner's, group's or other's. */
function bitsFor(id: SessionIdentity, st: PathStat): number {
  if (st.uid === id.uid) return (st.mode >> 6) & 7;
  if (st.gid === id.gid) return (st.mode >> 3) & 7;
  return st.mode & 7;
}

/**
 * Why the identity cannot use a bind's source, or null. `chain` is every component of the source's
 * real path from the root down, the source last. Without capabilities only the mode bits count.
 */
export function reachProblem(id: SessionIdentity, chain: readonly PathStat[], need: Need): string | null {
  const target = chain.at(-1);
  if (target === undefined || target.kind === "missing") return `${target?.path ?? "(empty path)"} does not exist`;
  for (const st of chain.slice(0, -1)) {
    if (st.kind !== "dir") return `${st.path} is not a directory`;
    if ((bitsFor(id, st) & 1) === 0)
      return `uid ${id.uid} cannot enter ${st.path} (mode ${oct(st.mode)}, owner ${st.uid}:${st.gid})`; // safety: reach-ancestors-unchecked
  }
  if (need === "search" && target.kind !== "dir") return null;
  if (need === "search")
    return (bitsFor(id, target) & 1) === 0
      ? `uid ${id.uid} cannot enter ${target.path} (mode ${oct(target.mode)}, owner ${target.uid}:${target.gid})`
      : null;
  const want =
    need === "read" && target.kind === "dir" ? 5 : BITS[need] | (need === "write" && target.kind === "dir" ? 1 : 0);
  if ((bitsFor(id, target) & want) !== want)
    return `uid ${id.uid} cannot ${need === "connect" ? "connect to" : need} ${target.path} (mode ${oct(target.mode)}, owner ${target.uid}:${target.gid})`;
  return null;
}

const oct = (m: number) => `0${(m & 0o7777).toString(8)}`;

/**
 * The binds whose source the session's identity must reach, with what it needs of each. Trees the
 * launcher hands to the identity (`owned`: the workspace and the run directory) need only their
 * parent searchable: what lies in them will be the identity's own.
 */
export function bindNeeds(
  table: readonly Bind[],
  owned: readonly string[] = [],
): Array<{ source: string; need: Need; row: BindRow }> {
  const out: Array<{ source: string; need: Need; row: BindRow }> = [];
  const seen = new Set<string>();
  for (const b of table) {
    // A try-bind is the host's own system file, or nothing where the host lacks it.
    if (b.source === null || b.mode === "symlink" || b.mode === "ro-empty" || b.mode === "ro-try") continue;
    const root = owned.find((o) => isWithin(b.source!, o));
    if (root !== undefined) {
      const parent = root.slice(0, root.lastIndexOf("/")) || "/";
      if (!seen.has(parent)) out.push({ source: parent, need: "search", row: b.row });
      seen.add(parent);
      continue;
    }
    out.push({ source: b.source, need: BIND_NEEDS[b.row]?.need ?? "search", row: b.row });
  }
  return out;
}
