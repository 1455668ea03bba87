// Approvals of golden weakenings, reviewed like code: one row per approved finding in
// golden-approvals.json at the repository root, naming the golden, the case, the rule that fired,
// the hash of exactly the change approved, who approved it and why. A finding that weakens or is
// unknown needs a row with its hash; a row for the same golden and case with another hash is stale
// (the approved change was changed again) and fails too. Rows that match no finding are history.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Finding } from "./model.ts";

export const APPROVALS_FILE = "golden-approvals.json";

export type Approval = {
  golden: string;
  case: string;
  /** The rule that fired; null for an unknown change. */
  rule: string | null;
  verdict: "weakens" | "unknown";
  /** The hash of the finding approved: its golden, case, rule, before and after. */
  hash: string;
  approvedBy: string;
  why: string;
};

export type ApprovalState = "approved" | "unapproved" | "stale";
export type CheckedFinding = { finding: Finding; state: ApprovalState };

/** The hash that ties an approval to exactly one reviewed change. */
export function hashFinding(f: Finding): string {
  return createHash("sha256")
    .update(JSON.stringify([f.file, f.case, f.rule, f.before, f.after]))
    .digest("hex")
    .slice(0, 16);
}

const needsApproval = (f: Finding): boolean => f.verdict === "weakens" || f.verdict === "unknown";

/** Each finding that needs an approval, with whether it has one, has only a stale one, or has none. */
export function checkApprovals(findings: readonly Finding[], approvals: readonly Approval[]): CheckedFinding[] {
  return findings.filter(needsApproval).map((finding) => {
    const hash = hashFinding(finding);
    const same = approvals.filter((a) => a.golden === finding.file && a.case === finding.case);
    if (same.some((a) => a.hash === hash)) return { finding, state: "approved" }; // safety: approval-hash-exact
    return { finding, state: same.length > 0 ? "stale" : "unapproved" };
  });
}

/** 0 when every finding that needs an approval has a current one; 1 otherwise. */
export function approvalsExitCode(checked: readonly CheckedFinding[]): 0 | 1 {
  return checked.every((c) => c.state === "approved") ? 0 : 1; // safety: approvals-required
}

/**
 * The approvals with a row for each finding of `golden` (and `case`, when given) that needs one,
 * replacing that golden and case's earlier rows; or why none can be written.
 */
export function addApprovals(
  approvals: readonly Approval[],
  findings: readonly Finding[],
  target: { golden: string; case?: string },
  by: string,
  why: string,
): { approvals: Approval[]; added: Approval[] } | { error: string } {
  if (why.trim() === "") return { error: "--why is empty: say in one sentence why the change is safe" };
  if (by.trim() === "") return { error: "no approver: pass --by <name> (or set git's user.name)" };
  const picked = findings.filter(
    (f) => needsApproval(f) && f.file === target.golden && (target.case === undefined || f.case === target.case),
  );
  if (picked.length === 0)
    return {
      error: `--approve ${target.golden}${target.case === undefined ? "" : `#${target.case}`}: no weakening or unknown change of it against the base`,
    };
  const added = picked.map(
    (f): Approval => ({
      golden: f.file,
      case: f.case,
      rule: f.rule,
      verdict: f.verdict as Approval["verdict"],
      hash: hashFinding(f),
      approvedBy: by.trim(),
      why: why.trim(),
    }),
  );
  const replaced = (a: Approval) => added.some((n) => n.golden === a.golden && n.case === a.case);
  return { approvals: [...approvals.filter((a) => !replaced(a)), ...added], added };
}

/** The approvals file under root; none is an empty list. Throws, naming the file and row, on a bad one. */
export function readApprovals(root: string): Approval[] {
  const path = join(root, APPROVALS_FILE);
  if (!existsSync(path)) return [];
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${APPROVALS_FILE}: not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(json)) throw new Error(`${APPROVALS_FILE}: not a list of approvals`);
  const fields = ["golden", "case", "hash", "approvedBy", "why"] as const;
  json.forEach((row: Record<string, unknown>, i) => {
    for (const k of fields)
      if (typeof row?.[k] !== "string" || row[k] === "")
        throw new Error(`${APPROVALS_FILE}: row ${i + 1}: ${k} is missing or empty`);
  });
  return json as Approval[];
}

export function writeApprovals(root: string, approvals: readonly Approval[]): void {
  const sorted = [...approvals].sort((a, b) => `${a.golden}\0${a.case}`.localeCompare(`${b.golden}\0${b.case}`));
  writeFileSync(join(root, APPROVALS_FILE), JSON.stringify(sorted, null, 2) + "\n");
}
