import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shownPath } from "../src/core/workspace/bytes.ts";
import { WORKSPACE_FINDINGS, type Finding } from "../src/core/workspace/findings.ts";
import { GIT_DIR_ENTRIES, GIT_POINTERS } from "../src/core/workspace/git-layout.ts";
import { inspectWorkspace, looksLikeHead, normalisePath } from "../src/core/workspace/inspect.ts";
import { planRemedies, relativeTo, shownRelative, type Remedy } from "../src/core/workspace/remedy.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { WORKSPACE_CASES } from "./support/workspace-cases.ts";
import { caseView, layOutBytes } from "./support/workspace-tree.ts";
import { checkWorkspace, openWorkspaceView } from "../src/host/workspace-check.ts";

// The end-of-session check (src/core/workspace) over declarative workspaces: each case's findings
// and remedies as a golden, with the kinds and paths it must find asserted inline, so a careless
// regeneration cannot bless a miss. Every finding kind has a case that is found and near-misses
// that are not. Then the same trees laid out on disk: the host's view decides the same, and the
// host's check leaves nothing behind and loses nothing.
const WS = "/srv/data/workspaces/acme/coder";
const raw = (bytes: string) => Buffer.from(bytes, "latin1");
const Q = "/srv/state/quarantine/run-1";

const rel = (p: string) => shownRelative(WS, p);
const render = (r: Remedy) =>
  r.op === "move"
    ? `move ${r.kind} ${rel(r.from)} -> <q>/${shownPath(r.to.slice(Q.length + 1))}`
    : r.op === "clear-setid"
      ? `clear-setid ${rel(r.path)} -> ${r.mode.toString(8)}`
      : `none ${r.kind} ${rel(r.path)}`;

/** The host's view of a workspace on disk: what it finds, kind and path relative to it. */
function onDisk(ws: string): Array<[string, string]> {
  const view = openWorkspaceView(ws);
  return inspectWorkspace(view.root, view).map((f) => [f.kind, relativeTo(view.root, f.path)]);
}

/** Properties every plan holds, whatever the case: each finding is remedied, within the workspace and the quarantine, nothing moved twice. */
function assertRemedyInvariants(findings: Finding[], remedies: Remedy[]): void {
  for (const f of findings) {
    const covered =
      WORKSPACE_FINDINGS[f.kind].action === "quarantine"
        ? remedies.some((r) => r.op === "move" && (f.path === r.from || f.path.startsWith(r.from + "/")))
        : remedies.some((r) => r.op === "clear-setid" && r.path === f.path) ||
          remedies.some((r) => r.op === "move" && f.path.startsWith(r.from));
    expect(
      covered,
      `${f.kind} ${f.path}: ${WORKSPACE_FINDINGS[f.kind].action === "quarantine" ? "moved to the quarantine" : "its bits cleared"}`,
    ).toBe(true);
  }
  const moved = remedies.flatMap((r) => (r.op === "move" ? [r] : []));
  for (const m of moved) {
    expect(m.from.startsWith(WS + "/"), `${m.from}: a remedy moves only what lies in the workspace`).toBe(true);
    expect(m.to, `${m.from}: it goes to the same relative path under the quarantine's files/`).toBe(
      `${Q}/files/${m.from.slice(WS.length + 1)}`,
    );
  }
  for (const a of moved)
    for (const b of moved)
      if (a !== b)
        expect(a.from.startsWith(b.from + "/"), `${a.from} lies under ${b.from}, which already moves`).toBe(false);
  for (const r of remedies)
    if (r.op === "clear-setid") expect(r.mode & 0o6000, `${r.path}: the setuid and setgid bits go`).toBe(0);
}

