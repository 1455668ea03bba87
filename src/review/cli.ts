// `npm run goldens:review [-- --base REF] [--markdown | --json] [--require-approvals]`: the changed
// goldens, ranked by what they do to confinement, each change that needs an approval marked with
// its state in golden-approvals.json. Exit 0 when nothing weakens and nothing is unknown (with
// --require-approvals: when each such change has a current approval); 1 otherwise; 2 for a bad
// command line, a bad approvals file or a git that cannot answer. `--approve <golden>[#case] --why
// "..."` writes the approval rows for the current changes of that golden.
import { execFileSync } from "node:child_process";
import {
  addApprovals,
  approvalsExitCode,
  checkApprovals,
  readApprovals,
  writeApprovals,
  APPROVALS_FILE,
} from "./approvals.ts";
import { exitCodeOf, reviewGoldens } from "./classify.ts";
import { GitError, findRepoRoot, readChangedGoldens, resolveBase } from "./git-goldens.ts";
import { renderApprovals, renderJson, renderMarkdown, renderText } from "./render.ts";

export const USAGE = `usage: npm run goldens:review -- [--base REF] [--markdown | --json] [--require-approvals]
       npm run goldens:review -- [--base REF] --approve GOLDEN[#CASE] --why "one sentence" [--by NAME]

  --base REF            compare the work tree with the merge base of REF and HEAD
                        (default: the merge base with main, or HEAD on main)
  --markdown            the report as Markdown, for a CI job summary or a pull-request comment
  --json                the report as JSON, for scripts
  --require-approvals   exit 1 only for a change that weakens or is unknown with no current
                        approval in ${APPROVALS_FILE}, or with a stale one
  --approve GOLDEN      write approvals for the changes of GOLDEN (a path under goldens/; #CASE
                        narrows it to one case) that weaken or are unknown; --why says why, --by
                        who (default: git's user.name)

exit codes: 0 nothing weakens and nothing is unknown (or each is approved); 1 otherwise; 2 bad usage`;

export type ReviewArgs =
  | { kind: "review"; base: string | undefined; format: "text" | "markdown" | "json"; requireApprovals: boolean }
  | { kind: "approve"; base: string | undefined; golden: string; case?: string; why: string; by?: string }
  | { kind: "help" }
  | { kind: "usage-error"; message: string };

export function parseReviewArgs(argv: readonly string[]): ReviewArgs {
  let base: string | undefined;
  const formats: ("markdown" | "json")[] = [];
  let requireApprovals = false;
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--help" || a === "-h") return { kind: "help" };
    if (a === "--markdown") formats.push("markdown");
    else if (a === "--json") formats.push("json");
    else if (a === "--require-approvals") requireApprovals = true;
    else if (a === "--approve" || a === "--why" || a === "--by") {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) return { kind: "usage-error", message: `${a} needs a value` };
      values.set(a, v);
    } else if (a === "--base" || a.startsWith("--base=")) {
      const v = a === "--base" ? argv[++i] : a.slice(7);
      if (v === undefined || v === "" || v.startsWith("-"))
        return { kind: "usage-error", message: "--base needs a revision" };
      if (base !== undefined) return { kind: "usage-error", message: "--base given twice" };
      base = v;
    } else return { kind: "usage-error", message: `unknown argument ${JSON.stringify(a)}` };
  }
  if (formats.length > 1) return { kind: "usage-error", message: "--markdown and --json: choose one" };
  const approve = values.get("--approve");
  if (approve === undefined) {
    if (values.size > 0) return { kind: "usage-error", message: "--why and --by go with --approve" };
    return { kind: "review", base, format: formats[0] ?? "text", requireApprovals };
  }
  if (formats.length > 0 || requireApprovals)
    return { kind: "usage-error", message: "--approve writes approvals; it takes no report format" };
  const why = values.get("--why");
  if (why === undefined)
    return { kind: "usage-error", message: "--approve needs --why: one sentence on why it is safe" };
  const hash = approve.indexOf("#");
  const by = values.get("--by");
  return {
    kind: "approve",
    base,
    golden: hash === -1 ? approve : approve.slice(0, hash),
    ...(hash === -1 ? {} : { case: approve.slice(hash + 1) }),
    why,
    ...(by === undefined ? {} : { by }),
  };
}

function gitUserName(root: string): string {
  try {
    return execFileSync("git", ["-C", root, "config", "user.name"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
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
    const root = findRepoRoot(cwd);
    const base = resolveBase(root, args.base);
    const report = reviewGoldens(readChangedGoldens(root, base));
    const approvals = readApprovals(root);
    if (args.kind === "approve") {
      const r = addApprovals(approvals, report.findings, args, args.by ?? gitUserName(root), args.why);
      if ("error" in r) {
        err(`goldens:review: ${r.error}\n`);
        return 2;
      }
      writeApprovals(root, r.approvals);
      for (const a of r.added)
        out(`approved in ${APPROVALS_FILE}: ${a.golden} · ${a.case} · ${a.rule ?? "(no rule)"} · ${a.hash}\n`);
      return 0;
    }
    const checked = checkApprovals(report.findings, approvals);
    const render = args.format === "markdown" ? renderMarkdown : args.format === "json" ? renderJson : renderText;
    out(render(report, base.label, checked));
    if (args.format !== "json") out(renderApprovals(checked, args.format));
    return args.requireApprovals ? approvalsExitCode(checked) : exitCodeOf(report);
  } catch (e) {
    if (e instanceof GitError) {
      err(`goldens:review: ${e.message}\n`);
      return 2;
    }
    if (e instanceof Error && e.message.startsWith(APPROVALS_FILE)) {
      err(`goldens:review: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
