// The golden review's rules on fixture pairs of goldens: each rule fires on its case and on no
// other, and the review's own report on each pair is a golden. Pure: no git, no process.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, listGoldens } from "../src/conformance/golden/golden.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { reviewGolden, reviewGoldens, exitCodeOf, type GoldenPair } from "../src/review/classify.ts";
import { findKind } from "../src/review/kinds.ts";
import { diffFacts } from "../src/review/model.ts";
import { parseBwrapArgv } from "../src/review/parse-bwrap-argv.ts";
import { parseSeccomp } from "../src/review/parse-seccomp.ts";
import { readHeader } from "../src/review/parse-lines.ts";
import { renderText } from "../src/review/render.ts";
import { RULES } from "../src/review/rules.ts";

const FIXTURES = join(REPO_ROOT, "contract/fixtures/review");
const UNKNOWN = "(unknown)";

/** The rules each fixture pair must fire, and no other; "(unknown)" for a change no rule reads. */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  "session-env-added": ["session-env-added"],
  "host-plan-removed": ["host-plan-removed"],
  "host-plan-changed": ["host-plan-changed"],
  "host-plan-protection-added": ["host-plan-protection-added"],
  "model-decision-refuse-to-pass": ["decision-now-passes", "decision-refusal-lost"],
  "model-decision-pass-to-refuse": ["decision-now-refused"],
  "proxy-limit-raised": ["proxy-limit-raised"],
  "proxy-limit-lowered": ["proxy-limit-lowered"],
  "session-file-kill-namespace-off": ["session-bound-loosened"],
  "session-file-tool-line-lowered": ["session-bound-tightened"],
  "workspace-entry-lost": ["workspace-entry-lost"],
  "workspace-entry-added": ["workspace-entry-added"],
  "workspace-entry-reworded": ["workspace-entry-reworded"],
  "session-env-removed": ["session-env-removed"],
  "session-file-launch-socket-named": ["session-launch-socket-named"],
  "session-file-launch-socket-gone": ["session-launch-socket-gone"],
  "session-file-env-reordered": ["reorder-unordered"],
  "diagnosis-changed": ["diagnosis-changed"],
  "diagnosis-case-removed": ["diagnosis-case-removed"],
  "diagnosis-reworded": ["diagnosis-reworded"],
  "session-file-tripwire-off": ["session-tripwire-off"],
  "session-file-tripwire-on": ["session-tripwire-on"],
  "session-file-tripwire-stream-changed": ["tripwire-stream-changed"],
  "session-file-tripwire-typed-tool-added": ["tripwire-typed-tool-added"],
  "session-file-tripwire-typed-tool-removed": ["tripwire-typed-tool-removed"],
  "adapter-event-stream-removed": ["event-stream-removed"],
  "adapter-event-stream-changed": ["event-stream-changed"],
  "adapter-credential-to-placeholder": ["credential-to-placeholder"],
  "adapter-placeholder-to-credential": ["placeholder-to-credential"],
  "models-key-not-placeholder": ["models-key-not-placeholder"],
  "models-url-moved": ["models-url-moved"],
  "egress-allow-added": ["egress-allow-added"],
  "egress-allow-removed": ["egress-allow-removed"],
  "network-mode-added": ["network-mode-added"],
  "network-mode-removed": ["network-mode-removed"],
  "egress-refuse-to-forward": ["egress-refuse-to-forward"],
  "egress-forward-to-refuse": ["egress-forward-to-refuse"],
  "egress-reason-reworded": ["egress-reason-reworded"],
  "egress-case-added-forward": ["egress-case-added-forward"],
  "egress-case-added-refuse": ["egress-case-added-refuse"],
  "egress-case-removed-refuse": ["egress-case-removed-refuse"],
  "egress-case-removed-forward": ["egress-case-removed-forward"],
  "golden-header-reworded": ["header-reworded"],
  "bind-ro-over-rw-removed": ["ro-over-rw-removed"],
  "bind-pinned-removed": ["pinned-bind-removed"],
  "bind-removed": ["mount-removed"],
  "bind-added": ["mount-added"],
  "bind-ro-to-rw": ["mount-widened"],
  "bind-rw-to-ro": ["mount-narrowed"],
  "bind-source-changed": ["mount-source-changed"],
  "bind-why-reworded": ["why-reworded"],
  "bind-reordered": ["mount-reordered"],
  "bind-covered-by-wider": ["mount-covered-by-wider", "mount-reordered"],
  "bind-uncovered-narrower": ["mount-uncovered-narrower", "mount-reordered"],
  "bind-covered-by-narrower": ["mount-covered-by-narrower", "mount-reordered"],
  "bind-uncovered-wider": ["mount-uncovered-wider", "mount-reordered"],
  "bind-stand-in-removed": ["stand-in-over-rw-removed"],
  "bind-mount-point-removed": ["mount-point-removed"],
  "bind-tmpfs-size-removed": ["tmpfs-bound-loosened"],
  "argv-stand-in-removed": ["stand-in-over-rw-removed"],
  "argv-mount-point-removed": ["mount-point-removed"],
  "argv-tmpfs-size-removed": ["tmpfs-bound-loosened"],
  "argv-tmpfs-size-added": ["tmpfs-bound-tightened"],
  "argv-nproc-removed": ["task-limit-loosened"],
  "seccomp-socket-check-removed": [
    "(unknown)",
    "seccomp-arg-check-removed",
    "seccomp-check-removed",
    "seccomp-deny-return-removed",
  ],
  "seccomp-socket-family-added": ["seccomp-allow-jump-added"],
  "seccomp-netlink-any-protocol": ["seccomp-jump-to-allow"],
  "argv-identity-removed": ["session-identity-removed"],
  "argv-identity-added": ["session-identity-added"],
  "argv-identity-root": ["session-identity-root"],
  "argv-data-removed": ["memory-limit-loosened"],
  "argv-data-added": ["memory-limit-tightened"],
  "argv-shm-removed": ["bounded-tmpfs-removed"],
  "argv-proc-sys-removed": ["kernel-cover-removed"],
  "bind-shm-removed": ["bounded-tmpfs-removed"],
  "bind-proc-sys-removed": ["kernel-cover-removed"],
  "argv-nproc-added": ["task-limit-tightened"],
  "argv-runner-node-readable": ["runner-node-readable"],
  "argv-runner-node-execute-only": ["runner-node-execute-only"],
  "argv-mount-after-remount": ["mount-after-remount"],
  "argv-mount-before-remount": ["mount-before-remount"],
  "argv-bind-ro-to-rw": ["mount-widened"],
  "argv-remount-removed": ["remount-ro-removed"],
  "argv-remount-added": ["remount-ro-added"],
  "argv-namespace-removed": ["namespace-removed"],
  "argv-cap-drop-removed": ["cap-drop-removed"],
  "argv-disable-userns-removed": ["disable-userns-removed"],
  "argv-new-session-removed": ["new-session-removed"],
  "argv-seccomp-removed": ["seccomp-filter-removed"],
  "argv-hardening-added": ["hardening-added"],
  "argv-cap-drop-narrowed": ["cap-drop-narrowed"],
  "argv-die-with-parent-added": ["bwrap-widening-added"],
  "argv-die-with-parent-removed": ["bwrap-widening-removed"],
  "argv-home-removed": ["sandbox-env-removed"],
  "argv-home-moved": ["sandbox-home-moved"],
  "argv-pdeathsig-removed": ["pdeathsig-removed"],
  "argv-pdeathsig-added": ["pdeathsig-added"],
  "argv-flags-reordered": ["reorder-unordered"],
  "argv-chdir-changed-unknown": ["(unknown)"],
  "adapter-program-changed": ["adapter-program-changed"],
  "adapter-tool-limit-removed": ["tool-limit-removed", "tool-follows-limit"],
  "adapter-tool-added": ["tool-added"],
  "adapter-tool-removed": ["tool-removed"],
  "adapter-tools-reordered": ["reorder-unordered"],
  "adapter-restricted-removed": ["restricted-removed"],
  "adapter-restricted-added": ["adapter-hardening-added"],
  "adapter-strict-mcp-removed": ["strict-mcp-removed"],
  "adapter-setting-sources-removed": ["setting-sources-removed"],
  "adapter-setting-sources-widened": ["setting-sources-widened"],
  "adapter-gate-extension-removed": ["gate-extension-removed"],
  "adapter-settings-removed": ["gate-config-removed"],
  "adapter-pi-isolation-removed": ["pi-isolation-removed"],
  "adapter-bare-added": ["adapter-widening-added"],
  "adapter-bare-removed": ["adapter-widening-removed"],
  "adapter-permission-mode-loosened": ["permission-mode-loosened"],
  "adapter-permission-mode-tightened": ["permission-mode-tightened"],
  "adapter-gate-file-changed": ["gate-file-changed"],
  "adapter-model-changed": ["model-choice-changed"],
  "adapter-prompt-file-changed": ["prompt-changed"],
  "adapter-credential-shown": ["credential-shown"],
  "adapter-protective-env-removed": ["protective-env-removed"],
  "adapter-protective-env-changed": ["protective-env-changed"],
  "adapter-path-changed": ["path-changed"],
  "adapter-env-added": ["env-added"],
  "adapter-env-removed": ["env-removed"],
  "gate-block-to-allow": ["gate-block-to-allow"],
  "gate-allow-to-block": ["gate-allow-to-block"],
  "gate-block-check-changed": ["gate-block-check-changed"],
  "gate-block-check-lost": ["gate-block-check-changed"],
  "gate-block-check-gained": ["gate-reason-reworded"],
  "gate-reason-reworded": ["gate-reason-reworded"],
  "gate-call-added-allow": ["gate-call-added-allow"],
  "gate-call-added-block": ["gate-call-added-block"],
  "gate-call-removed-block": ["gate-call-removed-block"],
  "gate-call-removed-allow": ["gate-call-removed-allow"],
  "gate-scene-changed": ["gate-scene-changed"],
  "gate-calls-reordered": ["reorder-unordered"],
  "settings-hook-changed": ["hook-changed"],
  "mcp-server-added": ["mcp-server-added", "json-comes-with-entry"],
  "mcp-server-removed": ["mcp-server-removed", "json-comes-with-entry"],
  "mcp-server-changed": ["mcp-server-changed"],
  "tools-entry-added": ["typed-tool-added", "json-comes-with-entry"],
  "tools-entry-removed": ["typed-tool-removed", "json-comes-with-entry"],
  "tools-description-reworded": ["json-text-reworded"],
  "policy-root-changed": ["policy-root-changed"],
  "policy-tool-added": ["tool-added"],
  "policy-service-added": ["service-added"],
  "policy-service-removed": ["service-removed"],
  "policy-keys-reordered": ["reorder-unordered"],
  "manifest-digest-changed": ["digest-changed"],
  "manifest-guarantee-dropped": ["guarantee-dropped"],
  "manifest-guarantee-recorded": ["guarantee-recorded"],
  "manifest-how-reworded": ["json-text-reworded"],
  "manifest-timeout-changed-unknown": ["(unknown)"],
  "prompt-changed": ["prompt-changed"],
  "route-sandbox-mount-added": ["sandbox-mount-added"],
  "route-sandbox-mount-removed": ["sandbox-mount-removed"],
  "route-bundle-file-dropped": ["bundle-file-dropped"],
  "route-turn-end-changed": ["turn-end-changed"],
  "route-model-changed": ["model-choice-changed"],
  "modules-module-added": ["harness-module-added"],
  "modules-module-removed": ["harness-module-removed"],
  "modules-env-added": ["env-added"],
  "modules-gate-changed": ["hook-changed"],
  "modules-tool-added": ["tool-added"],
  "modules-thinking-changed": ["model-choice-changed"],
  "refusal-code-changed": ["refusal-code-changed"],
  "refusal-reworded": ["refusal-reworded"],
  "refusal-line-gone": ["refusal-gone"],
  "refusal-golden-removed": ["golden-removed"],
  "golden-added": ["(unknown)"],
  "refusal-codes-gone": ["refusal-gone"],
  "refusal-codes-added": ["refusal-added"],
  "refusal-codes-reordered": ["check-order-changed"],
  "refusal-codes-why-reworded": ["why-reworded"],
  "spec-error-code-changed": ["refusal-code-changed"],
  "env-allow-added": ["env-allow-added"],
  "env-allow-removed": ["env-allow-removed"],
  "env-allow-reordered": ["reorder-unordered"],
  "founder-env-removed": ["founder-env-removed"],
  "founder-env-added": ["founder-env-added"],
  "credential-set-added": ["credential-set-added"],
  "credential-set-removed": ["credential-set-removed"],
  "credential-set-loosened": ["credential-set-loosened"],
  "credential-set-tightened": ["credential-set-tightened"],
  "exit-kill-unrecorded": ["kill-unrecorded"],
  "exit-kill-recorded": ["kill-recorded"],
  "catalog-tool-added": ["tool-added"],
  "catalog-tool-removed": ["tool-removed"],
  "seccomp-row-removed": ["seccomp-row-removed"],
  "seccomp-row-added": ["seccomp-row-added"],
  "seccomp-action-widened": ["seccomp-action-widened"],
  "seccomp-action-narrowed": ["seccomp-action-narrowed"],
  "seccomp-allow-return-added": ["seccomp-allow-return-added"],
  "seccomp-deny-return-removed": ["seccomp-deny-return-removed"],
  "seccomp-deny-return-added": ["seccomp-deny-return-added"],
  "seccomp-digest-changed": ["digest-changed"],
  "seccomp-insn-changed-unknown": ["(unknown)"],
  "seccomp-listing-row-removed": ["seccomp-row-removed"],
  "seccomp-listing-why-reworded": ["why-reworded"],
  "seccomp-listing-row-moved-unknown": ["(unknown)"],
  "seccomp-clone-flags-narrowed": ["seccomp-clone-flags-narrowed"],
  "seccomp-clone-flags-widened": ["seccomp-clone-flags-widened"],
  "seccomp-arch-check-open": ["seccomp-jump-off-deny"],
  "seccomp-arch-check-closed": ["seccomp-jump-to-deny"],
  "seccomp-x32-check-removed": ["seccomp-check-removed"],
  "seccomp-x32-check-added": ["seccomp-check-added"],
  "review-alarm-lowered": ["review-alarm-lowered", "review-wording"],
  "review-alarm-raised": ["review-alarm-raised", "review-wording"],
  "review-wording": ["review-wording"],
  "plan-probe-changed": ["plan-probe-changed"],
  "plan-bundle-writable": ["mount-widened"],
  "unregistered-kind-unknown": ["(unknown)"],
  "text-only-change-unknown": ["(unknown)"],
};

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      if (n.startsWith(".")) return [];
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
}

