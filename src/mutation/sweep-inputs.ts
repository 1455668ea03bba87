// The sweep's inputs as files on disk (npm run mutants:sweep): their digests now, and the record
// of them kept beside the committed report, which `--changed` compares (sweep-scope.ts).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { changedInputs, isSweepInert, type InputDigests, type SweepRecord } from "./sweep-scope.ts";

export const SWEEP_RECORD_FILE = "mutants/sweep/inputs.json";

const digest = (data: string | Buffer) => createHash("sha256").update(data).digest("hex").slice(0, 16);

/** A file's digest; a link's is its target's text, so a changed link is a changed input. */
export function digestFile(path: string): string {
  return lstatSync(path).isSymbolicLink() ? digest(`link:${readlinkSync(path)}`) : digest(readFileSync(path));
}

/** The digest of every file git tracks or would track under root, inert ones left out. */
export function readSweepInputs(root: string): InputDigests {
  const listed = execFileSync("git", ["-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const out: Record<string, string> = {};
  for (const path of new Set(listed.split("\0").filter(Boolean))) {
    if (isSweepInert(path)) continue;
    try {
      out[path] = digestFile(join(root, path));
    } catch {
      // Tracked but deleted in the work tree: absent now, which reads as removed.
    }
  }
  return out;
}

/** The kept record, null when there is none, or what is wrong with it. */
export function readSweepRecord(text: string | null): SweepRecord | null | { problem: string } {
  if (text === null) return null;
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch {
    return { problem: `${SWEEP_RECORD_FILE} is not JSON` };
  }
  const rec = r as { report?: unknown; inputs?: unknown };
  if (typeof rec?.report !== "string") return { problem: `${SWEEP_RECORD_FILE}: "report" is not a digest` };
  if (typeof rec.inputs !== "object" || rec.inputs === null || Array.isArray(rec.inputs))
    return { problem: `${SWEEP_RECORD_FILE}: "inputs" is not an object of digests` };
  for (const [path, d] of Object.entries(rec.inputs))
    if (typeof d !== "string") return { problem: `${SWEEP_RECORD_FILE}: the digest of ${path} is not a string` };
  return { report: rec.report, inputs: rec.inputs as InputDigests };
}

function git(root: string, args: string[]): string {
  return execFileSync("git", ["-C", root, ...args], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A file as a commit holds it, or null when it holds none. */
export function showAt(root: string, rev: string, path: string): string | null {
  try {
    return git(root, ["show", `${rev}:${path}`]);
  } catch {
    return null;
  }
}

/** The base a `--changed` run compares with when none is given: main's, as origin has it or as it is here. */
export function defaultBase(root: string): string | null {
  for (const ref of ["origin/main", "main"])
    try {
      git(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
      return ref;
    } catch {}
  return null;
}

/**
 * What the change under test touches: the paths `git diff <base>...HEAD` names (from the merge
 * base), with the work tree's uncommitted and untracked ones. Never read from a committed record.
 */
export function readChangedPaths(
  root: string,
  base: string,
): { mergeBase: string; paths: string[] } | { problem: string } {
  let mergeBase: string;
  try {
    mergeBase = git(root, ["merge-base", "HEAD", base]).trim();
  } catch {
    return { problem: `--base ${base}: git finds no merge base of it and HEAD in ${root}` };
  }
  const list = (args: string[]) => git(root, args).split("\0").filter(Boolean);
  const paths = new Set([
    ...list(["diff", "--name-only", "--no-renames", "-z", `${mergeBase}...HEAD`]), // safety: sweep-diff-scope
    ...list(["diff", "--name-only", "--no-renames", "-z", "HEAD", "--"]),
    ...list(["ls-files", "--others", "--exclude-standard", "-z"]),
  ]);
  return { mergeBase, paths: [...paths].sort() };
}

type ReportMutant = { mutatorName?: string; replacement?: string; status?: string; location?: unknown };
type ReportShape = {
  files?: Record<string, { source?: string; mutants?: ReportMutant[] }>;
  testFiles?: Record<string, unknown>;
};

/**
 * A sweep report's verdicts, as a digest: each file's source and each mutant's place, mutator,
 * replacement and status. Test ids and the order of covering tests, which StrykerJS renumbers on
 * every dry run, are left out.
 */
export function digestReportVerdicts(text: string): string {
  let r: ReportShape;
  try {
    r = JSON.parse(text) as ReportShape;
  } catch {
    return digest(`unreadable:${text}`);
  }
  const files = Object.entries(r.files ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, f]) => ({
      name,
      source: f.source ?? "",
      mutants: (f.mutants ?? [])
        .map((m) => JSON.stringify([m.location, m.mutatorName, m.replacement, m.status]))
        .sort(),
    }));
  return digest(JSON.stringify({ files, testFiles: Object.keys(r.testFiles ?? {}).sort() }));
}

/** Two records are the same when they name the same report and the same inputs. */
export function sameRecord(a: string, b: string): boolean {
  const x = readSweepRecord(a);
  const y = readSweepRecord(b);
  if (x === null || y === null || "problem" in x || "problem" in y) return false;
  return x.report === y.report && changedInputs(x.inputs, y.inputs).length === 0;
}

/** The record a sweep keeps of its report and the inputs it was computed from. */
export function writeRecordText(reportText: string, inputs: InputDigests): string {
  const record: SweepRecord = {
    report: digestReportVerdicts(reportText),
    inputs: Object.fromEntries(Object.entries(inputs).sort()),
  };
  return `${JSON.stringify(record, null, 1)}\n`;
}
