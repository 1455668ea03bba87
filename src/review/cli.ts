// `npm run goldens:review [-- --base REF] [--head REV] [--markdown | --json] [--github DIR]`: the
// changed goldens, ranked by what they do to confinement, and the proof review beside them: the
// catalog, the safety tags, the equivalence arguments, each tier's tests and the files a verdict
// rests on. Without --github: exit 0 when nothing weakens and nothing is unknown, 1 otherwise.
// With --github DIR (the pull request and its reviews as GitHub's REST API gave them): exit 0 only
// when a code owner other than the author approved each such finding on the current head. Exit 2
// for a bad command line, a git that cannot answer, or payloads that do not read.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  approvalsExitCode,
  checkApprovals,
  checkPayloads,
  type CheckedFinding,
  type PullPayload,
  type ReviewPayload,
} from "./approvals.ts";
import { exitCodeOf, reviewGoldens } from "./classify.ts";
import { parseCodeowners } from "./codeowners.ts";
import {
  GitError,
  findRepoRoot,
  readAt,
  readChangedFiles,
  requireCommit,
  resolveBase,
  resolveHead,
} from "./git-goldens.ts";
import { readsForProof, reviewProof } from "./proof.ts";
import {
  renderApprovals,
  renderJson,
  renderMarkdown,
  renderProofMarkdown,
  renderProofText,
  renderText,
} from "./render.ts";

export const USAGE = `usage: npm run goldens:review -- [--base REF] [--head REV] [--markdown | --json] [--github DIR]

  --base REF     compare with the merge base of REF and the head
                 (default: the merge base with main, or HEAD on main)
  --head REV     the commit reviewed (default: the work tree); needs --base
  --markdown     the report as Markdown, for a CI job summary or a pull-request comment
  --json         the report as JSON, for scripts
  --github DIR   DIR/pull.json and DIR/reviews.json, GitHub's REST payloads of the pull request
                 and its reviews: each finding that weakens or is unknown needs a code owner's
                 approval (CODEOWNERS at the pull request's base), not the author's, of the head,
                 naming it: a line "approve <id>: <why>" in the review's body

exit codes: 0 nothing weakens and nothing is unknown (with --github: each is approved); 1 otherwise;
            2 bad usage, a revision git cannot find, payloads that do not read`;

export type ReviewArgs =
  | {
      kind: "review";
      base: string | undefined;
      head: string | undefined;
      format: "text" | "markdown" | "json";
      github: string | undefined;
    }
  | { kind: "help" }
  | { kind: "usage-error"; message: string };

const VALUED = ["--base", "--head", "--github"] as const;

export function parseReviewArgs(argv: readonly string[]): ReviewArgs {
  const formats: ("markdown" | "json")[] = [];
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--help" || a === "-h") return { kind: "help" };
    if (a === "--markdown") formats.push("markdown");
    else if (a === "--json") formats.push("json");
    else if (VALUED.some((v) => a === v || a.startsWith(`${v}=`))) {
      const name = a.split("=")[0]!;
      const v = a.includes("=") ? a.slice(name.length + 1) : argv[++i];
      if (v === undefined || v === "" || v.startsWith("-"))
        return { kind: "usage-error", message: `${name} needs a value` };
      if (values.has(name)) return { kind: "usage-error", message: `${name} given twice` };
      values.set(name, v);
    } else return { kind: "usage-error", message: `unknown argument ${JSON.stringify(a)}` };
  }
  if (formats.length > 1) return { kind: "usage-error", message: "--markdown and --json: choose one" };
  if (values.has("--head") && !values.has("--base"))
    return { kind: "usage-error", message: "--head needs --base: the revision it is compared with" };
  return {
    kind: "review",
    base: values.get("--base"),
    head: values.get("--head"),
    format: formats[0] ?? "text",
    github: values.get("--github"),
  };
}

export class PayloadError extends Error {}

/** The recorded pull request and reviews under dir, checked against the commit reviewed. */
function readGithub(dir: string, head: string | null): { pull: PullPayload; reviews: ReviewPayload[] } {
  const read = (name: string): unknown => {
    const p = join(dir, name);
    if (!existsSync(p)) throw new PayloadError(`${p}: missing`);
    try {
      return JSON.parse(readFileSync(p, "utf8"));
    } catch (e) {
      throw new PayloadError(`${p}: not JSON: ${(e as Error).message}`);
    }
  };
  const pull = read("pull.json");
  const reviews = read("reviews.json");
  const problems = checkPayloads(pull, reviews, head);
  if (problems.length > 0) throw new PayloadError(problems.join("; "));
  return { pull: pull as PullPayload, reviews: reviews as ReviewPayload[] };
}

function review(args: Extract<ReviewArgs, { kind: "review" }>, cwd: string, out: (s: string) => void): number {
  const root = findRepoRoot(cwd);
  const head = resolveHead(root, args.head);
  const base = resolveBase(root, args.base, head);
  const changed = readChangedFiles(root, base, head, (p) => p.startsWith("goldens/") || readsForProof(p));
  const report = reviewGoldens(changed.filter((p) => p.path.startsWith("goldens/")));
  const proof = reviewProof(changed.filter((p) => !p.path.startsWith("goldens/")));
  const all = [...report.findings, ...proof.findings];
  let checked: CheckedFinding[] | null = null;
  if (args.github !== undefined) {
    const { pull, reviews } = readGithub(args.github, head);
    // GitHub reads CODEOWNERS from the branch the pull request goes into, never from its own tree.
    const at = requireCommit(root, pull.base.sha, "pull.json base.sha");
    const owners = parseCodeowners(readAt(root, at, ".github/CODEOWNERS") ?? ""); // safety: codeowners-from-base
    checked = checkApprovals(all, pull, reviews, owners);
  }
  const label = head === null ? base.label : `${base.label}; head ${head.slice(0, 12)}`;
  if (args.format === "json") out(renderJson(report, label, proof, checked));
  else if (args.format === "markdown")
    out(renderMarkdown(report, label) + renderProofMarkdown(proof) + renderApprovals(all, checked, "markdown"));
  else out(renderText(report, label) + renderProofText(proof) + renderApprovals(all, checked, "text"));
  if (checked !== null) return approvalsExitCode(checked);
  return Math.max(exitCodeOf(report), proof.counts.weakens + proof.counts.unknown > 0 ? 1 : 0); // safety: proof-exit-code
}

export function main(argv: readonly string[], cwd: string, out: (s: string) => void, err: (s: string) => void): number {
  const args = parseReviewArgs(argv);
  if (args.kind === "help") {
    out(USAGE + "\n");
    return 0;
  }
  if (args.kind === "usage-error") {
    err(`goldens:review: ${args.message}\n${USAGE}\n`);
    return 2;
  }
  try {
    return review(args, cwd, out);
  } catch (e) {
    if (e instanceof GitError || e instanceof PayloadError) {
      err(`goldens:review: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
