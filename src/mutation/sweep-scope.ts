// Which swept files a sweep must mutate again (npm run mutants:sweep -- --changed): those whose
// source, or a test file covering them, the change under test touches (git's diff from its base,
// never a record the change could rewrite). The others keep the base's report's verdicts, which is
// what StrykerJS's incremental mode gives them after a whole dry run, only without the dry run.
// Any other changed input makes the run whole.
import { matchesGlob } from "node:path";

/** Each input's digest, by path from the checkout's root. */
export type InputDigests = Readonly<Record<string, string>>;

/** What `mutants/sweep/inputs.json` keeps: the inputs as they were when the report was written. */
export type SweepRecord = { report: string; inputs: InputDigests };

/**
 * Paths no test the sweep runs reads, so a change there moves no verdict. contract/sweep-scope.test.ts
 * checks that no swept file and no test file the sweep runs names them.
 */
export const SWEEP_INERT: readonly { prefix: string; why: string }[] = [
  { prefix: "mutants/sweep/", why: "the report and this record: the sweep writes them, no test reads them" },
  {
    prefix: "mutants/equivalent.md",
    why: "read by the triage after StrykerJS; its test, sweep-triage.test.ts, is left out of the sweep's run",
  },
];

export const isSweepInert = (path: string) => SWEEP_INERT.some((i) => path.startsWith(i.prefix)); // safety: sweep-scope-inert

/** The parts of an incremental report the scope reads: which tests each test file holds, and which cover each mutant. */
export type ScopeReport = {
  files: Readonly<
    Record<string, { mutants: readonly { coveredBy?: readonly string[]; killedBy?: readonly string[] }[] }>
  >;
  testFiles: Readonly<Record<string, { tests: readonly { id: string }[] }>>;
};

export type SweepScope =
  | { kind: "none" }
  | { kind: "narrow"; mutate: string[]; why: Record<string, string> }
  | { kind: "whole"; why: string };

/** The paths whose digest differs between the record and now, added and removed ones included. */
export function changedInputs(recorded: InputDigests, now: InputDigests): string[] {
  const paths = new Set([...Object.keys(recorded), ...Object.keys(now)]);
  return [...paths].filter((p) => !isSweepInert(p) && recorded[p] !== now[p]).sort(); // safety: sweep-scope-removed
}

/** The swept files with a mutant that a test of `testFile` covers or killed, per the report. */
function filesCoveredBy(report: ScopeReport, testFile: string): string[] {
  const ids = new Set(report.testFiles[testFile]!.tests.map((t) => t.id));
  const reached = (m: ScopeReport["files"][string]["mutants"][number]) =>
    [...(m.coveredBy ?? []), ...(m.killedBy ?? [])].some((id) => ids.has(id));
  return Object.entries(report.files)
    .filter(([, f]) => f.mutants.some(reached))
    .map(([file]) => file);
}

const movesUnknown = (path: string) =>
  `${path} changed: it is neither a swept file nor a test file the report knows, so which verdicts it moves only a whole dry run shows`;

/**
 * The scope of a `--changed` run. `changed` is every path the change under test touches (git's
 * diff from its base, the work tree's changes and untracked files), `now` the inputs' digests now
 * (a path absent from it is gone), `swept` the sweep's mutate patterns and `report` the base's report.
 */
export function planSweepScope(input: {
  changed: readonly string[];
  now: InputDigests;
  swept: readonly string[];
  report: ScopeReport;
}): SweepScope {
  const { report } = input;
  const why: Record<string, string> = {};
  for (const path of [...new Set(input.changed)].filter((p) => !isSweepInert(p)).sort()) {
    const swept = input.swept.some((g) => matchesGlob(path, g)) || report.files[path] !== undefined;
    const gone = input.now[path] === undefined;
    if (swept && gone) return { kind: "whole", why: `${path}, a swept file, is gone` }; // safety: sweep-scope-swept-gone
    if (swept)
      why[path] ??= "changed"; // safety: sweep-scope-swept-file
    else if (report.testFiles[path] === undefined)
      return { kind: "whole", why: movesUnknown(path) }; // safety: sweep-scope-other-input
    else for (const file of filesCoveredBy(report, path)) why[file] ??= `its test file ${path} changed`; // safety: sweep-scope-test-file
  }
  const mutate = Object.keys(why).sort();
  return mutate.length === 0 ? { kind: "none" } : { kind: "narrow", mutate, why };
}

/**
 * Whether a committed sweep file (the report or the record) may stand: the change under test left
 * it as its base has it (the base's own, older than this tree perhaps, but not this change's
 * claim), or it is what this run computed. A file the change rewrote to anything else is a verdict
 * the change wrote for itself: the run fails, naming it. Texts are compared as `same` reads them.
 */
export function judgeCommitted(c: {
  file: string;
  head: string | null;
  base: string | null;
  computed: string;
  same: (a: string, b: string) => boolean;
}): string | null {
  if (c.head === null || (c.base !== null && c.head === c.base)) return null;
  if (c.same(c.head, c.computed)) return null; // safety: sweep-committed-claim
  return `${c.file}: this change rewrites it, but it is not what the sweep computes for this tree; a change cannot vouch for its own sweep (commit the file this run wrote, or leave the base's)`;
}

/**
 * What the sweep's own options ask, or what is wrong with them. A run keeps a record of its inputs
 * only when it covers the whole scope: after `--mutate`, the other files' verdicts are older than
 * the inputs such a record would name.
 */
export function readSweepArgs(
  args: readonly string[],
): { changed: boolean; keepsRecord: boolean; base: string | undefined; strykerArgs: string[] } | { problem: string } {
  const at = args.indexOf("--base");
  const base = at === -1 ? undefined : args[at + 1];
  if (at !== -1 && (base === undefined || base.startsWith("-"))) return { problem: "--base needs a git ref" };
  const rest = at === -1 ? [...args] : args.filter((_, i) => i !== at && i !== at + 1);
  const changed = rest.includes("--changed");
  const narrowed = rest.some((a) => /^(--mutate|-m)(=|$)/.test(a));
  if (changed && (narrowed || rest.some((a) => /^--force(=|$)/.test(a))))
    return { problem: "--changed picks the files to mutate itself; leave out --mutate and --force" };
  const keepsRecord = !narrowed; // safety: sweep-record-whole-scope
  return { changed, keepsRecord, base, strykerArgs: rest.filter((a) => a !== "--changed") };
}
