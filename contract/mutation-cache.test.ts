// The mutation runner's verdict cache. A key must change when any one thing the verdict depends on
// changes (each input alone, on a real tree), and must not change for a file the killers never
// load (the control: a key over everything would never hit). Only a kill from a clean run is kept.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import type { Mutant } from "../src/mutation/catalog.ts";
import {
  explainMiss,
  keyOf,
  makeKeyReader,
  readGoldenWriter,
  walkLoads,
  type KeyFacts,
} from "../src/mutation/cache-key.ts";
import { GOLDEN_ROOT, REPO_ROOT, listGoldens, readProvenance } from "../src/conformance/golden/golden.ts";
import {
  emptyCache,
  lookUp,
  readCache,
  storeVerdicts,
  writeCache,
  type CacheMode,
  type VerdictCache,
} from "../src/mutation/cache.ts";
import { rememberVerdicts } from "../src/mutation/cache-run.ts";
import type { MutantRecord } from "../src/mutation/report.ts";
import type { MutantVerdict } from "../src/mutation/verdict.ts";

const scratch = makeScratch("mutation-cache");
afterAll(() => scratch.remove());

const H = " · regenerate: npm run goldens:update";
/** A small project: a killer test that imports, spawns by path and reads a fixture, and goldens. */
const TREE: Record<string, string> = {
  "src/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b() && true;\n',
  "src/b.ts": 'import { c } from "./deep/c.ts";\nexport const b = () => c();\n',
  "src/deep/c.ts": "export const c = () => true;\n",
  "src/spawned.ts": 'import "./spawned-dep.ts";\n',
  "src/spawned-dep.ts": "export {};\n",
  "src/unrelated.ts": "export const u = 1;\n",
  "contract/a.test.ts": [
    'import { a } from "../src/a.ts";',
    'const entry = join(ROOT, "src/spawned.ts");',
    'const data = readFileSync(join(import.meta.dirname, "../fixtures/data.json"));',
    'const cases = readdirSync(join(ROOT, "cases"));',
    'const code = readdirSync(join(ROOT, "src"));',
    'const out = readFileSync(join(ROOT, "reports/junit/contract.xml"));',
    'const runs = readdirSync(join(ROOT, "reports/mutation"));',
    "",
  ].join("\n"),
  "contract/other.test.ts": 'import { u } from "../src/unrelated.ts";\n',
  "live/l.test.ts": 'import { a } from "../src/a.ts";\nconst attack = join(ROOT, "live/support/attack.cjs");\n',
  "fixtures/data.json": "{}\n",
  "cases/one.yaml": "a: 1\n",
  "cases/deeper/two.yaml": "b: 2\n",
  "goldens/x/a.txt": `# a · from contract/a.test.ts > a > kills${H}\nrow\n`,
  "goldens/x/other.txt": `# other · from contract/other.test.ts > o > t${H}\nrow\n`,
  "vitest.config.ts": "export default {};\n",
  "package-lock.json": '{"lockfileVersion":3}\n',
  "package.json": '{"name":"t"}\n',
  "tsconfig.json": "{}\n",
  ".npmrc": "engine-strict=true\n",
  "live/support/attack.cjs": "process.exit(0);\n",
  "reports/junit/contract.xml": "<testsuites/>\n",
  "reports/mutation/mutation.json": "{}\n",
};

const mutant = (killer: string): Mutant => ({
  id: "m",
  file: "src/a.ts",
  find: "&& true",
  replace: "",
  undoes: "a protection",
  killedBy: [`${killer} > a > kills`],
  source: "mutants/x.json",
});
const CONTRACT = mutant("contract/a.test.ts");
const LIVE = mutant("live/l.test.ts");
/** One contract killer and one live one: bwrap is in its key, as in any mutant with a live killer. */
const MIXED: Mutant = { ...CONTRACT, killedBy: ["contract/a.test.ts > a > kills", "live/l.test.ts > a > kills"] };
const FACTS: KeyFacts = { node: "v24.21.0", bwrap: "bubblewrap 0.8.0", isLiveTest: (f) => f.startsWith("live/") };

let n = 0;
/** A fresh copy of TREE with one file's text changed (or none). */
function layTree(edit?: [path: string, text: (old: string) => string]): string {
  const root = join(scratch.root, `t${n++}`);
  for (const [p, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), edit?.[0] === p ? edit[1](text) : text);
  }
  return root;
}
const keyIn = (root: string, m = CONTRACT, facts = FACTS) => keyOf(makeKeyReader(root), m, facts);
const base = keyIn(layTree());

