// npm run mutants:sweep [-- --changed [--base ref] | --shard i/n | --merge <dirs> | stryker options, e.g. --force]:
// StrykerJS over the modules stryker.config.mjs names, then the triage of every survivor
// (scripts/sweep-triage.ts). Exit 0 only when both pass, and, against a base, when the committed
// report and record are the base's or what this run computed. `--changed` mutates only the swept
// files whose source or covering test file git's diff from the base touches, starting from the
// base's report (src/mutation/sweep-scope.ts);
// `--shard i/n` runs one cold share of the files and `--merge` triages the shards' reports as one
// (src/mutation/sweep-shards.ts).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  defaultBase,
  digestReportVerdicts,
  readChangedPaths,
  readSweepInputs,
  sameRecord,
  showAt,
  SWEEP_RECORD_FILE,
  writeRecordText,
} from "../src/mutation/sweep-inputs.ts";
import {
  judgeCommitted,
  planSweepScope,
  readSweepArgs,
  type ScopeReport,
  type SweepScope,
} from "../src/mutation/sweep-scope.ts";
import { mergeSweepShards, runSweepShard } from "../src/mutation/sweep-shard-run.ts";
import { readShardArgs } from "../src/mutation/sweep-shards.ts";

const root = join(import.meta.dirname, "..");
// Imported by its path, so the config stays a plain .mjs that StrykerJS reads as it is.
const { default: config, SWEPT }: { default: { incrementalFile: string }; SWEPT: string[] } = await import(
  pathToFileURL(join(root, "stryker.config.mjs")).href
);
const incremental = join(root, config.incrementalFile);
const triageOf = (reportFile?: string) =>
  spawnSync(process.execPath, [join(root, "scripts/sweep-triage.ts"), ...(reportFile ? [reportFile] : [])], {
    cwd: root,
    stdio: "inherit",
  }).status ?? 1;

const sharded = readShardArgs(process.argv.slice(2));
if (sharded !== null && "problem" in sharded) {
  console.error(`mutants:sweep: ${sharded.problem}`);
  process.exit(2);
}
if (sharded?.kind === "shard") process.exit(runSweepShard(root, sharded.spec, sharded.strykerArgs, SWEPT, incremental));
if (sharded?.kind === "merge") {
  const merged = mergeSweepShards(root, sharded.dirs, SWEPT);
  process.exit(merged === 0 ? triageOf() : merged);
}

const parsed = readSweepArgs(process.argv.slice(2));
if ("problem" in parsed) {
  console.error(`mutants:sweep: ${parsed.problem}`);
  process.exit(2);
}
const { changed, keepsRecord, base: baseRef } = parsed;
const recordPath = join(root, SWEEP_RECORD_FILE);
const relIncremental = config.incrementalFile;

/** The change under test, from git: its merge base with the base ref and the paths it touches. */
function readBase(): { mergeBase: string; paths: string[] } | undefined {
  const ref = baseRef ?? (changed ? defaultBase(root) : null);
  if (ref === null) {
    if (changed) console.log("mutants:sweep --changed: no base to compare with (no main here); the whole scope");
    return undefined;
  }
  const found = readChangedPaths(root, ref);
  if ("problem" in found) {
    console.error(`mutants:sweep: ${found.problem}`);
    process.exit(2);
  }
  return found;
}

/** What to mutate: from git's diff, over the base's report, which is what StrykerJS starts from. */
function scopeOfChanges(base: { mergeBase: string; paths: string[] }): SweepScope {
  const baseReport = showAt(root, base.mergeBase, relIncremental);
  if (baseReport === null) return { kind: "whole", why: `the base ${base.mergeBase.slice(0, 12)} has no report` };
  writeFileSync(incremental, baseReport);
  return planSweepScope({
    changed: base.paths,
    now: inputs,
    swept: SWEPT,
    report: JSON.parse(baseReport) as ScopeReport,
  });
}

// Taken before StrykerJS starts, so an edit made during the run reads as a change next time.
const inputs = readSweepInputs(root);
const base = readBase();
let strykerArgs = parsed.strykerArgs;
let ran = true;
if (changed && base) {
  const scope = scopeOfChanges(base);
  if (scope.kind === "whole") console.log(`mutants:sweep --changed: the whole scope, since ${scope.why}`);
  if (scope.kind === "narrow") {
    console.log(
      `mutants:sweep --changed: ${scope.mutate.length} swept file(s) to mutate again; the rest keep the base's verdicts:`,
    );
    for (const f of scope.mutate) console.log(`  ${f}: ${scope.why[f]}`);
    strykerArgs = [...strykerArgs, "--mutate", scope.mutate.join(",")];
  }
  if (scope.kind === "none") {
    console.log(
      `mutants:sweep --changed: the change touches nothing the sweep reads (git diff ${base.mergeBase.slice(0, 12)}...HEAD); every verdict is the base's report's`,
    );
    ran = false;
  }
}
if (ran) {
  const stryker = spawnSync(join(root, "node_modules/.bin/stryker"), ["run", ...strykerArgs], {
    cwd: root,
    stdio: "inherit",
  });
  if (stryker.status !== 0) {
    console.error(`mutants:sweep: stryker run exited ${stryker.status ?? stryker.signal}`);
    process.exit(stryker.status ?? 1);
  }
}
// A run over part of the scope (a hand-given --mutate) keeps no record: the other files' verdicts
// are older than the inputs it would name.
const computedReport = readFileSync(incremental, "utf8");
const computedRecord = writeRecordText(computedReport, inputs);
if (keepsRecord) writeFileSync(recordPath, computedRecord);
const triage = triageOf(ran ? undefined : incremental);
const claims = base
  ? [
      judgeCommitted({
        file: relIncremental,
        head: showAt(root, "HEAD", relIncremental),
        base: showAt(root, base.mergeBase, relIncremental),
        computed: computedReport,
        same: (a, b) => digestReportVerdicts(a) === digestReportVerdicts(b),
      }),
      keepsRecord
        ? judgeCommitted({
            file: SWEEP_RECORD_FILE,
            head: showAt(root, "HEAD", SWEEP_RECORD_FILE),
            base: showAt(root, base.mergeBase, SWEEP_RECORD_FILE),
            computed: computedRecord,
            same: sameRecord,
          })
        : null,
    ].filter((p): p is string => p !== null)
  : [];
for (const c of claims) console.error(`mutants:sweep: ${c}`);
process.exit(claims.length > 0 ? 1 : triage);
