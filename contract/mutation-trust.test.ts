// Verdicts a change cannot write for itself. The verdict cache lives outside the checkout and is
// never read from it; nothing is tracked under reports/; against a base (--since), a stored kill
// answers only a mutant whose key is the same on the base tree and on the change's tree. Each
// forgery is tried on a real git repository, with a control that the same steps without it pass.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import type { Mutant } from "../src/mutation/catalog.ts";
import { keyOf, makeKeyReader, type KeyFacts } from "../src/mutation/cache-key.ts";
import {
  answeringHits,
  defaultCachePath,
  keepsVerdicts,
  listTrackedReports,
  placeCache,
} from "../src/mutation/cache-place.ts";
import { emptyCache, storeVerdicts } from "../src/mutation/cache.ts";
import { splitByCache } from "../src/mutation/cache-run.ts";
import type { LoadedCatalog } from "../src/mutation/load.ts";
import type { MutantRecord } from "../src/mutation/report.ts";
import { layBaseTree } from "../src/mutation/since.ts";

const scratch = makeScratch("mutation-trust");
afterAll(() => scratch.remove());

function layRepo(name: string, files: Record<string, string>): { root: string; git: (...a: string[]) => string } {
  const root = join(scratch.root, name);
  const git = (...a: string[]) =>
    execFileSync("git", ["-C", root, "-c", "user.name=t", "-c", "user.email=t@invalid", ...a], { encoding: "utf8" });
  for (const [p, t] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), t);
  }
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "main");
  return { root, git };
}

describe("nothing under reports/ is tracked: a committed verdict file is refused", () => {
  it("this checkout tracks no file under reports/", () => {
    expect(listTrackedReports(REPO_ROOT)).toEqual([]);
  });

  it("a force-added reports/mutant-cache.json is found, though .gitignore names reports/; control: ignored, it is not", () => {
    const { root, git } = layRepo("tracked-reports", { ".gitignore": "reports/\n", "a.ts": "x\n" });
    writeFileSync(join(root, "reports-probe"), "");
    mkdirSync(join(root, "reports"), { recursive: true });
    writeFileSync(join(root, "reports/mutant-cache.json"), "{}\n");
    expect(listTrackedReports(root), "control: written, ignored, not added").toEqual([]);
    git("add", "-f", "reports/mutant-cache.json");
    git("commit", "-qm", "a verdict file of its own");
    expect(listTrackedReports(root)).toEqual(["reports/mutant-cache.json"]);
  });
});

describe("the verdict cache lives outside the checkout", () => {
  it("by default under the user's cache directory; XDG_CACHE_HOME moves it", () => {
    expect(defaultCachePath({ XDG_CACHE_HOME: "/var/cache/u" })).toBe("/var/cache/u/mosaic-harness/mutant-cache.json");
    expect(defaultCachePath({ XDG_CACHE_HOME: "relative" })).toMatch(/\/\.cache\/mosaic-harness\/mutant-cache\.json$/);
  });

  it("a cache path inside the checkout is refused, naming it; one outside is taken (the control)", () => {
    const root = join(scratch.root, "checkout");
    for (const inside of ["reports/mutant-cache.json", "mutant-cache.json", join(root, "deep/c.json")])
      expect(placeCache(root, inside), inside).toMatchObject({
        error: expect.stringMatching(/lies inside the checkout/),
      });
    expect(placeCache(root, undefined, { XDG_CACHE_HOME: join(root, ".cache") })).toMatchObject({
      error: expect.stringMatching(/^the verdict cache: .* lies inside the checkout/),
    });
    expect(placeCache(root, "../elsewhere/c.json")).toEqual({ path: join(scratch.root, "elsewhere/c.json") });
    expect(placeCache(root, undefined, { XDG_CACHE_HOME: "/var/cache/u" })).toEqual({
      path: "/var/cache/u/mosaic-harness/mutant-cache.json",
    });
  });
});

