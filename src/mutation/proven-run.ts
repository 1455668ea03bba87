// A green run the mutation runner may take instead of proving the suite green twice itself. `npm
// test` writes, beside each tier's JUnit report, the sha256 of the tree it ran on; when the tree is
// still byte for byte that one, the report is the before-run, and the byte checks after the mutants
// stand in for the after-run. Anything else (a missing or red report, another tree) runs as ever.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJunitCases } from "./junit.ts";
import type { RunOutcome } from "./verdict.ts";

/**
 * The sha256 of every file git would see in the tree (tracked, and untracked but not ignored): path
 * and bytes, in path order. Ignored output (reports/, .scratch/, node_modules/) does not count;
 * node_modules is pinned by package-lock.json, which does. Null outside a git work tree.
 */
export function treeHash(root: string): string | null {
  let list: string;
  try {
    // The root must be a work tree's top, not a directory inside another's (a tree copy under .scratch/).
    const top = execFileSync("git", ["-C", root, "rev-parse", "--show-toplevel"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    if (realpathSync(top) !== realpathSync(root)) return null;
    list = execFileSync("git", ["-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return null;
  }
  const h = createHash("sha256");
  for (const f of [...new Set(list.split("\0").filter(Boolean))].sort()) {
    const p = join(root, f);
    h.update(f).update("\0");
    h.update(contentOf(p)).update("\0");
  }
  return h.digest("hex");
}

/**
 * A path's content as git sees it: a file's bytes, a symbolic link's target (a linked
 * node_modules is a link, not the folder it names), and a file deleted but still in the index as
 * absent.
 */
function contentOf(p: string): Buffer {
  let st;
  try {
    st = lstatSync(p);
  } catch {
    return Buffer.from("(absent)");
  }
  if (st.isSymbolicLink()) return Buffer.from(`(link) ${readlinkSync(p)}`);
  return st.isFile() ? readFileSync(p) : Buffer.from("(not a file)");
}

/** Where a report's tree hash lives. */
export const proofOf = (report: string): string => `${report}.tree-sha256`;

/** Written after a tier passed: the tree its report is of. */
export function writeProof(root: string, report: string): string | null {
  const hash = treeHash(root);
  if (hash !== null) writeFileSync(proofOf(report), hash + "\n");
  return hash;
}

export type Proven = { kind: "proven"; outcome: RunOutcome; reports: string[] } | { kind: "unproven"; why: string };

/**
 * The reports as one green run of `files`, or why they cannot stand for one: a report missing, its
 * proof missing or of another tree, a failed or skipped case, or a file of `files` no report ran.
 */
export function readProvenRun(root: string, reports: readonly string[], files: readonly string[]): Proven {
  const hash = treeHash(root);
  if (hash === null) return { kind: "unproven", why: "the tree's hash cannot be read (not a git work tree)" };
  const tests: RunOutcome["tests"] = [];
  const used: string[] = [];
  for (const r of reports) {
    const path = join(root, r);
    if (!existsSync(path)) continue;
    const proof = existsSync(proofOf(path)) ? readFileSync(proofOf(path), "utf8").trim() : "";
    if (proof !== hash)
      return {
        kind: "unproven",
        why: `${r} is of ${proof === "" ? "an unrecorded tree" : `tree ${proof.slice(0, 12)}`}, not this one (${hash.slice(0, 12)})`,
      };
    const cases = readJunitCases(readFileSync(path, "utf8"));
    const bad = cases.find((c) => c.failed || c.skipped);
    if (bad)
      return { kind: "unproven", why: `${r}: ${bad.suite} > ${bad.name} ${bad.failed ? "failed" : "was skipped"}` };
    used.push(r);
    for (const c of cases)
      if (files.includes(c.suite))
        tests.push({ test: `${c.suite} > ${c.name}`, state: "passed", durationMs: c.timeMs });
  }
  const ran = new Set(tests.map((t) => t.test.slice(0, t.test.indexOf(" > "))));
  const missing = files.filter((f) => !ran.has(f));
  if (missing.length > 0)
    return {
      kind: "unproven",
      why: `no proven report ran ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""}`,
    };
  return { kind: "proven", outcome: { tests, loadErrors: [], unhandled: [], wallMs: 0, fileMs: 0 }, reports: used };
}
