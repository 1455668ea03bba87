// `npm run goldens:review [-- --base REF] [--markdown | --json]`: the changed goldens, ranked by
// what they do to confinement. Exit 0 when nothing weakens and nothing is unknown; 1 otherwise, so
// CI can ask for a reviewer's approval; 2 for a bad command line or a git that cannot answer.
import { exitCodeOf, reviewGoldens } from "./classify.ts";
import { GitError, findRepoRoot, readChangedGoldens, resolveBase } from "./git-goldens.ts";
import { renderJson, renderMarkdown, renderText } from "./render.ts";

export const USAGE = `usage: npm run goldens:review -- [--base REF] [--markdown | --json]

  --base REF   compare the work tree with the merge base of REF and HEAD
               (default: the merge base with main, or HEAD on main)
  --markdown   the report as Markdown, for a CI job summary or a pull-request comment
  --json       the report as JSON, for scripts

exit codes: 0 nothing weakens and nothing is unknown; 1 something weakens or is unknown; 2 bad usage`;

export type ReviewArgs =
  | { kind: "review"; base: string | undefined; format: "text" | "markdown" | "json" }
  | { kind: "help" }
  | { kind: "usage-error"; message: string };

export function parseReviewArgs(argv: readonly string[]): ReviewArgs {
  let base: string | undefined;
  const formats: ("markdown" | "json")[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--help" || a === "-h") return { kind: "help" };
    if (a === "--markdown") formats.push("markdown");
    else if (a === "--json") formats.push("json");
    else if (a === "--base" || a.startsWith("--base=")) {
      const v = a === "--base" ? argv[++i] : a.slice(7);
      if (v === undefined || v === "" || v.startsWith("-"))
        return { kind: "usage-error", message: "--base needs a revision" };
      if (base !== undefined) return { kind: "usage-error", message: "--base given twice" };
      base = v;
    } else return { kind: "usage-error", message: `unknown argument ${JSON.stringify(a)}` };
  }
  if (formats.length > 1) return { kind: "usage-error", message: "--markdown and --json: choose one" };
  return { kind: "review", base, format: formats[0] ?? "text" };
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
    const render = args.format === "markdown" ? renderMarkdown : args.format === "json" ? renderJson : renderText;
    out(render(report, base.label));
    return exitCodeOf(report);
  } catch (e) {
    if (e instanceof GitError) {
      err(`goldens:review: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
