// .ci/run rehearses the workflows on one fresh machine before they reach GitHub: each job's npm
// scripts, in the job's order and as the job's identity. Pure: the texts in, the gaps out.
import type { JobScript } from "./workflow-policy.ts";

/** One npm script .ci/run runs, and whether as its unprivileged user (run_as_user) or as root. */
export type CiRunScript = { script: string; user: boolean; line: number };

/**
 * The npm scripts .ci/run runs on a root machine (CI's), in order. The branch for a caller that is
 * not root (`else` up to its `fi`) is not CI's path and is left out.
 */
export function ciRunScripts(text: string): CiRunScript[] {
  const out: CiRunScript[] = [];
  let skipping = false;
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/#.*$/, "");
    if (/^else\b/.test(line)) skipping = true;
    else if (/^fi\b/.test(line)) skipping = false;
    if (skipping) return;
    for (const m of line.matchAll(/\bnpm (?:run (?:--silent )?([a-z][a-z:-]*)|(start)\b)/g))
      out.push({ script: m[1] ?? m[2]!, user: /\brun_as_user\b/.test(line), line: i + 1 });
  });
  return out;
}

/** A job's step .ci/run does not rehearse, with why; keyed `<workflow> <job>`, `*` for every script. */
export type Exemptions = Readonly<Record<string, { scripts: readonly string[] | "*"; why: string }>>;

/**
 * Each job's scripts that .ci/run does not run in the job's order and as the job's identity. A step
 * that runs only on a pull request is skipped: .ci/run rehearses a push to main.
 */
export function rehearsalGaps(
  workflow: string,
  jobs: Readonly<Record<string, readonly JobScript[]>>,
  ci: readonly CiRunScript[],
  exempt: Exemptions,
): string[] {
  const gaps: string[] = [];
  for (const [job, steps] of Object.entries(jobs)) {
    const ex = exempt[`${workflow} ${job}`];
    const wanted = steps.filter(
      (s) =>
        !/github\.event_name == 'pull_request'/.test(s.when ?? "") &&
        !(ex?.scripts === "*" || ex?.scripts.includes(s.script)),
    );
    let at = 0;
    for (const s of wanted) {
      // safety: ci-parity-identity
      const i = ci.findIndex((c, k) => k >= at && c.script === s.script && c.user === !s.root);
      if (i === -1) {
        gaps.push(
          `${workflow} job ${job}: .ci/run does not run \`npm run ${s.script}\` as ${s.root ? "root" : "its user"} after the job's earlier steps`,
        );
        continue;
      }
      at = i + 1; // safety: ci-parity-order
    }
  }
  return gaps;
}