describe("a mutant's cache key", () => {
  it("reads each golden's writer as the golden header does: the engine's own reader cannot drift from it", () => {
    const goldens = listGoldens(GOLDEN_ROOT);
    expect(goldens.length).toBeGreaterThan(300);
    for (const g of goldens) {
      const text = readFileSync(join(REPO_ROOT, g), "utf8");
      expect(readGoldenWriter(text), g).toBe(readProvenance(text)?.file ?? null);
    }
    expect(readGoldenWriter("# no writer · regenerate: npm run goldens:update\n")).toBeNull();
  });

  it("is the same on an identical tree, and the walk finds imports, spawned entries and fixtures", () => {
    expect(keyIn(layTree()).key).toBe(base.key);
    expect(walkLoads(layTree(), ["contract/a.test.ts"])).toEqual([
      "cases/deeper/two.yaml",
      "cases/one.yaml",
      "contract/a.test.ts",
      "fixtures/data.json",
      "src/a.ts",
      "src/b.ts",
      "src/deep/c.ts",
      "src/spawned-dep.ts",
      "src/spawned.ts",
    ]);
  });

  it.each([
    ["src/a.ts", "mutated file src/a.ts changed"],
    ["contract/a.test.ts", "killer test file contract/a.test.ts changed"],
    ["src/b.ts", "loaded file src/b.ts changed"],
    ["src/deep/c.ts", "loaded file src/deep/c.ts changed"],
    ["src/spawned.ts", "loaded file src/spawned.ts changed"],
    ["src/spawned-dep.ts", "loaded file src/spawned-dep.ts changed"],
    ["fixtures/data.json", "loaded file fixtures/data.json changed"],
    ["cases/deeper/two.yaml", "loaded file cases/deeper/two.yaml changed"],
    ["goldens/x/a.txt", "golden goldens/x/a.txt changed"],
    ["vitest.config.ts", "project file vitest.config.ts changed"],
    ["package-lock.json", "project file package-lock.json changed"],
    ["package.json", "project file package.json changed"],
    ["tsconfig.json", "project file tsconfig.json changed"],
    [".npmrc", "project file .npmrc changed"],
  ])("misses when %s changes by one byte, and names it", (path, why) => {
    const k = keyIn(layTree([path, (t) => t + " "]));
    expect(k.key).not.toBe(base.key);
    expect(explainMiss(base.parts, k.parts)).toEqual([why]);
  });

  it("a killer the tree does not hold (new in the change, keyed on its base) loads nothing there", () => {
    expect(walkLoads(layTree(), ["contract/new.test.ts"])).toEqual(["contract/new.test.ts"]);
  });

  it("misses when the catalog entry changes (its replacement, or its killers)", () => {
    const root = layTree();
    expect(keyIn(root, { ...CONTRACT, replace: "&& false" }).key).not.toBe(base.key);
    expect(explainMiss(base.parts, keyIn(root, { ...CONTRACT, replace: "&& false" }).parts)).toEqual([
      "catalog entry catalog entry changed",
    ]);
  });

  it("misses when node changes; when any killer is live, when bwrap changes", () => {
    const root = layTree();
    expect(keyIn(root, CONTRACT, { ...FACTS, node: "v24.22.0" }).key).not.toBe(base.key);
    const live = keyIn(root, LIVE);
    expect(keyIn(root, LIVE, { ...FACTS, bwrap: "bubblewrap 0.11.0" }).key).not.toBe(live.key);
    const mixed = keyIn(root, MIXED);
    expect(
      explainMiss(mixed.parts, keyIn(root, MIXED, { ...FACTS, bwrap: "bubblewrap 0.11.0" }).parts),
      "one live killer among contract ones",
    ).toEqual(["bwrap bwrap changed"]);
  });

  it("a script a live killer names with any extension (a .cjs attack) is in its key", () => {
    const live = keyIn(layTree(), LIVE);
    const k = keyIn(layTree(["live/support/attack.cjs", (t) => t + " "]), LIVE);
    expect(explainMiss(live.parts, k.parts)).toEqual(["loaded file live/support/attack.cjs changed"]);
  });

  it("a file added to a folder the killer lists misses", () => {
    const root = layTree();
    writeFileSync(join(root, "cases/three.yaml"), "c: 3\n");
    expect(explainMiss(base.parts, keyIn(root).parts)).toEqual(["loaded file cases/three.yaml is new"]);
  });

  it("control: holds for a file, a golden and a bwrap its killers never touch", () => {
    expect(keyIn(layTree(["src/unrelated.ts", (t) => t + " "])).key).toBe(base.key);
    expect(keyIn(layTree(["goldens/x/other.txt", (t) => t + " "])).key).toBe(base.key);
    expect(keyIn(layTree(["contract/other.test.ts", (t) => t + " "])).key).toBe(base.key);
    // What runs write, named by a killer: a run's reports would otherwise miss on every run.
    expect(keyIn(layTree(["reports/junit/contract.xml", (t) => t + " "])).key).toBe(base.key);
    expect(keyIn(layTree(["reports/mutation/mutation.json", (t) => t + " "])).key).toBe(base.key);
    expect(keyIn(layTree(), CONTRACT, { ...FACTS, bwrap: "bubblewrap 0.11.0" }).key).toBe(base.key);
  });

  it("a loaded file that appears, or a golden the killer starts writing, misses too", () => {
    const root = layTree(["src/deep/c.ts", (t) => `import "./new.ts";\n${t}`]);
    writeFileSync(join(root, "src/deep/new.ts"), "export {};\n");
    expect(explainMiss(base.parts, keyIn(root).parts)).toEqual([
      "loaded file src/deep/c.ts changed",
      "loaded file src/deep/new.ts is new",
    ]);
    const g = layTree();
    writeFileSync(join(g, "goldens/x/b.txt"), `# b · from contract/a.test.ts > a > another${H}\n`);
    expect(explainMiss(base.parts, keyIn(g).parts)).toEqual(["golden goldens/x/b.txt is new"]);
  });
});

