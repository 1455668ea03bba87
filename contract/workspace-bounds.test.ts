import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Finding } from "../src/core/workspace/findings.ts";
import { inspectWorkspace, WALK_BOUNDS, type WalkBounds } from "../src/core/workspace/inspect.ts";
import { planRemedies, REPORT_LISTS, relativeTo, type WorkspaceCheck } from "../src/core/workspace/remedy.ts";
import type { WorkspaceView } from "../src/core/workspace/tree-view.ts";
import type { WorkspaceTree } from "../src/conformance/worlds/tree.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { checkWorkspace } from "../src/host/workspace-check.ts";
import { LEGIT_REPO } from "./support/workspace-cases.ts";
import { caseView, layOutBytes } from "./support/workspace-tree.ts";
import { CHECK_AS, makeDeep } from "../src/conformance/worlds/racer.ts";

// The end-of-session check's work is bounded whatever a session leaves: past its entries or
// findings bound the walk stops and says unsafe; a directory past its depth or path-length bound
// is moved out whole, unexamined, so every later launch meets a bounded tree; planning the
// remedies grows with the findings, not their square; and the report stays small. Work is counted,
// never timed: a test's verdict cannot depend on the machine's load.
const WS = "/srv/ws";

// The heavy on-disk runs go in a process of their own (check-as.ts): the same
// shipped code, kept out of the sweep's per-test coverage, so a generated mutant of src/core does
// not rerun them each.

/** The check in a process of its own: the report as LaunchEnd would carry it. */
function checkAs(ws: string, q: string): WorkspaceCheck {
  const run = spawnSync(process.execPath, [CHECK_AS, ws, q], { encoding: "utf8", timeout: 110_000 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as WorkspaceCheck;
}

const Q = "/srv/q";
const bounds = (b: Partial<WalkBounds>): WalkBounds => ({ ...WALK_BOUNDS, ...b });
const kinds = (fs: Finding[]) => fs.map((f) => [f.kind, relativeTo(WS, f.path)]);

/** A view that records the most names the walk asked a listing for, and refuses to list past it. */
function counting(view: WorkspaceView): WorkspaceView & { asked: number[] } {
  const asked: number[] = [];
  return {
    ...view,
    asked,
    readdir(p, max) {
      asked.push(max ?? Number.POSITIVE_INFINITY);
      return view.readdir(p)?.slice(0, max) ?? null;
    },
  };
}

const many = (n: number, f: (i: number) => [string, WorkspaceTree[string]]): WorkspaceTree =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => f(i)));

describe("the walk's bounds, over declarative workspaces", () => {
  it("past its entries bound the walk stops: the workspace is unsafe (nothing of the founder's is moved for it), what it found before is still remedied, and no listing is read past the bound", () => {
    // Listed last, walked first: z is examined before the bound is met in a.
    const tree = { "/z/rootshell": { file: "x", mode: 0o4755 }, ...many(50, (i) => [`/a/f${i}`, "file"]) };
    const view = counting(caseView(tree, WS));
    const found = inspectWorkspace(WS, view, bounds({ entries: 20 }));
    expect(kinds(found)).toEqual([
      ["unexamined", "."],
      ["setid-file", "z/rootshell"],
    ]);
    expect(found[0]!.detail).toBe("the walk stopped at 20 entries: the rest was not examined");
    expect(Math.max(...view.asked), "a listing is asked for one name past what is left at most").toBeLessThanOrEqual(
      21,
    );
    expect(planRemedies(WS, Q, found).map((r) => [r.op, r.kind])).toEqual([
      ["none", "unexamined"],
      ["clear-setid", "setid-file"],
    ]);
  });

  it("past its findings bound the walk stops the same way", () => {
    const tree = many(30, (i) => [`/bin/s${String(i).padStart(2, "0")}`, { file: "x", mode: 0o4755 }]);
    const found = inspectWorkspace(WS, caseView(tree, WS), bounds({ findings: 10 }));
    expect(found.filter((f) => f.kind === "setid-file")).toHaveLength(10);
    expect(kinds(found)[0]).toEqual(["unexamined", "."]);
    expect(found[0]!.detail).toBe("the walk stopped at 10 findings: the rest was not examined");
  });

  it("a directory past the depth bound, or past the path-length bound, is moved whole and not walked; one just inside is walked", () => {
    const tree: WorkspaceTree = {
      "/a/b/c/rootshell": { file: "x", mode: 0o4755 },
      "/a/b/c/d/e/rootshell": { file: "x", mode: 0o4755 },
      [`/${"n".repeat(20)}/${"m".repeat(20)}/x`]: { file: "x", mode: 0o4755 },
    };
    const view = counting(caseView(tree, WS));
    expect(kinds(inspectWorkspace(WS, view, bounds({ depth: 3, pathBytes: 30 })))).toEqual([
      ["too-deep", "a/b/c/d"],
      ["setid-file", "a/b/c/rootshell"],
      ["too-deep", `${"n".repeat(20)}/${"m".repeat(20)}`],
    ]);
  });
});