/** A fixture's before/ and after/ trees as golden pairs, paths as under goldens/. */
function loadPair(name: string): GoldenPair[] {
  const side = (s: string) =>
    new Map(
      walk(join(FIXTURES, name, s)).map((p) => [
        `goldens/${relative(join(FIXTURES, name, s), p)}`,
        readFileSync(p, "utf8"),
      ]),
    );
  const before = side("before");
  const after = side("after");
  return [...new Set([...before.keys(), ...after.keys()])]
    .sort()
    .map((path) => ({ path, before: before.get(path) ?? null, after: after.get(path) ?? null }));
}

const fired = (pairs: GoldenPair[]) => [...new Set(reviewGoldens(pairs).findings.map((f) => f.rule ?? UNKNOWN))].sort();

describe("golden review rules on fixture pairs", () => {
  it("every fixture pair has its expected rules, and every expectation its fixture", () => {
    expect(readdirSync(FIXTURES).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it("every rule has a fixture case on which it fires", () => {
    const covered = new Set(Object.values(EXPECTED).flat());
    expect(
      RULES.map((r) => r.id).filter((id) => !covered.has(id)),
      "rules no fixture shows firing",
    ).toEqual([]);
    expect(new Set(RULES.map((r) => r.id)).size, "rule ids are unique").toBe(RULES.length);
    expect(
      RULES.every((r) => r.why.length > 0),
      "every rule says why",
    ).toBe(true);
  });

  for (const [name, want] of Object.entries(EXPECTED)) {
    it(name, async () => {
      const pairs = loadPair(name);
      const report = reviewGoldens(pairs);
      // The invariant beside the golden: exactly these rules fire, so each fires on its case and on no other.
      expect(fired(pairs), `rules fired on ${name}`).toEqual([...want].sort());
      for (const f of report.findings) {
        expect(f.rule === null, `${f.case}: unknown exactly when no rule classifies it`).toBe(f.verdict === "unknown");
        expect(f.why.length, `${f.case}: every line gives its why`).toBeGreaterThan(0);
      }
      expect(exitCodeOf(report)).toBe(report.counts.weakens + report.counts.unknown > 0 ? 1 : 0);
      await matchGolden(
        "review",
        name,
        "txt",
        `golden review of the fixture pair contract/fixtures/review/${name}`,
        renderText(report),
      );
    });
  }
});

describe("golden review verdicts", () => {
  it("a reorder of an unordered table is neutral, and only neutral", () => {
    const r = reviewGoldens(loadPair("env-allow-reordered"));
    expect(r.counts).toEqual({ weakens: 0, unknown: 0, strengthens: 0, neutral: 1 });
    expect(exitCodeOf(r)).toBe(0);
  });

  it("a golden of a kind no parser reads is unknown for any change, never neutral", () => {
    const r = reviewGoldens(loadPair("unregistered-kind-unknown"));
    expect(r.findings.length).toBeGreaterThan(0);
    expect(r.findings.every((f) => f.verdict === "unknown")).toBe(true);
    expect(exitCodeOf(r)).toBe(1);
  });

  it("weakens come first, then unknown, strengthens, neutral", () => {
    const pairs = ["bind-ro-to-rw", "bind-rw-to-ro", "bind-why-reworded", "unregistered-kind-unknown"].flatMap((n) =>
      loadPair(n).map((p) => ({ ...p, path: p.path.replace(/(\.[a-z]+)$/, `-${n}$1`) })),
    );
    const order = reviewGoldens(pairs).findings.map((f) => f.verdict);
    expect(order).toEqual(
      [...order].sort(
        (a, b) =>
          ["weakens", "unknown", "strengthens", "neutral"].indexOf(a) -
          ["weakens", "unknown", "strengthens", "neutral"].indexOf(b),
      ),
    );
    expect(new Set(order)).toEqual(new Set(["weakens", "unknown", "strengthens", "neutral"]));
  });

  it("a change no row reads is shown beside a change a rule ranks: two changes to one golden, one neutral, one only its text", () => {
    const path = "goldens/sandbox/binds/fixture.txt";
    const before = readFileSync(join(FIXTURES, "bind-why-reworded/before/sandbox/binds/fixture.txt"), "utf8");
    const reworded = readFileSync(join(FIXTURES, "bind-why-reworded/after/sandbox/binds/fixture.txt"), "utf8");
    const lines = reworded.split("\n");
    const row = lines.findIndex((l, i) => i > 1 && l !== "" && before.includes(`${l}\n`));
    // The forgery: beside the reworded reason, one more row changed only in its text (indented).
    const forged = lines.map((l, i) => (i === row ? `  ${l}` : l)).join("\n");
    const control = reviewGoldens([{ path, before, after: reworded }]);
    expect(control.counts, "the reworded reason alone is neutral").toEqual({
      weakens: 0,
      unknown: 0,
      strengthens: 0,
      neutral: 1,
    });
    expect(exitCodeOf(control)).toBe(0);
    const r = reviewGoldens([{ path, before, after: forged }]);
    expect(
      r.findings.map((f) => `${f.verdict} ${f.rule ?? UNKNOWN} ${f.case}: ${f.before} → ${f.after}`),
      "the indented row is shown as unknown beside the neutral finding",
    ).toEqual([
      `unknown ${UNKNOWN} line ${row + 1}: ${lines[row]} → (none)`,
      `unknown ${UNKNOWN} line ${row + 1}: (none) → "  ${lines[row]}"`,
      "neutral why-reworded bind <ws>: why: where the harness works → the harness's working tree",
    ]);
    expect(exitCodeOf(r), "a change no rule ranks needs a reader").toBe(1);
  });

  it("exit 0 only when nothing weakens and nothing is unknown", () => {
    expect(exitCodeOf(reviewGoldens(loadPair("bind-rw-to-ro")))).toBe(0);
    expect(exitCodeOf(reviewGoldens(loadPair("bind-ro-to-rw")))).toBe(1);
    expect(exitCodeOf(reviewGoldens(loadPair("argv-chdir-changed-unknown")))).toBe(1);
    expect(exitCodeOf(reviewGoldens([]))).toBe(0);
  });
});

describe("the goldens of this repository, as the review reads them", () => {
  const goldens = listGoldens().filter((p) => !p.startsWith("goldens/review/"));

  it("every golden kind is registered, and its parser reads every line", () => {
    for (const p of goldens) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      const kind = findKind(p, readHeader(text));
      expect(kind, `${p}: no kind in src/review/kinds.ts reads it; add a row`).not.toBeNull();
      const unread = kind!
        .parse(text)
        .filter((f) => f.type === "line")
        .map((f) => f.text);
      // The plan report's titles are prose; every other kind has a form for each line.
      if (kind!.id !== "cli-plan") expect(unread, `${p}: lines its parser keeps whole`).toEqual([]);
    }
  });

  it("a golden compared with itself shows no change", () => {
    for (const p of goldens) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      const kind = findKind(p, readHeader(text))!;
      expect(diffFacts(kind.parse(text), kind.parse(text)), p).toEqual([]);
    }
  });

  // One test per golden: the work is each golden's lines times its edits, so no one test's time
  // depends on how many goldens there are or how busy the machine is.
  const editedLines = (text: string) => text.split("\n").flatMap((l, i) => (i % 3 === 0 && l !== "" ? [i] : []));
  it("every third line of every golden is edited below: more than 500 edits in all", () => {
    const edits = goldens.reduce((n, p) => n + editedLines(readFileSync(join(REPO_ROOT, p), "utf8")).length, 0);
    expect(edits).toBeGreaterThan(500);
  });
  it.each(goldens)("any one line edited in %s shows at least one finding: no edit goes unseen", (p) => {
    const text = readFileSync(join(REPO_ROOT, p), "utf8");
    const lines = text.split("\n");
    for (const i of editedLines(text)) {
      const edited = [...lines.slice(0, i), `${lines[i]}x`, ...lines.slice(i + 1)].join("\n");
      expect(reviewGolden({ path: p, before: text, after: edited }).length, `${p}:${i + 1} edited`).toBeGreaterThan(0);
    }
  });
});

/**
 * A listing with the instruction at `drop` removed (or none), its indices and jump targets
 * renumbered as the generator would write them, shifted by `offset`.
 */
function renumber(text: string, drop: number | null, offset = 0): string {
  const row = /^(\d{4})( .*)$/;
  const width = (n: number) => String(n).padStart(4, "0");
  const lines = text.split("\n").filter((l) => !(drop !== null && row.exec(l)?.[1] === width(drop)));
  const move = (n: number) => (drop !== null && n > drop ? n - 1 : n) + offset;
  return lines
    .map((l) => {
      const m = row.exec(l);
      if (!m) return l;
      return `${width(move(Number(m[1])))}${m[2]!.replace(/\b(jt|jf) (\d{4})\b/g, (_, j: string, n: string) => `${j} ${width(move(Number(n)))}`)}`;
    })
    .join("\n");
}

describe("the seccomp listing, read by meaning", () => {
  const listings = listGoldens().filter((p) => /^goldens\/sandbox\/seccomp\/.+\.txt$/.test(p));

  it("reads every denied syscall of the repository's listings as a seccomp-deny row, and every jump to an instruction", () => {
    expect(listings.length).toBeGreaterThan(0);
    for (const p of listings) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      const facts = parseSeccomp(text);
      const denies = text.split("\n").filter((l) => / ; deny /.test(l)).length;
      expect(facts.filter((f) => f.type === "seccomp-deny" && f.at === "program").length, `${p}: deny rows`).toBe(
        denies,
      );
      const jumps = facts.flatMap((f) => [f.fields.jt, f.fields.jf]).filter((j): j is string => j !== undefined);
      expect(jumps.length, `${p}: jumps read`).toBeGreaterThan(denies);
      expect(
        jumps.filter((j) => j.startsWith("(no instruction")),
        `${p}: jumps to no instruction`,
      ).toEqual([]);
    }
  });

  it("a pure index shift (every index and jump target renumbered) is no change", () => {
    for (const p of listings) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      const shifted = renumber(text, null, 100);
      expect(shifted, p).not.toBe(text);
      expect(diffFacts(parseSeccomp(text), parseSeccomp(shifted)), p).toEqual([]);
    }
  });

  it("each deny row removed from a repository listing shows that row removed as weakens, and the rows it shifts show nothing", () => {
    let rows = 0;
    for (const p of listings) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      for (const f of parseSeccomp(text).filter((f) => f.type === "seccomp-deny")) {
        const index = Number(/^(\d{4}) /.exec(f.text)![1]);
        const found = reviewGolden({ path: p, before: text, after: renumber(text, index) });
        expect(
          found.map((x) => `${x.verdict} ${x.rule} ${x.case}`),
          `${p}: ${f.key} removed`,
        ).toEqual([`weakens seccomp-row-removed seccomp-deny ${f.key}`]);
        rows++;
      }
    }
    expect(rows).toBeGreaterThan(60);
  });
});

describe("the bwrap argv, read by mount", () => {
  it("a --perms or --size line is one mount at its destination, never an option swallowing the next", () => {
    const argvs = listGoldens().filter((p) => /^goldens\/sandbox\/argv\/.+\.txt$/.test(p));
    expect(argvs.length).toBeGreaterThan(0);
    for (const p of argvs) {
      const text = readFileSync(join(REPO_ROOT, p), "utf8");
      const facts = parseBwrapArgv(text);
      expect(
        facts
          .filter((f) => f.type === "bwrap-option" && /^--(perms|size|tmpfs|remount-ro)/.test(f.key))
          .map((f) => f.text),
        p,
      ).toEqual([]);
      const modified = text.split("\n").filter((l) => l.startsWith("--perms ")).length;
      expect(
        facts.filter((f) => f.type === "bwrap-mount" && f.fields.perms !== undefined).length,
        `${p}: mounts with --perms`,
      ).toBe(modified);
    }
  });
});
