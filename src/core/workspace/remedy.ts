import { isWithin } from "../paths.ts";
import { shownPath } from "./bytes.ts";
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
  | { verdict: "quarantined"; workspace: string; quarantine: string; done: Done[]; omitted?: Omitted }
  | { verdict: "unsafe"; workspace: string; quarantine: string; done: Done[]; failed: Failed[]; omitted?: Omitted };

/** How many more were done and failed than the report lists: present only when it lists fewer than there were. */
export interface Omitted {
  done: number;
  failed: number;
}

/**
 * How many of each the report lists: it rides in LaunchEnd and the launch record, so it stays a
 * few tens of KiB however many findings a session made (20,000 once made a 4 MiB record). The
 * quarantine directory itself holds every file that was moved.
 */
export const REPORT_LISTS = 100;

/**
 * Findings in tree order: a path's descendants come right after it (a slash sorts before every
 * other byte), so a path under one already moved is always under the last one moved.
 */
function inTreeOrder(findings: readonly Finding[]): Finding[] {
  const keyed = findings.map((f) => ({ f, key: f.path.replaceAll("/", "\u0000") }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.f);
}

/**
 * The remedies for a workspace's findings: each quarantined path moves to the same relative path
 * under `files/` of the quarantine directory; a setuid or setgid file keeps its place and loses
 * the bits. Nothing is deleted. A path under one already moved needs nothing more. One sort, then
 * one pass: the work grows with the findings, never with their square.
 */
export function planRemedies(workspace: string, quarantine: string, findings: readonly Finding[]): Remedy[] {
  const out: Remedy[] = [];
  let moved: string | null = null;
  for (const f of inTreeOrder(findings)) {
    if (moved !== null && isWithin(f.path, moved)) continue; // safety: ws-remedies-linear
    if (f.path === workspace || !isWithin(f.path, workspace) || WORKSPACE_FINDINGS[f.kind].action === "report") {
      const why = WORKSPACE_FINDINGS[f.kind].action === "report" ? "" : "; the workspace itself cannot be moved aside";
      out.push({ op: "none", kind: f.kind, path: f.path, detail: `${f.detail}${why}` });
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
      moved = f.path;
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

/** The report: what was done, what failed, and what a second look still found; each list cut at REPORT_LISTS. */
export function reportOf(
  workspace: string,
  quarantine: string,
  done: readonly Done[],
  failed: readonly Failed[],
  left: readonly Finding[],
): WorkspaceCheck {
  if (done.length === 0 && failed.length === 0 && left.length === 0) return { verdict: "clean", workspace };
  // What already failed (a remedy that could not be applied) is not told twice.
  const told = new Set(failed.map((f) => `${f.kind}\u0000${f.path}`));
  const still: Failed[] = left
    .map((f) => ({
      kind: f.kind,
      path: shownRelative(workspace, f.path),
      error: `still there after the remedies: ${f.detail}`,
    }))
    .filter((f) => !told.has(`${f.kind}\u0000${f.path}`));
  const failedAll = failed.length + still.length;
  // safety: ws-report-bounded
  const [listedDone, listedFailed] = [done.slice(0, REPORT_LISTS), [...failed, ...still].slice(0, REPORT_LISTS)];
  const omitted = { done: done.length - listedDone.length, failed: failedAll - listedFailed.length };
  const more = omitted.done > 0 || omitted.failed > 0 ? { omitted } : {};
  if (failedAll > 0)
    return { verdict: "unsafe", workspace, quarantine, done: listedDone, failed: listedFailed, ...more };
  return { verdict: "quarantined", workspace, quarantine, done: listedDone, ...more };
}

export function relativeTo(workspace: string, p: string): string {
  return p === workspace ? "." : isWithin(p, workspace) ? p.slice(workspace.length + 1) : p;
}

/** A byte path relative to the workspace (a byte string too), as a report shows it. */
export function shownRelative(workspace: string, p: string): string {
  return shownPath(relativeTo(workspace, p));
}