describe("planning remedies is linear in the findings", () => {
  /** Findings whose path reads are counted; past the budget a read throws, so a quadratic plan stops at once. */
  function metered(n: number, budget: number): { findings: Finding[]; reads: () => number } {
    let reads = 0;
    const findings = Array.from({ length: n }, (_, i) => {
      const path = `${WS}/d${String(n - i).padStart(6, "0")}/.git`;
      return {
        kind: "nested-repository" as const,
        detail: "a .git dir below the root",
        get path() {
          if (++reads > budget) throw new Error(`over the budget of ${budget} reads`);
          return path;
        },
      };
    });
    return { findings, reads: () => reads };
  }

  it("40,000 findings, each moved (the worst case for a plan that looks back over what it moved): a bounded number of reads of each, and twice the findings cost about twice the reads", () => {
    const counts: number[] = [];
    for (const n of [20_000, 40_000]) {
      const m = metered(n, 64 * n);
      let plan: ReturnType<typeof planRemedies> = [];
      expect(
        () => (plan = planRemedies(WS, Q, m.findings)),
        "planning stays within 64 reads of each finding",
      ).not.toThrow();
      expect(plan).toHaveLength(n);
      counts.push(m.reads());
    }
    expect(counts[1]! / counts[0]!, `reads for 20,000 and 40,000 findings: ${counts.join(", ")}`).toBeLessThan(2.2);
  });
});

describe("the bounds on disk", () => {
  const scratch = makeScratch("ws-bounds");
  // rm -rf walks by descriptor: a tree past PATH_MAX cannot be removed by path.
  afterAll(() => {
    spawnSync("rm", ["-rf", scratch.root]);
    scratch.remove();
  });

  // Handing such a tree to the session's uid needs root: live/handover.test.ts.
  it("a tree 2,100 levels deep (past PATH_MAX): the check moves what lies past the depth bound out whole, and the workspace is quarantined", () => {
    const ws = join(scratch.root, "deep/ws");
    const q = join(scratch.root, "deep/q");
    layOutBytes(LEGIT_REPO, ws);
    makeDeep(ws, 2_100);
    // Positive control: a path-based walk cannot even name the bottom of the tree.
    const bottom = join(ws, ...Array.from({ length: 2_100 }, () => "d"), "rootshell");
    expect(() => lstatSync(bottom), "a path to the bottom is past PATH_MAX").toThrow(/ENAMETOOLONG/);
    const report = checkAs(ws, q);
    expect(report.verdict, JSON.stringify(report)).toBe("quarantined");
    const deepest = Array.from({ length: WALK_BOUNDS.depth + 1 }, () => "d").join("/");
    expect(report.verdict === "quarantined" ? report.done : []).toEqual([
      {
        kind: "too-deep",
        path: deepest,
        did: "moved",
        to: `files/${deepest}`,
        detail: "more than 256 levels or 3000 bytes below the workspace",
      },
    ]);
    expect(statSync(join(q, "files", deepest)).isDirectory(), "the subtree is in the quarantine, whole").toBe(true);
    expect(checkAs(ws, `${q}-again`).verdict, "a second check finds nothing").toBe("clean");
  }, 120_000);

  // 20,000 files to make, check and clear: 4 s alone here, several times that when the tier shares two cores.
  it("20,000 findings: every one is remedied, the report lists REPORT_LISTS of each and counts the rest, and stays small", {
    timeout: 120_000,
  }, () => {
    const ws = join(scratch.root, "many/ws");
    const q = join(scratch.root, "many/q");
    layOutBytes(LEGIT_REPO, ws);
    mkdirSync(join(ws, "bin"), { recursive: true });
    for (let i = 0; i < 20_000; i++) {
      writeFileSync(join(ws, "bin", `s${i}`), "x");
      chmodSync(join(ws, "bin", `s${i}`), 0o4755);
    }
    const report = checkAs(ws, q);
    expect(report.verdict).toBe("quarantined");
    if (report.verdict !== "quarantined") return;
    expect(report.done).toHaveLength(REPORT_LISTS);
    expect(report.omitted).toEqual({ done: 20_000 - REPORT_LISTS, failed: 0 });
    expect(lstatSync(join(ws, "bin/s19999")).mode & 0o6000, "the last one is cleared too").toBe(0);
    const bytes = Buffer.byteLength(JSON.stringify(report));
    expect(bytes, "what LaunchEnd and the launch record carry").toBeLessThan(64 * 1024);
    expect(readFileSync(join(q, "report.json")).length, "the report beside the quarantine").toBeLessThan(64 * 1024);
  });

  it("on disk the entries bound says unsafe and moves nothing", () => {
    const ws = join(scratch.root, "wide/ws");
    layOutBytes({ ...LEGIT_REPO, ...many(100, (i) => [`/f/${i}`, "file"]) }, ws);
    const report = checkWorkspace(ws, join(scratch.root, "wide/q"), bounds({ entries: 50 }));
    expect(report.verdict).toBe("unsafe");
    expect(report.verdict === "unsafe" ? [report.done, report.failed.map((f) => [f.kind, f.path])] : []).toEqual([
      [],
      [["unexamined", "."]],
    ]);
  });
});

