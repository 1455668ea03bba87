// The sweep's inputs as files on disk (npm run mutants:sweep): their digests now, and the record
// of them kept beside the committed report, which `--changed` compares (sweep-scope.ts).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { isSweepInert, type InputDigests, type SweepRecord } from "./sweep-scope.ts";

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