describe("against a base, a stored kill answers only where the key is the same on both trees", () => {
  const FACTS: KeyFacts = { node: "v24", bwrap: "bubblewrap 0.8.0", isLiveTest: (f) => f.startsWith("live/") };
  const M: Mutant = {
    id: "m",
    file: "src/guard.ts",
    find: "return false;",
    replace: "return true;",
    undoes: "the guard",
    killedBy: ["contract/guard.test.ts > guard > refuses .."],
    source: "mutants/x.json",
  };
  const catalog = { sites: new Map([["m", { kind: "found", offset: 0 }]]), tags: [] } as unknown as LoadedCatalog;
  const kill = (loads: string[]): MutantRecord => ({
    mutant: M,
    line: 1,
    site: { kind: "found", offset: 0 } as MutantRecord["site"],
    verdict: { kind: "killed", by: [M.killedBy[0]!], evidence: "assertion", message: "x" },
    seconds: 1,
    testsRun: [M.killedBy[0]!],
    loads: { files: loads, folders: [] },
  });
  /** A change that edits a helper the killer loads only through a path it builds (so only the run's record names it). */
  function change(helperText: string) {
    const { root, git } = layRepo(`base-head-${helperText.length}`, {
      "src/guard.ts": "export const g = (p: string) => { if (p.includes('..')) return false; return true; };\n",
      "contract/guard.test.ts": "const cases = read(ROOT + '/contract/' + 'ca' + 'ses.json');\n",
      "contract/cases.json": '["../etc"]\n',
    });
    git("tag", "base");
    writeFileSync(join(root, "contract/cases.json"), helperText);
    git("commit", "-qam", "the change");
    // A kill stored under the change's own tree (as a cache from elsewhere, or forged, would hold it).
    const cache = emptyCache();
    storeVerdicts(
      cache,
      keyOf(makeKeyReader(root), M, FACTS),
      { id: "m", ordinary: kill(["contract/cases.json"]) },
      makeKeyReader(root),
    );
    const at = (baseRoot?: string) => splitByCache(root, catalog, [M], cache, "ordinary", FACTS, baseRoot);
    return { head: at(), withBase: at(layBaseTree(root, "base", join(scratch.root, `bases-${helperText.length}`))) };
  }

  it("a kill stored for the head tree does not answer when the change moved a recorded load: it runs, saying why", () => {
    const { head, withBase } = change("[]\n");
    expect(head.hits.has("m"), "the head tree alone would take it").toBe(true);
    expect(withBase.hits.has("m")).toBe(false);
    expect(withBase.misses.get("m")).toEqual([
      "on the base tree, recorded load contract/cases.json changed: the change under test moves its key",
    ]);
  });

  it("control: a kill whose key is the same on both trees answers", () => {
    const { root, git } = layRepo("base-head-same", {
      "src/guard.ts": "export const g = (p: string) => !p.includes('..');\n",
      "contract/guard.test.ts": "const cases = read(ROOT + '/contract/' + 'ca' + 'ses.json');\n",
      "contract/cases.json": '["../etc"]\n',
      "README.md": "one\n",
    });
    git("tag", "base");
    writeFileSync(join(root, "README.md"), "two\n");
    git("commit", "-qam", "a change the mutant does not load");
    const cache = emptyCache();
    storeVerdicts(
      cache,
      keyOf(makeKeyReader(root), M, FACTS),
      { id: "m", ordinary: kill(["contract/cases.json"]) },
      makeKeyReader(root),
    );
    const split = splitByCache(
      root,
      catalog,
      [M],
      cache,
      "ordinary",
      FACTS,
      layBaseTree(root, "base", join(scratch.root, "bases-same")),
    );
    expect(split.hits.has("m"), JSON.stringify([...split.misses])).toBe(true);
  });
});

describe("a pull request's run (--since) reads main's kills and neither answers its selection with them nor keeps its own", () => {
  it("--since keeps no verdict; a run without it keeps its kills (the control)", () => {
    expect(keepsVerdicts({ since: "origin/main" })).toBe(false);
    expect(keepsVerdicts({ since: undefined })).toBe(true);
  });

  it("under --since no stored kill answers a selected mutant; without it, the stored kills answer (the control)", () => {
    const hits = new Map([["no-remount-ro", "killed (cached)"]]);
    expect([...answeringHits(hits, { since: "origin/main" })]).toEqual([]);
    expect([...answeringHits(hits, { since: undefined })]).toEqual([["no-remount-ro", "killed (cached)"]]);
  });
});
