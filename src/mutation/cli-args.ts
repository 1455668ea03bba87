// The `npm run mutants` command line, parsed without touching anything.
import { parseShard, type Shard } from "./shard.ts";

export type CliArgs =
  | { command: "list"; root: string }
  | { command: "merge"; root: string; reports: string | undefined }
  | {
      command: "run";
      root: string;
      only: string[] | undefined;
      /** A pull request's own mutants: those whose file, entry or killer test changed since this ref. */
      since: string | undefined;
      shard: Shard | undefined;
      workers: number | undefined;
      /** Unset: threads, falling back to forks when the suite is not green under threads. */
      pool: "threads" | "forks" | undefined;
      sentinel: string | undefined;
      reports: string | undefined;
      scratch: string | undefined;
      timeoutFloorMs: number;
      /** Golden mismatches written into the tree copies, not failed: only an assertion can kill. */
      blessGoldens: boolean;
      /** Both verdicts in one pass: the ordinary one, and the one with goldens blessed away. */
      both: boolean;
      /** Run the suite before and after even when a green `npm test` of this tree is on record. */
      rerunSuite: boolean;
      /** No cache at all: every mutant runs, and no verdict is kept. */
      noCache: boolean;
      /** The cache file, outside the checkout; $XDG_CACHE_HOME/mosaic-harness/mutant-cache.json unless given. */
      cache: string | undefined;
    };

export const USAGE = `usage: npm run mutants -- [--only id,... | --since ref] [--shard k/n] [--list] [--workers n] [--pool threads|forks]
                          [--sentinel id] [--root dir] [--reports dir] [--scratch dir] [--timeout-floor ms]
                          [--both | --bless-goldens] [--rerun-suite] [--no-cache | --cache file]
       npm run mutants -- merge [--reports dir]`;

const VALUE_FLAGS = new Set([
  "--only",
  "--since",
  "--shard",
  "--workers",
  "--pool",
  "--sentinel",
  "--root",
  "--reports",
  "--scratch",
  "--timeout-floor",
  "--cache",
]);

export function parseCliArgs(argv: readonly string[], cwd: string): CliArgs | { error: string } {
  const values = new Map<string, string>();
  let list = false;
  let merge = false;
  let bless = false;
  let both = false;
  let rerun = false;
  let noCache = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "merge" && i === 0) merge = true;
    else if (a === "--list") list = true;
    else if (a === "--bless-goldens") bless = true;
    else if (a === "--both") both = true;
    else if (a === "--rerun-suite") rerun = true;
    else if (a === "--no-cache") noCache = true;
    else if (VALUE_FLAGS.has(a)) {
      const v = argv[++i];
      if (v === undefined) return { error: `${a} needs a value` };
      values.set(a, v);
    } else return { error: `unknown argument ${JSON.stringify(a)}` };
  }
  const root = values.get("--root") ?? cwd;
  if (list) return { command: "list", root };
  if (merge) return { command: "merge", root, reports: values.get("--reports") };
  if (both && bless) return { error: "--both with --bless-goldens: --both already gives the bless-mode verdicts" };
  let shard: Shard | undefined;
  const shardText = values.get("--shard");
  if (shardText !== undefined) {
    if (bless) return { error: "--bless-goldens with --shard: a merge scores ordinary runs only" };
    const s = parseShard(shardText);
    if ("error" in s) return s;
    shard = s;
  }
  const workersText = values.get("--workers");
  const workers = workersText === undefined ? undefined : Number(workersText);
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 1))
    return { error: `--workers ${workersText}: a whole number, 1 or more` };
  const pool = values.get("--pool");
  if (pool !== undefined && pool !== "threads" && pool !== "forks")
    return { error: `--pool ${pool}: threads or forks` };
  const floorText = values.get("--timeout-floor") ?? "10000";
  const timeoutFloorMs = Number(floorText);
  if (!(Number.isFinite(timeoutFloorMs) && timeoutFloorMs > 0))
    return { error: `--timeout-floor ${floorText}: milliseconds, above 0` };
  const onlyText = values.get("--only");
  const only =
    onlyText === undefined
      ? undefined
      : onlyText
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
  if (only !== undefined && only.length === 0) return { error: "--only needs at least one mutant id" };
  const since = values.get("--since");
  if (since !== undefined && only !== undefined) return { error: "--since with --only: choose one selection" };
  if (noCache && values.has("--cache")) return { error: "--no-cache with --cache: choose one" };
  if (since !== undefined && shard !== undefined)
    return { error: "--since with --shard: a pull request's mutants run whole" };
  return {
    command: "run",
    root,
    only,
    since,
    shard,
    workers,
    pool,
    sentinel: values.get("--sentinel"),
    reports: values.get("--reports"),
    scratch: values.get("--scratch"),
    timeoutFloorMs,
    blessGoldens: bless,
    both,
    rerunSuite: rerun,
    noCache,
    cache: values.get("--cache"),
  };
}
