// The `npm run mutants` command line on the fixture project, for the paths that run no mutant:
// argument errors, --list, a broken catalog, and merge refusing an incomplete set of shards.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { parseCliArgs } from "../src/mutation/cli-args.ts";
import { main } from "../src/mutation/cli.ts";
import { restoreFiles } from "../src/mutation/tree-copy.ts";
import { loadCatalog } from "../src/mutation/load.ts";
import type { MutantRecord } from "../src/mutation/report.ts";
import type { PartialReport } from "../src/mutation/shard.ts";

const FIXTURE = join(REPO_ROOT, "contract/fixtures/mutation-project");
const SCRATCH = join(REPO_ROOT, ".scratch", "mutation-cli");

/** The command as scripts/mutants.ts runs it, in this process: none of these paths starts a test host. */
async function mutants(...args: string[]): Promise<{ status: number; stdout: string }> {
  const lines: string[] = [];
  const status = await main(args, REPO_ROOT, (l) => lines.push(l));
  return { status, stdout: lines.join("\n") + "\n" };
}

beforeEach(() => {
  rmSync(SCRATCH, { recursive: true, force: true });
  mkdirSync(SCRATCH, { recursive: true });
});

describe("parseCliArgs", () => {
  it("reads a run's options, zero-based shards and a subset", () => {
    expect(parseCliArgs(["--only", "a,b", "--shard", "1/3", "--workers", "1", "--pool", "forks"], "/p")).toMatchObject({
      command: "run",
      root: "/p",
      only: ["a", "b"],
      shard: { k: 1, n: 3 },
      workers: 1,
      pool: "forks",
    });
    expect(parseCliArgs([], "/p")).toMatchObject({
      command: "run",
      pool: undefined,
      timeoutFloorMs: 10_000,
      blessGoldens: false,
    });
    expect(parseCliArgs(["--bless-goldens", "--only", "a"], "/p")).toMatchObject({
      command: "run",
      blessGoldens: true,
      both: false,
      only: ["a"],
    });
    expect(parseCliArgs(["--both"], "/p")).toMatchObject({ command: "run", blessGoldens: false, both: true });
    expect(parseCliArgs(["--both", "--shard", "1/4"], "/p")).toMatchObject({ both: true, shard: { k: 1, n: 4 } });
    expect(parseCliArgs(["--since", "origin/main", "--both"], "/p")).toMatchObject({
      since: "origin/main",
      both: true,
    });
    expect(parseCliArgs(["merge", "--reports", "r"], "/p")).toEqual({ command: "merge", root: "/p", reports: "r" });
    expect(parseCliArgs(["--list"], "/p")).toEqual({ command: "list", root: "/p" });
  });
  it.each([
    [["--shard", "2/2"]],
    [["--workers", "0"]],
    [["--pool", "vm"]],
    [["--only"]],
    [["--frobnicate"]],
    [["--bless-goldens", "--shard", "0/2"]],
    [["--both", "--bless-goldens"]],
    [["--since", "main", "--only", "a"]],
    [["--since", "main", "--shard", "0/2"]],
    [["--since"]],
  ])("refuses %j", (argv) => {
    expect(parseCliArgs(argv, "/p")).toHaveProperty("error");
  });
});

describe("bless mode puts a tree copy's goldens back after each run", () => {
  it("restores a rewritten golden, removes a new one, brings back a removed one, and names each", () => {
    const dir = join(SCRATCH, "goldens");
    mkdirSync(join(dir, "a"), { recursive: true });
    const want = new Map([
      ["a/kept.txt", Buffer.from("kept\n")],
      ["a/rewritten.txt", Buffer.from("old\n")],
      ["gone.txt", Buffer.from("gone\n")],
    ]);
    writeFileSync(join(dir, "a/kept.txt"), "kept\n");
    writeFileSync(join(dir, "a/rewritten.txt"), "new\n");
    writeFileSync(join(dir, "a/added.txt"), "added\n");
    expect(restoreFiles(dir, want, "goldens")).toEqual([
      "goldens/a/added.txt",
      "goldens/a/rewritten.txt",
      "goldens/gone.txt",
    ]);
    expect(readFileSync(join(dir, "a/rewritten.txt"), "utf8")).toBe("old\n");
    expect(readFileSync(join(dir, "gone.txt"), "utf8")).toBe("gone\n");
    expect(restoreFiles(dir, want, "goldens"), "nothing left to restore").toEqual([]);
  });
});

describe("npm run mutants without a mutation run", () => {
  it("exits 2 on a bad argument, with the usage", async () => {
    const r = await mutants("--shard", "5/2");
    expect(r.status).toBe(2);
    expect(r.stdout).toContain("usage: npm run mutants");
  });

  it("--list prints the catalog: id | file:line | what it undoes | killedBy", async () => {
    const r = await mutants("--list", "--root", FIXTURE);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(9);
    expect(lines[0]).toBe(
      "fixture-dotdot | src/guard.ts:5 | the .. refusal: a path could climb out of the root | tests/guard.spec.ts > isInside > refuses a path that climbs out with ..",
    );
  });

  it("refuses to run a catalog whose tags and mutants do not pair", async () => {
    const root = join(SCRATCH, "project");
    cpSync(FIXTURE, root, { recursive: true });
    const guard = join(root, "src/guard.ts");
    writeFileSync(
      guard,
      readFileSync(guard, "utf8").replace("// safety: fixture-length", "// safety: fixture-untracked"),
    );
    const r = await mutants("--root", root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("CATALOG: src/guard.ts:10: tag fixture-untracked has no mutant in mutants/");
    expect(r.stdout).toContain(
      "CATALOG: mutants/fixture.json fixture-length: no safety tag names this mutant in src/guard.ts",
    );
    expect(r.stdout).not.toContain("test host(s) ready");
  });

  it("merge refuses an incomplete set of shards and scores a complete one", async () => {
    const catalog = loadCatalog(FIXTURE);
    const reports = join(SCRATCH, "reports");
    mkdirSync(join(reports, "shards"), { recursive: true });
    const shard = (k: number): PartialReport => {
      const records: MutantRecord[] = catalog.mutants
        .filter((_, i) => i % 2 === k)
        .map((m) => ({
          mutant: m,
          line: 1,
          site: catalog.sites.get(m.id)!,
          seconds: 0.1,
          testsRun: m.killedBy,
          verdict: { kind: "killed", by: m.killedBy, evidence: "assertion", message: "expected" },
        }));
      return {
        kind: "mosaic-mutants-partial",
        catalogHash: catalog.hash,
        shard: { k, n: 2 },
        ids: records.map((r) => r.mutant.id),
        records,
        tests: [],
        sources: [],
      };
    };
    writeFileSync(join(reports, "shards/shard-0-of-2.json"), JSON.stringify(shard(0)));
    const partial = await mutants("merge", "--root", FIXTURE, "--reports", reports);
    expect(partial.status).toBe(1);
    expect(partial.stdout).toContain("MERGE REFUSED: shard 1/2 is missing");

    writeFileSync(join(reports, "shards/shard-1-of-2.json"), JSON.stringify(shard(1)));
    const whole = await mutants("merge", "--root", FIXTURE, "--reports", reports);
    expect(whole.stdout).toContain("9 mutants: 9 killed");
    expect(whole.status).toBe(0);
    expect(JSON.parse(readFileSync(join(reports, "mutation.json"), "utf8")).files["src/guard.ts"].mutants).toHaveLength(
      9,
    );
  });
});
