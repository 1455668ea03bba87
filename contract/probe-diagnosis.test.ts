// The diagnosis table (src/core/sandbox/diagnose.ts) over recorded bwrap failures: each case gets
// the row its fixture names, every row has a case, and the refusal line says the cause, its fix
// and bwrap's own words. The table and its decisions are a golden; the invariants beside it hold
// whatever an update writes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import {
  DIAGNOSES,
  bwrapVersionOf,
  diagnoseProbe,
  diagnosisLine,
  type ProbeSeen,
} from "../src/core/sandbox/diagnose.ts";

type Case = ProbeSeen & { name: string; source: string; expect: string };
const CASES = (
  JSON.parse(readFileSync(join(REPO_ROOT, "contract/fixtures/probe/bwrap-failures.json"), "utf8")) as {
    cases: Case[];
  }
).cases;

const idOf = (s: ProbeSeen) => {
  const d = diagnoseProbe(s);
  return d.kind === "known" ? d.row.id : "unknown";
};

describe("the probe's diagnosis table", () => {
  for (const c of CASES)
    it(`${c.name}: ${c.expect}`, () => {
      expect(idOf(c), c.source).toBe(c.expect);
      const line = diagnosisLine(diagnoseProbe(c), c);
      expect(line, "bwrap's own line is kept, with the step it failed at").toContain(
        `bwrap cannot apply ${c.step} here: ${c.line}`,
      );
      expect(line.includes("\n"), "one line").toBe(false);
      if (c.expect === "unknown") expect(line).toMatch(/^an unknown cause: /);
      else {
        const row = DIAGNOSES.find((r) => r.id === c.expect)!;
        expect(line.startsWith(`${row.cause}: ${row.fix} (`), "the line starts `<cause>: <fix>`").toBe(true);
      }
    });

  it("every row has a recorded case that it decides, and says its cause, fix and why", () => {
    expect(
      DIAGNOSES.filter((r) => !CASES.some((c) => c.expect === r.id)).map((r) => r.id),
      "rows no case shows",
    ).toEqual([]);
    expect(new Set(DIAGNOSES.map((r) => r.id)).size, "ids are unique").toBe(DIAGNOSES.length);
    for (const r of DIAGNOSES)
      expect(
        [r.cause, r.fix, r.why].every((t) => t.length > 20),
        `${r.id}: cause, fix and why`,
      ).toBe(true);
  });

  it("control: each case with the one sign that names its row taken away is no longer that row", () => {
    const lifted: Array<[string, (c: Case) => ProbeSeen]> = [
      ["proc-masked", (c) => ({ ...c, line: "bwrap: Can't mount tmpfs on /newroot/proc: Operation not permitted" })],
      ["bwrap-too-old", (c) => ({ ...c, bwrapVersion: "bubblewrap 0.8.0", line: "bwrap: Unknown option --frob" })],
      ["setuid-bwrap", (c) => ({ ...c, bwrapSetuid: false })],
      [
        "apparmor-userns",
        (c) => ({ ...c, sysctls: { ...c.sysctls, "kernel.apparmor_restrict_unprivileged_userns": 0 } }),
      ],
      [
        "max-user-namespaces",
        (c) => ({
          ...c,
          line: "bwrap: Creating new namespace failed: Function not implemented",
          sysctls: { ...c.sysctls, "user.max_user_namespaces": 15000 },
        }),
      ],
      ["userns-clone-disabled", (c) => ({ ...c, sysctls: { ...c.sysctls, "kernel.unprivileged_userns_clone": 1 } })],
      ["container-seccomp", (c) => ({ ...c, inContainer: false })],
      ["no-userns-kernel", (c) => ({ ...c, line: "bwrap: Creating new namespace failed: Invalid argument" })],
    ];
    expect(lifted.map(([id]) => id).sort()).toEqual(DIAGNOSES.map((r) => r.id).sort());
    for (const [id, lift] of lifted)
      for (const c of CASES.filter((x) => x.expect === id)) expect(idOf(lift(c)), `${c.name}, lifted`).not.toBe(id);
  });

  it("bwrap's version is read from its --version line; none is no version", () => {
    expect(bwrapVersionOf("bubblewrap 0.8.0")).toEqual([0, 8, 0]);
    expect(bwrapVersionOf("bubblewrap 0.11")).toEqual([0, 11, 0]);
    expect(bwrapVersionOf("bubblewrap 0.12.1\n")).toEqual([0, 12, 1]);
    expect(bwrapVersionOf(null)).toBeNull();
    expect(bwrapVersionOf("bubblewrap")).toBeNull();
    const at = (v: string) => idOf({ ...CASES[0]!, line: "bwrap: something else", bwrapVersion: v });
    expect(["0.7.9", "0.4.1", "0.7.0"].map((v) => at(`bubblewrap ${v}`))).toEqual(Array(3).fill("bwrap-too-old"));
    expect(["0.8.0", "0.9.0", "0.12.0", "1.0.0"].map((v) => at(`bubblewrap ${v}`))).toEqual(Array(4).fill("unknown"));
  });

  it("the table and its decisions, as a golden", async () => {
    const table = DIAGNOSES.map((r) => `${r.id}\n  cause: ${r.cause}\n  fix: ${r.fix}\n  why: ${r.why}`);
    const decisions = CASES.map((c) => `${c.name} · ${idOf(c)} · ${diagnosisLine(diagnoseProbe(c), c)}`);
    await matchGolden(
      "sandbox",
      "diagnoses",
      "txt",
      "the probe's diagnosis table, then each recorded bwrap failure and the refusal line it gets",
      ["# rows, first match wins", ...table, "", "# recorded failures: case · row · refusal line", ...decisions].join(
        "\n",
      ) + "\n",
    );
  });
});
