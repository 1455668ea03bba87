// Approvals of findings that weaken or are unknown, decided from what GitHub recorded: the pull
// request (its author and current head) and its reviews, and CODEOWNERS as the base revision has
// it. A finding is approved only by a code owner of its file, other than the pull request's
// author, in an approving review of the current head whose body names the finding by its id on
// a line `approve <id>: <why>`. Nothing in the pull request's own tree approves anything: a
// review is tied to this pull request and to its head commit, so neither an earlier pull
// request's approval nor one given before the last push counts. Pure: payloads in, verdicts out.
import { createHash } from "node:crypto";
import { loginOf, ownersOf, type Codeowners } from "./codeowners.ts";
import type { Finding } from "./model.ts";

/** The fields of GitHub's pull request payload (REST `GET /repos/{o}/{r}/pulls/{n}`) read here. */
export type PullPayload = { number: number; user: { login: string }; head: { sha: string }; base: { sha: string } };

/** The fields of one review (REST `GET /repos/{o}/{r}/pulls/{n}/reviews`) read here, in list order. */
export type ReviewPayload = {
  id?: number;
  user: { login: string } | null;
  state: string;
  commit_id: string | null;
  body: string | null;
  submitted_at?: string;
};

export type Approval = { login: string; why: string; review?: number };
export type ApprovalState = "approved" | "unapproved";
export type CheckedFinding = {
  finding: Finding;
  id: string;
  state: ApprovalState;
  /** The file's code owners as CODEOWNERS names them. */
  owners: string[];
  approvals: Approval[];
  /** Why each approving review that named this finding does not count. */
  refused: string[];
};

/** The id that names one finding: a hash of its file, case, rule, before and after. */
export function hashFinding(f: Finding): string {
  return createHash("sha256")
    .update(JSON.stringify([f.file, f.case, f.rule, f.before, f.after]))
    .digest("hex")
    .slice(0, 16);
}

export const needsApproval = (f: Finding): boolean => f.verdict === "weakens" || f.verdict === "unknown";

/** `approve <id>: <why>` lines of a review body, by id; a line with no why approves nothing. */
export function readApprovalLines(body: string | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (body ?? "").split(/\r?\n/)) {
    const m = /^\s*(?:[-*]\s+)?approve\s+`?([0-9a-f]{16})`?\s*:\s*(\S.*)$/i.exec(line);
    if (m) out.set(m[1]!.toLowerCase(), m[2]!.trim());
  }
  return out;
}

/**
 * Reviews that stand: by each reviewer, those after their last request for changes. A dismissed
 * approval is listed as DISMISSED and so never counts.
 */
function standingReviews(reviews: readonly ReviewPayload[]): ReviewPayload[] {
  const lastBlock = new Map<string, number>();
  reviews.forEach((r, i) => {
    if (r.user && r.state === "CHANGES_REQUESTED") lastBlock.set(r.user.login.toLowerCase(), i);
  });
  return reviews.filter((r, i) => r.user !== null && i > (lastBlock.get(r.user.login.toLowerCase()) ?? -1));
}

/** Why a review that names a finding does not approve it, or null when it does. */
function refusalOf(r: ReviewPayload, pull: PullPayload, owners: readonly string[]): string | null {
  const login = r.user!.login;
  if (r.state !== "APPROVED") return `@${login}'s review is ${r.state}, not an approval`; // safety: approval-state
  if (login.toLowerCase() === pull.user.login.toLowerCase()) return `@${login} wrote the pull request`; // safety: approval-not-author
  if (r.commit_id !== pull.head.sha) return `@${login} approved ${String(r.commit_id).slice(0, 12)}, not the head`; // safety: approval-current-head
  const owner = owners.some((o) => loginOf(o) === login.toLowerCase());
  if (!owner) return `@${login} is not a code owner of it (${owners.join(" ") || "no owner"})`; // safety: approval-code-owner
  return null;
}

/** Each finding that needs an approval, with who approved it and why, or why nobody did. */
export function checkApprovals(
  findings: readonly Finding[],
  pull: PullPayload,
  reviews: readonly ReviewPayload[],
  codeowners: Codeowners,
): CheckedFinding[] {
  const standing = standingReviews(reviews).map((r) => ({ r, lines: readApprovalLines(r.body) }));
  return findings.filter(needsApproval).map((finding) => {
    const id = hashFinding(finding);
    const owners = ownersOf(codeowners, finding.file);
    const approvals: Approval[] = [];
    const refused: string[] = [];
    for (const { r, lines } of standing) {
      const why = lines.get(id);
      if (why === undefined) continue; // safety: approval-names-finding
      const no = refusalOf(r, pull, owners);
      if (no === null) approvals.push({ login: r.user!.login, why, ...(r.id === undefined ? {} : { review: r.id }) });
      else refused.push(no);
    }
    return { finding, id, state: approvals.length > 0 ? "approved" : "unapproved", owners, approvals, refused };
  });
}

/** 0 when every finding that needs an approval has one; 1 otherwise. */
export function approvalsExitCode(checked: readonly CheckedFinding[]): 0 | 1 {
  return checked.every((c) => c.state === "approved") ? 0 : 1; // safety: approvals-required
}

/** Problems of the recorded payloads that make any verdict over them meaningless; empty when none. */
export function checkPayloads(pull: unknown, reviews: unknown, head: string | null): string[] {
  const p = pull as Partial<PullPayload> | null;
  const problems: string[] = [];
  if (typeof p?.number !== "number") problems.push("pull.json: no number");
  if (typeof p?.user?.login !== "string") problems.push("pull.json: no user.login");
  if (typeof p?.head?.sha !== "string") problems.push("pull.json: no head.sha");
  if (typeof p?.base?.sha !== "string") problems.push("pull.json: no base.sha");
  if (!Array.isArray(reviews)) problems.push("reviews.json: not a list of reviews");
  else
    reviews.forEach((r: Partial<ReviewPayload>, i) => {
      if (typeof r?.state !== "string") problems.push(`reviews.json: review ${i + 1}: no state`);
    });
  if (head !== null && typeof p?.head?.sha === "string" && p.head.sha !== head)
    problems.push(`pull.json: head.sha ${p.head.sha.slice(0, 12)} is not the commit reviewed (${head.slice(0, 12)})`);
  return problems;
}