describe("the walk's bounds at their edges", () => {
  const view = (tree: WorkspaceTree) => caseView(tree, WS);

  it("a root that cannot be examined is itself the finding, and nothing is listed", () => {
    const base = view({ "/a": "file" });
    const listed: string[] = [];
    const found = inspectWorkspace(WS, {
      ...base,
      lstat: (p) => (p === WS ? { kind: "unreadable", mode: 0 } : base.lstat(p)),
      readdir: (p, max) => (listed.push(p), base.readdir(p, max)),
    });
    expect([found, listed]).toEqual([[{ kind: "unreadable", path: WS, detail: "cannot be examined" }], []]);
  });

  it("exactly as many entries as the bound is within it; one more stops the walk", () => {
    const tree = many(10, (i) => [`/f${i}`, "file"]);
    expect(inspectWorkspace(WS, view(tree), bounds({ entries: 10 }))).toEqual([]);
    expect(kinds(inspectWorkspace(WS, view(tree), bounds({ entries: 9 })))).toEqual([["unexamined", "."]]);
  });

  it("a directory exactly pathBytes below the workspace is walked; one byte more is moved whole", () => {
    const at = (n: number) => `/${"p".repeat(n - 2)}/q`;
    const tree = { [`${at(20)}/x`]: { file: "x", mode: 0o4755 } };
    expect(kinds(inspectWorkspace(WS, view(tree), bounds({ pathBytes: 20 })))).toEqual([
      ["setid-file", `${at(20).slice(1)}/x`],
    ]);
    expect(kinds(inspectWorkspace(WS, view(tree), bounds({ pathBytes: 19 })))).toEqual([["too-deep", at(20).slice(1)]]);
  });

  it("the depth bound counts every level inside .git too: its data, submodules' and worktrees' git directories", () => {
    const tree: WorkspaceTree = {
      "/.git/HEAD": { file: "ref: refs/heads/main\n" },
      "/.git/refs/heads/main": "file",
      "/.git/modules/a/HEAD": { file: "ref: refs/heads/main\n" },
      "/.git/modules/b/c/HEAD": { file: "ref: refs/heads/main\n" },
      "/.git/worktrees/w/HEAD": { file: "ref: refs/heads/w\n" },
    };
    expect(kinds(inspectWorkspace(WS, view(tree), bounds({ depth: 2 })))).toEqual([
      ["too-deep", ".git/modules/a"],
      ["too-deep", ".git/modules/b"],
      ["too-deep", ".git/refs/heads"],
      ["too-deep", ".git/worktrees/w"],
    ]);
  });

  it("one entry that is two findings at the findings bound stops the walk once: one unexamined", () => {
    const found = inspectWorkspace(
      WS,
      view({ "/.git/HEAD": "file", "/.git/zz": { file: "x", mode: 0o4755 } }),
      bounds({ findings: 1 }),
    );
    expect(kinds(found)).toEqual([
      ["unexamined", "."],
      ["git-foreign-name", ".git/zz"],
      ["setid-file", ".git/zz"],
    ]);
  });

  it("only a setid file's finding carries a mode", () => {
    const found = inspectWorkspace(WS, view({ "/sub/.git": "dir", "/bin/s": { file: "x", mode: 0o4755 } }));
    expect(found.map((f) => ["mode" in f, f.kind])).toEqual([
      [true, "setid-file"],
      [false, "nested-repository"],
    ]);
  });
});