const KILLED: MutantVerdict = {
  kind: "killed",
  by: ["contract/a.test.ts > a > kills"],
  evidence: "assertion",
  message: "x",
};
const GOLDEN_KILL: MutantVerdict = { ...KILLED, evidence: "golden-only" } as MutantVerdict;
/** What the killer's run loaded: a module and a fixture, and a folder it listed. */
const LOADS = { files: ["src/b.ts", "fixtures/data.json"], folders: ["cases"] };
const record = (verdict: MutantVerdict, loads: MutantRecord["loads"] | null = LOADS): MutantRecord => ({
  mutant: CONTRACT,
  line: 1,
  site: { kind: "found", offset: 0 } as MutantRecord["site"],
  verdict,
  seconds: 1,
  testsRun: ["contract/a.test.ts > a > kills"],
  ...(loads ? { loads } : {}),
});
const baseRoot = layTree();
const reader = makeKeyReader(baseRoot);
const look = (cache: VerdictCache, mode: CacheMode, root = baseRoot) =>
  lookUp(cache, CONTRACT, keyIn(root), mode, makeKeyReader(root));

describe("the cache keeps kills only, each mode under the key it was computed with", () => {
  it("a stored kill is a hit under the same key and a miss, naming the input, under another", () => {
    const cache = emptyCache();
    expect(look(cache, "ordinary")).toEqual({ kind: "miss", why: ["no verdict stored"] });
    storeVerdicts(cache, base, { id: "m", ordinary: record(KILLED) }, reader);
    expect(look(cache, "ordinary")).toMatchObject({ kind: "hit", ordinary: { verdict: KILLED } });
    expect(look(cache, "ordinary", layTree(["contract/a.test.ts", (t) => t + " "]))).toEqual({
      kind: "miss",
      why: ["killer test file contract/a.test.ts changed"],
    });
  });

  it("a file or folder the run recorded loading is in its key: a change to it misses, naming it", () => {
    const cache = emptyCache();
    const quiet = { ...CONTRACT, killedBy: ["contract/other.test.ts > o > t"] };
    const k = keyIn(baseRoot, quiet);
    // contract/other.test.ts names none of these: only the run's record puts them in the key.
    storeVerdicts(
      cache,
      k,
      { id: "m", ordinary: record(KILLED, { files: ["live/support/attack.cjs"], folders: ["cases"] }) },
      reader,
    );
    const at = (root: string) => lookUp(cache, quiet, keyIn(root, quiet), "ordinary", makeKeyReader(root));
    expect(at(layTree()).kind, "control: the same tree").toBe("hit");
    expect(at(layTree(["live/support/attack.cjs", (t) => t + " "]))).toEqual({
      kind: "miss",
      why: ["recorded load live/support/attack.cjs changed"],
    });
    const added = layTree();
    writeFileSync(join(added, "cases/three.yaml"), "c: 3\n");
    expect(at(added)).toEqual({ kind: "miss", why: ["listed folder cases changed"] });
  });

  it("a verdict that is not a kill, or whose loads were not recorded, is not kept, and removes the kill before it", () => {
    const cache = emptyCache();
    storeVerdicts(cache, base, { id: "m", ordinary: record(KILLED) }, reader);
    storeVerdicts(cache, base, { id: "m", ordinary: record({ kind: "survived", testsRun: 1 }) }, reader);
    expect(cache.entries).toEqual({});
    storeVerdicts(cache, base, { id: "m", ordinary: record({ kind: "timeout", message: "t" }) }, reader);
    expect(cache.entries).toEqual({});
    storeVerdicts(cache, base, { id: "m", ordinary: record(KILLED, null) }, reader);
    expect(cache.entries, "a kill whose run's loads are unknown").toEqual({});
  });

  it("a verdict of one mode never answers the other; a both-verdicts run needs both", () => {
    const cache = emptyCache();
    storeVerdicts(cache, base, { id: "m", ordinary: record(KILLED) }, reader);
    expect(look(cache, "blessed")).toEqual({ kind: "miss", why: ["no bless-mode verdict stored"] });
    expect(look(cache, "both")).toEqual({ kind: "miss", why: ["no bless-mode verdict stored"] });
    storeVerdicts(cache, base, { id: "m", blessed: record(KILLED) }, reader);
    expect(look(cache, "both")).toMatchObject({ kind: "hit", ordinary: {}, blessed: {} });
    const onlyBlessed = emptyCache();
    storeVerdicts(onlyBlessed, base, { id: "m", blessed: record(KILLED) }, reader);
    expect(look(onlyBlessed, "ordinary")).toEqual({ kind: "miss", why: ["no ordinary verdict stored"] });
  });

  it("a stored mode from an older key is dropped when the other mode is stored under a new one", () => {
    const cache = emptyCache();
    storeVerdicts(cache, base, { id: "m", blessed: record(KILLED) }, reader);
    const newer = layTree(["src/a.ts", (t) => t + " "]);
    storeVerdicts(cache, keyIn(newer), { id: "m", ordinary: record(KILLED) }, makeKeyReader(newer));
    expect(Object.keys(cache.entries.m ?? {})).toEqual(["ordinary"]);
    const same = emptyCache();
    storeVerdicts(same, base, { id: "m", blessed: record(KILLED) }, reader);
    storeVerdicts(same, base, { id: "m", ordinary: record(KILLED) }, reader);
    expect(Object.keys(same.entries.m ?? {}).sort(), "control: the same key keeps both").toEqual([
      "blessed",
      "ordinary",
    ]);
  });

  it("a both-verdicts run stores its bless-mode verdict, not the ordinary one, as the bless-mode one", () => {
    const cache = emptyCache();
    const keys = new Map([["m", base]]);
    const blessed = record({ kind: "golden-only", goldens: ["goldens/x/a.txt"], testsRun: 1 });
    expect(
      rememberVerdicts(
        cache,
        keys,
        { records: [record(GOLDEN_KILL)], blessedRecords: [blessed], fatal: [] },
        "both",
        reader,
      ),
    ).toBe(1);
    expect(look(cache, "ordinary")).toMatchObject({ kind: "hit", ordinary: { verdict: GOLDEN_KILL } });
    expect(look(cache, "both")).toEqual({ kind: "miss", why: ["no bless-mode verdict stored"] });
    const both = emptyCache();
    rememberVerdicts(
      both,
      keys,
      { records: [record(GOLDEN_KILL)], blessedRecords: [record(KILLED)], fatal: [] },
      "both",
      reader,
    );
    expect(look(both, "both"), "control: a bless-mode kill is kept as it was").toMatchObject({
      kind: "hit",
      ordinary: { verdict: GOLDEN_KILL },
      blessed: { verdict: KILLED },
    });
  });

  it("a run with a fatal finding keeps nothing; a clean one keeps its kills", () => {
    const cache = emptyCache();
    const keys = new Map([["m", base]]);
    expect(
      rememberVerdicts(cache, keys, { records: [record(KILLED)], fatal: ["the suite is red"] }, "ordinary", reader),
    ).toBe(0);
    expect(cache.entries).toEqual({});
    expect(rememberVerdicts(cache, keys, { records: [record(KILLED)], fatal: [] }, "ordinary", reader)).toBe(1);
    expect(Object.keys(cache.entries)).toEqual(["m"]);
  });

  it("round-trips through its file; an unreadable file, or one of the old version, is an empty cache that says why", () => {
    const file = join(scratch.root, "cache", "c.json");
    const cache = emptyCache();
    storeVerdicts(cache, base, { id: "m", ordinary: record(KILLED) }, reader);
    writeCache(file, cache);
    expect(readCache(file, () => {})).toEqual(cache);
    writeFileSync(file, "{not json");
    const said: string[] = [];
    expect(readCache(file, (l) => said.push(l))).toEqual(emptyCache());
    expect(said.join("\n")).toMatch(/cannot be read.*starting empty/);
    expect(readFileSync(file, "utf8")).toBe("{not json");
    writeFileSync(file, JSON.stringify({ version: 1, entries: {} }));
    expect(readCache(file, (l) => said.push(l))).toEqual(emptyCache());
  });
});