describe("the end-of-session check over declarative workspaces", () => {
  for (const [name, c] of Object.entries(WORKSPACE_CASES)) {
    it(`${name}: ${c.why}`, async () => {
      const findings = inspectWorkspace(WS, caseView(c.tree, WS));
      expect(
        findings.map((f) => [f.kind, relativeTo(WS, f.path)]),
        "what the check finds, kind and path",
      ).toEqual(c.finds);
      const remedies = planRemedies(WS, Q, findings);
      assertRemedyInvariants(findings, remedies);
      const body =
        [
          "findings:",
          ...findings.map((f) => `  ${f.kind} | ${rel(f.path)} | ${f.detail.split(WS).join("<ws>")}`),
          "remedies:",
          ...remedies.map((r) => `  ${render(r)}`),
        ].join("\n") + "\n";
      await matchGolden("workspace", name, "txt", `end-of-session check: ${c.why}`, body);
    });
  }

  it("every finding kind has a case that finds it, and near-misses find nothing", () => {
    const found = new Set(Object.values(WORKSPACE_CASES).flatMap((c) => c.finds.map(([k]) => k)));
    // unreadable and unexamined need a view that cannot see or a bound: their own tests below.
    const testable = Object.keys(WORKSPACE_FINDINGS).filter((k) => k !== "unreadable" && k !== "unexamined");
    expect([...found].sort(), "each kind a declarative tree can show is found by some case").toEqual(testable.sort());
    expect(
      Object.values(WORKSPACE_CASES).filter((c) => c.finds.length === 0).length,
      "near-misses",
    ).toBeGreaterThanOrEqual(5);
  });

  it("unreadable: a directory that cannot be listed and an entry that cannot be examined are moved out whole; the workspace itself is left, and unsafe", () => {
    const base = caseView(WORKSPACE_CASES["legit-repo"]!.tree, WS);
    const view = {
      ...base,
      readdir: (p: string) => (p === `${WS}/src` ? null : base.readdir(p)),
      lstat: (p: string) => (p === `${WS}/bin/tool` ? { kind: "unreadable" as const, mode: 0 } : base.lstat(p)),
    };
    const findings = inspectWorkspace(WS, view);
    expect(
      findings.map((f) => [f.kind, rel(f.path)]),
      "fail closed on what cannot be seen",
    ).toEqual([
      ["unreadable", "bin/tool"],
      ["unreadable", "src"],
    ]);
    expect(planRemedies(WS, Q, findings).map(render)).toEqual([
      "move unreadable bin/tool -> <q>/files/bin/tool",
      "move unreadable src -> <q>/files/src",
    ]);
    const root = inspectWorkspace(WS, { ...base, readdir: (p: string) => (p === WS ? null : base.readdir(p)) });
    expect(
      planRemedies(WS, Q, root).map((r) => r.op),
      "the workspace itself is never moved: the report says unsafe",
    ).toEqual(["none"]);
  });

  it("what git accepts as a HEAD, and path normalisation that cannot climb out", () => {
    expect(
      ["ref: refs/heads/main\n", "ref:refs/x", "ref: \trefs/heads/a", "3f786850e387550fdab836ed7e6dc881de23001b\n"].map(
        looksLikeHead,
      ),
    ).toEqual([true, true, true, true]);
    expect(["refs/heads/main", "ref: heads/main", "3f78", "hello", ""].map(looksLikeHead)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(normalisePath("/a/b/../c/./d")).toBe("/a/c/d");
    expect(normalisePath("/a/../../b")).toBeNull();
  });

  it("the allowlist is git's own names, each with a why, and never a pointer or a rebase's todo list", () => {
    for (const e of GIT_DIR_ENTRIES) expect(e.why.length, `${String(e.names)} has a why`).toBeGreaterThan(10);
    const names = GIT_DIR_ENTRIES.flatMap((e) => (Array.isArray(e.names) ? e.names : []));
    for (const n of ["commondir", "rebase-merge", "rebase-apply", "sequencer", "index.lock"])
      expect(names, `${n} is not allowed in a git directory`).not.toContain(n);
    expect(Object.keys(GIT_POINTERS).sort()).toEqual(["commondir", "gitdir"]);
    for (const [k, f] of Object.entries(WORKSPACE_FINDINGS)) expect(f.why.length, `${k} has a why`).toBeGreaterThan(20);
  });
});

describe("the same workspaces on disk", () => {
  const scratch = makeScratch("workspace-check");
  afterAll(() => scratch.remove());

  it("a link out of the workspace is never followed: a repository and a setuid file beyond it stay as they are", () => {
    const outside = join(scratch.root, "links", "founder-projects");
    layOutBytes(
      {
        "/app/.git/HEAD": { file: "ref: refs/heads/main\n" },
        "/app/.git/objects": "dir",
        "/app/.git/refs": "dir",
        "/bin/tool": { file: "x", mode: 0o4755 },
      },
      outside,
    );
    const ws = join(scratch.root, "links", "ws");
    layOutBytes(
      {
        ...WORKSPACE_CASES["legit-repo"]!.tree,
        "/escape": { link: "../founder-projects" },
        "/escape-app": { link: "../founder-projects/app" },
      },
      ws,
    );
    const report = checkWorkspace(ws, join(scratch.root, "links", "q"));
    expect(report.verdict, JSON.stringify(report, null, 2)).toBe("clean");
    expect(existsSync(join(outside, "app/.git/HEAD")), "the founder's repository beyond the link is untouched").toBe(
      true,
    );
    expect(lstatSync(join(outside, "bin/tool")).mode & 0o7777, "a file beyond the link keeps its mode").toBe(0o4755);
  });

  for (const [name, c] of Object.entries(WORKSPACE_CASES)) {
    it(`${name}: the host's view finds the same, and its check leaves nothing behind and loses nothing`, () => {
      const ws = join(scratch.root, name, "ws");
      const q = join(scratch.root, name, "state/quarantine/run-1");
      layOutBytes(c.tree, ws);
      expect(onDisk(ws), "the real filesystem decides as the declarative tree").toEqual(c.finds);
      const remedies = planRemedies(ws, q, inspectWorkspace(ws, caseView(c.tree, ws)));
      const before = new Map(
        remedies.flatMap((r) =>
          r.op === "move" && lstatSync(raw(r.from)).isFile() ? [[r.from, readFileSync(raw(r.from), "latin1")]] : [],
        ),
      );
      const report = checkWorkspace(ws, q);
      if (c.finds.length === 0) {
        expect(report.verdict, "a near-miss is left as it is").toBe("clean");
        expect(existsSync(q), "and no quarantine is made for it").toBe(false);
        return;
      }
      expect(report.verdict, JSON.stringify(report, null, 2)).toBe("quarantined");
      expect(onDisk(ws), "a second look finds nothing").toEqual([]);
      for (const r of remedies) {
        if (r.op === "move") {
          expect(lstatSync(raw(r.from), { throwIfNoEntry: false }), `${rel(r.from)} is gone from the workspace`).toBe(
            undefined,
          );
          const moved = lstatSync(raw(r.to), { throwIfNoEntry: false });
          expect(moved, `${rel(r.from)} is in the quarantine, not lost`).toBeDefined();
          if (before.has(r.from))
            expect(readFileSync(raw(r.to), "latin1"), `${rel(r.from)} keeps its content`).toBe(before.get(r.from));
        } else if (r.op === "clear-setid") {
          expect(
            lstatSync(raw(r.path)).mode & 0o6000,
            `${rel(r.path)} keeps its place and loses its setuid and setgid bits`,
          ).toBe(0);
        }
      }
      expect(lstatSync(q).mode & 0o777, "the quarantine is the host's alone").toBe(0o700);
      expect(
        JSON.parse(readFileSync(join(q, "report.json"), "utf8")).verdict,
        "the report lies beside what was moved",
      ).toBe("quarantined");
    });
  }
});
