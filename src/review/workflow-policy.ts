// What a workflow may do, checked on its text before it reaches GitHub: a read-only token by
// default; no credentials kept by a checkout; write permissions only in a job of a workflow that
// runs on workflow_run alone (the default branch's code) and checks out no other ref; no
// expression pasted into a shell (github.* values reach it through env:); and every run step one
// npm script (or npm ci, or a package install), so .ci/run can rehearse the same scripts.
import { parse } from "yaml";

type Step = { uses?: string; run?: string; with?: Record<string, unknown>; if?: string };
type Job = { permissions?: unknown; steps?: Step[] };
type Workflow = { on?: unknown; permissions?: unknown; jobs?: Record<string, Job> };

/** The run steps a workflow may have: an npm script (as root through sudo or not), npm ci, apt. */
export const RUN_FORMS: readonly RegExp[] = [
  /^(sudo -E env "PATH=\$PATH" )?npm (run [a-z:-]+|start)( -- [^;&|`$]*("?\$[A-Z_]+[^;&|`]*)?)?$/,
  /^npm ci --no-audit --no-fund$/,
  /^sudo apt-get update -qq && sudo apt-get install -y -qq( [a-z0-9.+-]+)+$/,
];

const triggersOf = (on: unknown): string[] =>
  typeof on === "string" ? [on] : Array.isArray(on) ? on.map(String) : Object.keys((on as object) ?? {});

const writes = (p: unknown): boolean =>
  p === "write-all" || (typeof p === "object" && p !== null && Object.values(p).some((v) => v === "write"));

/** The npm script a run step runs, or null for npm ci and package installs. */
export function scriptOf(run: string): string | null {
  const m = /npm (?:run ([a-z:-]+)|(start))/.exec(run);
  return m ? (m[1] ?? m[2]!) : null;
}

function checkSteps(
  where: string,
  steps: readonly Step[],
  scripts: ReadonlySet<string>,
  privileged: boolean,
): string[] {
  const out: string[] = [];
  steps.forEach((s, i) => {
    const at = `${where} step ${i + 1}`;
    if (s.uses?.startsWith("actions/checkout@") && s.with?.["persist-credentials"] !== false)
      // safety: workflow-persist-credentials
      out.push(`${at}: a checkout without persist-credentials: false keeps the token in .git/config`);
    if (
      privileged &&
      s.uses?.startsWith("actions/checkout@") &&
      (s.with?.ref !== undefined || s.with?.repository !== undefined)
    )
      out.push(`${at}: a job with write permissions checks out another ref: it would run that ref's code`);
    if (s.uses !== undefined && !/^actions\/[a-z-]+(\/[a-z-]+)?@v\d+$/.test(s.uses))
      out.push(`${at}: ${s.uses}: only GitHub's own actions`);
    if (s.run === undefined) return;
    const run = s.run.trim();
    if (run.includes("${{")) out.push(`${at}: an expression pasted into the shell; pass it through env:`); // safety: workflow-no-expression-in-run
    if (!RUN_FORMS.some((f) => f.test(run)))
      out.push(`${at}: not one npm script, npm ci or a package install: ${JSON.stringify(run)}`);
    const script = scriptOf(run);
    if (script !== null && !scripts.has(script)) out.push(`${at}: npm run ${script}: no such script in package.json`);
  });
  return out;
}

/** Every problem of one workflow's text against the policy; empty when it holds. */
export function checkWorkflow(path: string, text: string, scripts: ReadonlySet<string>): string[] {
  let wf: Workflow;
  try {
    wf = parse(text) as Workflow;
  } catch (e) {
    return [`${path}: not YAML: ${(e as Error).message}`];
  }
  const out: string[] = [];
  const top = wf.permissions as Record<string, unknown> | undefined;
  if (!top || Object.keys(top).length !== 1 || top.contents !== "read")
    // safety: workflow-read-only-default
    out.push(`${path}: the top-level permissions must be exactly contents: read`);
  const on = triggersOf(wf.on);
  if (on.includes("pull_request_target"))
    out.push(`${path}: pull_request_target runs with a write token beside a pull request's code`);
  for (const [name, job] of Object.entries(wf.jobs ?? {})) {
    const privileged = writes(job.permissions);
    if (privileged && !(on.length === 1 && on[0] === "workflow_run"))
      // safety: workflow-write-only-on-workflow-run
      out.push(
        `${path} job ${name}: write permissions in a workflow that runs on ${on.join(", ")}: only a workflow_run job, which runs the default branch's code, may write`,
      );
    out.push(...checkSteps(`${path} job ${name}`, job.steps ?? [], scripts, privileged));
  }
  return out;
}

/** One npm script a job runs: whether as root, and the step's `if:` (null when it always runs). */
export type JobScript = { script: string; root: boolean; when: string | null };

/** Each job's npm scripts, in order, and whether each runs as root: what .ci/run must rehearse. */
export function jobScripts(text: string): Record<string, JobScript[]> {
  const wf = parse(text) as Workflow;
  const out: Record<string, JobScript[]> = {};
  for (const [name, job] of Object.entries(wf.jobs ?? {}))
    out[name] = (job.steps ?? []).flatMap((s) => {
      const script = s.run === undefined ? null : scriptOf(s.run);
      return script === null ? [] : [{ script, root: s.run!.startsWith("sudo "), when: s.if ?? null }];
    });
  return out;
}
