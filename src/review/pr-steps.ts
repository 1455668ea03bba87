// The pull-request review job's three steps, each an npm script the workflow runs in a job that
// checks out the base branch only and runs no code of the pull request: fetch (which pull request
// has the finished run's head, its reviews, and its commits as git objects), review (the base's
// review over the head's files as data), post (the comment and the commit status). Files pass
// between the steps under .scratch/pr. The decisions are in github.ts, approvals.ts and cli.ts.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PullPayload } from "./approvals.ts";
import { main } from "./cli.ts";
import { fitComment, planComment, selectPulls, statusFor } from "./github.ts";
import { apiFrom, need } from "./github-io.ts";

export const PR_DIR = ".scratch/pr";
type Log = (s: string) => void;

const hasCommit = (root: string, sha: string) =>
  spawnSync("git", ["cat-file", "-e", `${sha}^{commit}`], { cwd: root }).status === 0;

/** The pull request's head and base as git objects; the token, if any, only for this fetch. */
function fetchCommits(root: string, env: NodeJS.ProcessEnv, pull: PullPayload, log: Log): void {
  if (hasCommit(root, pull.head.sha) && hasCommit(root, pull.base.sha)) return;
  const auth = env.GITHUB_TOKEN
    ? {
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: `http.${env.GITHUB_SERVER_URL ?? "https://github.com"}/.extraheader`,
        GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${env.GITHUB_TOKEN}`).toString("base64")}`,
      }
    : {};
  const refs = [pull.base.sha, `+refs/pull/${pull.number}/head:refs/remotes/pull/${pull.number}/head`];
  log(`fetching the base ${pull.base.sha.slice(0, 12)} and pull request #${pull.number}'s head`);
  const r = spawnSync("git", ["fetch", "--no-tags", "origin", ...refs], {
    cwd: root,
    env: { ...env, ...auth },
    encoding: "utf8",
  });
  if (r.status !== 0 || !hasCommit(root, pull.head.sha)) throw new Error(`git fetch failed: ${r.stderr}`);
}

export async function fetchStep(root: string, env: NodeJS.ProcessEnv, log: Log): Promise<number> {
  const repo = need(env, "GITHUB_REPOSITORY");
  const head = need(env, "REVIEW_HEAD_SHA");
  const dir = join(root, PR_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const api = apiFrom(env);
  const pulls = selectPulls(await api.list(`/repos/${repo}/pulls?state=open`), head);
  if (pulls.length === 0) {
    log(`no open pull request has the head ${head.slice(0, 12)}: nothing to review`);
    return 0;
  }
  const pull = pulls.sort((a, b) => a.number - b.number)[0]!;
  if (pulls.length > 1) log(`${pulls.length} open pull requests share this head; reviewing #${pull.number}`);
  const reviews = await api.list(`/repos/${repo}/pulls/${pull.number}/reviews`);
  writeFileSync(join(dir, "pull.json"), JSON.stringify(pull, null, 2) + "\n");
  writeFileSync(join(dir, "reviews.json"), JSON.stringify(reviews, null, 2) + "\n");
  fetchCommits(root, env, pull, log);
  log(`pull request #${pull.number} by @${pull.user.login}: ${reviews.length} review(s)`);
  return 0;
}

export function reviewStep(root: string, env: NodeJS.ProcessEnv, log: Log): number {
  const dir = join(root, PR_DIR);
  if (!existsSync(join(dir, "pull.json"))) return 0;
  const pull = JSON.parse(readFileSync(join(dir, "pull.json"), "utf8")) as PullPayload;
  let report = "";
  const code = main(
    ["--base", pull.base.sha, "--head", pull.head.sha, "--markdown", "--github", dir],
    root,
    (s) => (report += s),
    (s) => (report += `\n\n${s}`),
  );
  writeFileSync(join(dir, "report.md"), report);
  writeFileSync(join(dir, "exit"), `${code}\n`);
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, report);
  log(report);
  log(`goldens:review exit ${code} (1: a change that weakens or is unknown has no code owner's approval)`);
  return 0;
}

export async function postStep(root: string, env: NodeJS.ProcessEnv, log: Log): Promise<number> {
  const dir = join(root, PR_DIR);
  if (!existsSync(join(dir, "exit"))) return 0;
  const repo = need(env, "GITHUB_REPOSITORY");
  const pull = JSON.parse(readFileSync(join(dir, "pull.json"), "utf8")) as PullPayload;
  const code = Number(readFileSync(join(dir, "exit"), "utf8").trim());
  const body = fitComment(readFileSync(join(dir, "report.md"), "utf8"));
  const api = apiFrom(env);
  const plan = planComment(await api.list(`/repos/${repo}/issues/${pull.number}/comments`));
  if (plan.kind === "update") await api.send("PATCH", `/repos/${repo}/issues/comments/${plan.id}`, { body });
  else await api.send("POST", `/repos/${repo}/issues/${pull.number}/comments`, { body });
  const url = env.GITHUB_RUN_ID
    ? `${env.GITHUB_SERVER_URL ?? "https://github.com"}/${repo}/actions/runs/${env.GITHUB_RUN_ID}`
    : undefined;
  await api.send("POST", `/repos/${repo}/statuses/${pull.head.sha}`, statusFor(code, url));
  log(
    `posted the report on #${pull.number} and the status "${statusFor(code, url).state}" on ${pull.head.sha.slice(0, 12)}`,
  );
  return code;
}
