// npm run mutants:sweep [-- --changed | --shard i/n | --merge <dirs> | stryker options, e.g. --force]:
// StrykerJS over the modules stryker.config.mjs names, then the triage of every survivor
// (scripts/sweep-triage.ts). Exit 0 only when both pass. `--changed` mutates only the swept files
// whose source or covering test file changed since the committed report (src/mutation/sweep-scope.ts);
// `--shard i/n` runs one cold share of the files and `--merge` triages the shards' reports as one
// (src/mutation/sweep-shards.ts).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { digestFile, readSweepInputs, readSweepRecord, SWEEP_RECORD_FILE } from "../src/mutation/sweep-inputs.ts";
import { planSweepScope, readSweepArgs, type ScopeReport, type SweepScope } from "../src/mutation/sweep-scope.ts";
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
const { changed, keepsRecord } = parsed;

function scopeOfChanges(): SweepScope {
  const recordPath = join(root, SWEEP_RECORD_FILE);
  const record = readSweepRecord(existsSync(recordPath) ? readFileSync(recordPath, "utf8") : null);
  if (record !== null && "problem" in record) return { kind: "whole", why: record.problem };
  if (!existsSync(incremental)) return { kind: "whole", why: `no committed report at ${config.incrementalFile}` };
  return planSweepScope({
    record,
    reportDigest: digestFile(incremental),
    now: inputs,
    swept: SWEPT,
    report: JSON.parse(readFileSync(incremental, "utf8")) as ScopeReport,
  });
}

// Taken before StrykerJS starts, so an edit made during the run reads as a change next time.
const inputs = readSweepInputs(root);
let strykerArgs = parsed.strykerArgs;
let reportFile: string | undefined;
if (changed) {
  const scope = scopeOfChanges();
  if (scope.kind === "whole") console.log(`mutants:sweep --changed: the whole scope, since ${scope.why}`);
  if (scope.kind === "narrow") {
    console.log(
      `mutants:sweep --changed: ${scope.mutate.length} swept file(s) to mutate again; the rest keep the report's verdicts:`,
    );
    for (const f of scope.mutate) console.log(`  ${f}: ${scope.why[f]}`);
    strykerArgs = [...strykerArgs, "--mutate", scope.mutate.join(",")];
  }
  if (scope.kind === "none") {
    console.log(
      `mutants:sweep --changed: nothing the sweep reads changed since ${SWEEP_RECORD_FILE}; every verdict is the committed report's`,
    );
    reportFile = incremental;
  }
}
if (reportFile === undefined) {
  const stryker = spawnSync(join(root, "node_modules/.bin/stryker"), ["run", ...strykerArgs], {
    cwd: root,
    stdio: "inherit",
  });
  if (stryker.status !== 0) {
    console.error(`mutants:sweep: stryker run exited ${stryker.status ?? stryker.signal}`);
    process.exit(stryker.status ?? 1);
  }
  // A run over part of the scope leaves the record as it was: its report digest no longer matches,
  // so the next --changed run is whole.
  if (keepsRecord) {
    const record = { report: digestFile(incremental), inputs: Object.fromEntries(Object.entries(inputs).sort()) };
    writeFileSync(join(root, SWEEP_RECORD_FILE), `${JSON.stringify(record, null, 1)}\n`);
  }
}
process.exit(triageOf(reportFile));
