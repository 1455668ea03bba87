// What the catalog self-test concludes for one mutant: does the golden diff it causes show at least
// one weakens line? Pure; the run that applies mutants and writes goldens is catalog-run.ts.
import type { Report } from "./classify.ts";

/**
 * Mutants whose golden diff is rightly no weakening: each undoes a line the session needs to work,
 * not one that confines it, or a line a later check backs up, and a test notices. The review must
 * still say what the entry says.
 */
export const EXPECTED_WITHOUT_WEAKENS: Readonly<Record<string, { verdict: "strengthens" | "neutral"; why: string }>> = {
  "no-workspace-bind": {
    verdict: "strengthens",
    why: "drops the workspace bind: the harness has nowhere to work, and the session sees less of the host",
  },
  "proxy-key-ignored": {
    verdict: "strengthens",
    why: "drops the proxy credential set: a proxy-only session is refused instead of launched, and two variables fewer reach sessions",
  },
  "runDir-read-only": {
    verdict: "strengthens",
    why: "makes the run directory read-only: turns and the tool socket cannot be written, and the session may write less",
  },
  "claude-preflight-missing-ignored": {
    verdict: "neutral",
    why: "the --version check after it refuses the same missing binary: only the preflight's reason is reworded, the launch is still refused or falls back",
  },
  "pi-preflight-missing-ignored": {
    verdict: "neutral",
    why: "the --version check after it refuses the same missing binary: only the preflight's reason is reworded, the launch is still refused",
  },
};

export type CatalogOutcome =
  | { kind: "weakens"; lines: number; goneOnly: boolean }
  | { kind: "expected"; verdict: string; why: string }
  | { kind: "no-golden-change"; why?: string }
  | { kind: "finding"; shows: string }
  | { kind: "stale"; why: string };

export type CatalogRow = {
  id: string;
  /** Goldens that differ from the checkout after the update, counting the unwritten as removed. */
  goldensChanged: number;
  /** Goldens no test wrote in the mutated run (a test stopped before its golden, or returned early). */
  notWritten: number;
  report: Report;
  outcome: CatalogOutcome;
  seconds: number;
};

export function judgeMutant(id: string, report: Report): CatalogOutcome {
  const c = report.counts;
  if (report.goldens.length === 0) return { kind: "no-golden-change" };
  if (c.weakens > 0) {
    const weak = report.findings.filter((f) => f.verdict === "weakens");
    return { kind: "weakens", lines: weak.length, goneOnly: weak.every((f) => f.rule === "golden-removed") };
  }
  const shows =
    (["unknown", "strengthens", "neutral"] as const)
      .filter((v) => c[v] > 0)
      .map((v) => `${c[v]} ${v}`)
      .join(", ") || "nothing";
  const expected = EXPECTED_WITHOUT_WEAKENS[id];
  if (
    expected &&
    c.unknown === 0 &&
    c[expected.verdict] > 0 &&
    (expected.verdict === "strengthens" || c.strengthens === 0)
  )
    return { kind: "expected", verdict: expected.verdict, why: expected.why };
  return { kind: "finding", shows };
}

export function labelOutcome(o: CatalogOutcome): string {
  switch (o.kind) {
    case "weakens":
      return o.goneOnly ? "weakens shown (only a golden gone: its test stopped before writing it)" : "weakens shown";
    case "expected":
      return `${o.verdict}, as expected: ${o.why}`;
    case "no-golden-change":
      return o.why ? `no golden change: ${o.why}` : "no golden change";
    case "finding":
      return `FINDING: no weakens line (shows ${o.shows}): a rule to add`;
    case "stale":
      return `stale: ${o.why}`;
  }
}

/** A run fails on a finding: a mutant that changes a golden, and the review calls nothing a weakening. */
export function isFailure(o: CatalogOutcome): boolean {
  return o.kind === "finding";
}

export function renderCatalogTable(rows: readonly CatalogRow[]): string {
  const head = ["| mutant | goldens changed | weakens lines | verdict |", "|---|---|---|---|"];
  const body = rows.map((r) => {
    const changed = r.notWritten > 0 ? `${r.goldensChanged} (${r.notWritten} not written)` : String(r.goldensChanged);
    return `| ${r.id} | ${changed} | ${r.report.counts.weakens} | ${labelOutcome(r.outcome)} |`;
  });
  return [...head, ...body].join("\n");
}

export function summariseCatalog(rows: readonly CatalogRow[]): string {
  const n = (k: CatalogOutcome["kind"]) => rows.filter((r) => r.outcome.kind === k).length;
  return `${rows.length} mutants: ${n("weakens")} show a weakening, ${n("expected")} rightly none, ${n("no-golden-change")} change no golden, ${n("finding")} findings, ${n("stale")} stale`;
}
