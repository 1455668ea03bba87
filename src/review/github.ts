// The pull-request review's decisions over what GitHub's REST API returns: which open pull
// request a finished run's head commit belongs to, which comment to update, and the commit status
// that carries the verdict. Pure: payloads in, plans out. src/review/github-io.ts does the calls.
import type { PullPayload } from "./approvals.ts";
import { COMMENT_MARKER } from "./render.ts";

/** The open pull requests (REST `GET /repos/{o}/{r}/pulls?state=open`) whose head is this commit. */
export function selectPulls(pulls: unknown, headSha: string): PullPayload[] {
  if (!Array.isArray(pulls)) return [];
  return pulls.filter(
    (p): p is PullPayload =>
      typeof p === "object" && p !== null && (p as PullPayload).head?.sha === headSha && typeof p.number === "number",
  );
}

export type CommentPlan = { kind: "create" } | { kind: "update"; id: number };

/** The review's own comment (it starts with the marker) is updated in place; otherwise one is made. */
export function planComment(comments: unknown): CommentPlan {
  if (!Array.isArray(comments)) return { kind: "create" };
  const mine = comments.find(
    (c) => typeof c?.body === "string" && c.body.startsWith(COMMENT_MARKER) && c.user?.login === "github-actions[bot]",
  ) as { id: number } | undefined;
  return mine ? { kind: "update", id: mine.id } : { kind: "create" };
}

/** GitHub's comment limit is 65,536 characters; the whole report stays in the job summary. */
export function fitComment(body: string, limit = 60_000): string {
  return body.length <= limit
    ? body
    : `${body.slice(0, limit)}\n\n…cut here; the whole report is in the run's job summary.\n`;
}

export const STATUS_CONTEXT = "proof review";

/** The commit status (REST `POST /repos/{o}/{r}/statuses/{sha}`) for the review's exit code. */
export function statusFor(code: number, url: string | undefined): Record<string, string> {
  const [state, description] =
    code === 0
      ? ["success", "nothing weakens, or a code owner approved each change"]
      : code === 1
        ? ["failure", "a change that weakens or is unknown has no code owner's approval"]
        : ["error", "the review could not run: see the run's log"];
  return { state: state!, context: STATUS_CONTEXT, description: description!, ...(url ? { target_url: url } : {}) };
}
