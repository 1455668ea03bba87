// The shell of the sharded cold sweep (npm run mutants:sweep -- --shard i/n | --merge <dirs>): runs
// StrykerJS over one shard's files, and merges the shards' reports for the triage. The decisions
// are sweep-shards.ts's.
import { spawnSync } from "node:child_process";
import { existsSync, globSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  mergeShardReports,
  planSweepShards,
  sweepWork,
  type ShardReport,
  type ShardSpec,
  type SweepReport,
} from "./sweep-shards.ts";

export const SWEEP_REPORT_DIR = "reports/mutation/sweep";

/** The swept files now, from the mutate patterns. */
export const sweptFiles = (root: string, patterns: readonly string[]) =>
  [...new Set(patterns.flatMap((g) => globSync(g, { cwd: root })))].sort();

/**
 * Shard i of n, cold: StrykerJS with --force over the shard's files, balanced by the committed
 * report's work. Leaves mutation.json and shard.json (which files it mutated) in the report
 * directory for the merge; returns StrykerJS's exit code.
 */
export function runSweepShard(
  root: string,
  spec: ShardSpec,
  strykerArgs: readonly string[],
  patterns: readonly string[],
  incrementalFile: string,
): number {
  const committed = existsSync(incrementalFile)
    ? (JSON.parse(readFileSync(incrementalFile, "utf8")) as SweepReport)
    : null;
  const files = planSweepShards(sweptFiles(root, patterns), (f) => sweepWork(committed, f), spec.count)[
    spec.index - 1
  ]!;
  const name = `${spec.index}/${spec.count}`;
  console.log(`mutants:sweep --shard ${name}: ${files.length} swept file(s), cold: ${files.join(", ") || "none"}`);
  const dir = join(root, SWEEP_REPORT_DIR);
  mkdirSync(dir, { recursive: true });
  let status = 0;
  if (files.length === 0) writeFileSync(join(dir, "mutation.json"), JSON.stringify({ files: {} }));
  else {
    const args = ["run", "--force", ...strykerArgs, "--mutate", files.join(",")];
    status = spawnSync(join(root, "node_modules/.bin/stryker"), args, { cwd: root, stdio: "inherit" }).status ?? 1;
  }
  writeFileSync(join(dir, "shard.json"), `${JSON.stringify({ shard: name, files })}\n`);
  if (status !== 0) console.error(`mutants:sweep --shard ${name}: stryker run exited ${status}`);
  return status;
}

/** The shards' reports (each directory a shard's report directory) merged into this checkout's; 0, or 2 naming what is wrong. */
export function mergeSweepShards(root: string, dirs: readonly string[], patterns: readonly string[]): number {
  const shards: ShardReport[] = [];
  for (const d of dirs) {
    for (const f of ["shard.json", "mutation.json"])
      if (!existsSync(join(d, f))) {
        console.error(`mutants:sweep --merge: ${join(d, f)} is missing: is ${d} a shard's report directory?`);
        return 2;
      }
    const meta = JSON.parse(readFileSync(join(d, "shard.json"), "utf8")) as { shard: string; files: string[] };
    shards.push({ ...meta, report: JSON.parse(readFileSync(join(d, "mutation.json"), "utf8")) as SweepReport });
  }
  const merged = mergeShardReports(shards, sweptFiles(root, patterns));
  if ("problem" in merged) {
    console.error(`mutants:sweep --merge: ${merged.problem}`);
    return 2;
  }
  mkdirSync(join(root, SWEEP_REPORT_DIR), { recursive: true });
  writeFileSync(join(root, SWEEP_REPORT_DIR, "mutation.json"), JSON.stringify(merged));
  console.log(`mutants:sweep --merge: ${shards.length} shard(s), ${Object.keys(merged.files).length} swept file(s)`);
  return 0;
}
