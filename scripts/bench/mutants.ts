// `npm run bench -- mutants`: the pull-request loop's three runs, one after another in this one
// process, on a detached worktree of HEAD (the checkout is never edited):
//   whole   the whole catalog, both verdicts, after `npm test`, from an empty cache (aim ≤ 300 s);
//   warm    the same with that warm cache, after one line is added to a core safety file (≤ 60 s);
//   stored  `--since HEAD` on that change with only the whole run's stored verdicts (main's, as a
//           pull request meets them): what it selects runs, and every mutant whose key the change
//           moved (≤ 120 s);
//   since   `--since HEAD --no-cache` on that one-line change: the change's own mutants (≤ 45 s).
// Each with its phases: hosts ready, before, sentinel, mutants, after. "whole" takes the checkout's
// `npm test` reports when they prove HEAD's tree; without them its before runs the suite itself.
// MOSAIC_BENCH_LINE names the tag of the line to change (default: the gate's pattern-dotdot line);
// MOSAIC_BENCH_RUNS picks runs by name (default: all four; "whole" always runs, it fills the cache).
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";

const BENCH_ROOT = "/var/tmp/mosaic-bench-mutants";
const AIMS: Record<string, number> = { whole: 300, stored: 120, warm: 60, since: 45 };
const PHASES = ["hosts ready", "before", "sentinel", "mutants", "after"] as const;

type Row = { name: string; status: number; total: number; ran: string; phases: Record<string, number | undefined> };

function worktree(): string {
  // Outside the checkout: the run's tree copies hold biome.json files, and a biome run in the
  // checkout would stop at a nested configuration.
  const dir = join(BENCH_ROOT, "tree");
  if (existsSync(dir))
    execFileSync("git", ["-C", REPO_ROOT, "worktree", "remove", "--force", dir], { stdio: "ignore" });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(BENCH_ROOT, { recursive: true });
  execFileSync("git", ["-C", REPO_ROOT, "worktree", "add", "--detach", dir, "HEAD"], { stdio: "ignore" });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  // npm test's reports stand for the whole run's before and after only if they prove this tree.
  const junit = join(REPO_ROOT, "reports/junit");
  mkdirSync(join(dir, "reports/junit"), { recursive: true });
  if (existsSync(junit))
    for (const f of readdirSync(junit)) copyFileSync(join(junit, f), join(dir, "reports/junit", f));
  return dir;
}

/** Adds a comment line above the tagged line: one changed line in a core safety file. */
function changeOneLine(dir: string, tag: string): string {
  const file = execFileSync("git", ["-C", dir, "grep", "-l", `// safety: ${tag}\$`, "--", "src/core"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")[0];
  if (!file) throw new Error(`MOSAIC_BENCH_LINE ${tag}: no line in src/core carries that tag`);
  const lines = readFileSync(join(dir, file), "utf8").split("\n");
  const at = lines.findIndex((l) => l.endsWith(`// safety: ${tag}`));
  lines.splice(at, 0, "// bench: one line added beside a safety line");
  writeFileSync(join(dir, file), lines.join("\n"));
  return `${file}:${at + 1}`;
}

/** One `npm run mutants` in the worktree, its output streamed with a prefix, and its phases read off it. */
function runMutants(dir: string, name: string, args: string[]): Promise<Row> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["scripts/mutants.ts", ...args], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const take = (b: Buffer) => {
    out += b.toString();
    for (const l of b.toString().split("\n"))
      if (/^\d+\.\ds |^cache:|^took|^\d+ mutants:|^RUN FAILED|^NOT KILLED|^CATALOG/.test(l))
        console.log(`  [${name}] ${l}`);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return new Promise((done) =>
    child.on("close", (status) => {
      const at = (re: RegExp) => {
        const m = re.exec(out);
        return m ? Number(m[1]) : undefined;
      };
      const marks = [
        at(/^(\d+\.\d)s \d+ test host\(s\) ready/m),
        at(/^(\d+\.\d)s before: \d+ tests/m),
        at(/^(\d+\.\d)s sentinel /m),
        at(/^(\d+\.\d)s mutants: /m),
        at(/^(\d+\.\d)s after: /m),
      ];
      const phases: Row["phases"] = {};
      PHASES.forEach((p, i) => {
        const end = marks[i];
        const start = i === 0 ? 0 : marks[i - 1];
        phases[p] = end === undefined || start === undefined ? undefined : end - start;
      });
      const ran = /^cache: (\d+ of \d+) verdict\(s\) reused/m.exec(out)?.[1];
      const count = /^mutants: (\d+) of \d+/m.exec(out)?.[1] ?? "0";
      done({
        name,
        status: status ?? -1,
        total: (performance.now() - t0) / 1000,
        ran: `${count} run${ran ? `, ${ran} reused` : ""}`,
        phases,
      });
    }),
  );
}

export async function run(): Promise<void> {
  if (!process.argv.slice(2).includes("mutants")) {
    console.log("mutants: a whole-catalog run takes minutes; name it to run it (npm run bench -- mutants)");
    return;
  }
  const dir = worktree();
  const cache = join(BENCH_ROOT, "cache.json");
  rmSync(cache, { force: true });
  const reports = (n: string) => join(BENCH_ROOT, "reports", n);
  const rows: Row[] = [];
  console.log(`mutants: worktree of HEAD at ${dir}`);
  rows.push(await runMutants(dir, "whole", ["--both", "--cache", cache, "--reports", reports("whole")]));
  const where = changeOneLine(dir, process.env.MOSAIC_BENCH_LINE ?? "gate-no-pattern-dotdot");
  console.log(`mutants: one line added at ${where}`);
  const runs = new Set((process.env.MOSAIC_BENCH_RUNS ?? "stored,warm,since").split(","));
  // Before "warm", which stores the changed tree's verdicts: a --since run keeps none.
  if (runs.has("stored"))
    rows.push(
      await runMutants(dir, "stored", ["--both", "--since", "HEAD", "--cache", cache, "--reports", reports("stored")]),
    );
  if (runs.has("warm"))
    rows.push(await runMutants(dir, "warm", ["--both", "--cache", cache, "--reports", reports("warm")]));
  if (runs.has("since"))
    rows.push(
      await runMutants(dir, "since", ["--both", "--since", "HEAD", "--no-cache", "--reports", reports("since")]),
    );
  const s = (v: number | undefined) => (v === undefined ? "-" : `${v.toFixed(1)} s`);
  console.log("");
  console.log(`| run | mutants | ${PHASES.join(" | ")} | total | aim | exit |`);
  console.log(`|---|---|${PHASES.map(() => "---").join("|")}|---|---|---|`);
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.ran} | ${PHASES.map((p) => s(r.phases[p])).join(" | ")} | ${s(r.total)} | ≤ ${AIMS[r.name]} s (${r.total <= AIMS[r.name]! ? "met" : `${(r.total / AIMS[r.name]!).toFixed(1)}×`}) | ${r.status} |`,
    );
  const whole = rows[0]!.total;
  console.log(`ratios to the whole run: ${rows.map((r) => `${r.name} ${(r.total / whole).toFixed(3)}`).join(", ")}`);
  execFileSync("git", ["-C", REPO_ROOT, "worktree", "remove", "--force", dir], { stdio: "ignore" });
}
