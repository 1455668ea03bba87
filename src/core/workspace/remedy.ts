import { isWithin } from "../paths.ts";
import { WORKSPACE_FINDINGS, type Finding, type FindingKind } from "./findings.ts";

/** One thing the host does about a finding. */
export type Remedy =
  | { op: "move"; kind: FindingKind; from: string; to: string; detail: string }
  | { op: "clear-setid"; kind: FindingKind; path: string; mode: number; detail: string }
  /** Nothing can be done here (the workspace itself): the report says unsafe. */
  | { op: "none"; kind: FindingKind; path: string; detail: string };

/** What the host did, as the launch record and LaunchEnd carry it; paths relative to the workspace. */
export interface Done {
  kind: FindingKind;
  path: string;
  did: "moved" | "cleared-setid";
  /** moved: where to, under the quarantine directory. */
  to?: string;
  detail: string;
}

export interface Failed {
  kind: FindingKind | "check";
  path: string;
  error: string;
}

/**
 * The end-of-session check's outcome. `clean`: nothing found. `quarantined`: everything found was
 * moved out or had its bits cleared, and a second look found nothing. `unsafe`: something is still
 * there (a remedy failed, or the check could not run): the founder must not run git in it yet.
 */
export type WorkspaceCheck =
  | { verdict: "clean"; workspace: string }
  | { verdict: "quarantined"; workspace: string; quarantine: string; done: Done[] }
  | { verdict: "unsafe"; workspace: string; quarantine: string; done: Done[]; failed: Failed[] };

/**
 * The remedies for a workspace's findings: each quarantined path moves to the same relative path
 * under `files/` of the quarantine directory; a setuid or setgid file keeps its place and loses
 * the bits. Nothing is deleted. A path under one already moved needs nothing more.
 */
export function planRemedies(workspace: string, quarantine: string, findings: readonly Finding[]): Remedy[] {
  const out: Remedy[] = [];
  const moved: string[] = [];
  const ordered = [...findings].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of ordered) {
    if (moved.some((m) => isWithin(f.path, m))) continue;
    if (f.path === workspace || !isWithin(f.path, workspace)) {
      out.push({
        op: "none",
        kind: f.kind,
        path: f.path,
        detail: `${f.detail}; the workspace itself cannot be moved aside`,
      });
      continue;
    }
    if (WORKSPACE_FINDINGS[f.kind].action === "quarantine") {
      // safety: ws-quarantine-all
      out.push({
        op: "move",
        kind: f.kind,
        from: f.path,
        to: `${quarantine}/files/${f.path.slice(workspace.length + 1)}`,
        detail: f.detail,
      });
      moved.push(f.path);
    } else
      out.push({
        op: "clear-setid",
        kind: f.kind,
        path: f.path,
        mode: (f.mode ?? 0) & 0o7777 & ~0o6000,
        detail: f.detail,
      });
  }
  return out;
}

/** The report: what was done, what failed, and what a second look still found. */
export function reportOf(
  workspace: string,
  quarantine: string,
  done: readonly Done[],
  failed: readonly Failed[],
  left: readonly Finding[],
): WorkspaceCheck {
  if (done.length === 0 && failed.length === 0 && left.length === 0) return { verdict: "clean", workspace };
  const still: Failed[] = left.map((f) => ({
    kind: f.kind,
    path: relativeTo(workspace, f.path),
    error: `still there after the remedies: ${f.detail}`,
  }));
  if (failed.length > 0 || still.length > 0)
    return { verdict: "unsafe", workspace, quarantine, done: [...done], failed: [...failed, ...still] };
  return { verdict: "quarantined", workspace, quarantine, done: [...done] };
}

export function relativeTo(workspace: string, p: string): string {
  return p === workspace ? "." : isWithin(p, workspace) ? p.slice(workspace.length + 1) : p;
}
