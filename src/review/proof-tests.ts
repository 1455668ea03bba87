// A test file's two revisions as findings: a test gone or renamed, a modifier that can pass a
// test that proves nothing (`fails`, `skipIf`, `runIf`), a test or describe newly under a
// condition or a loop, a new early return, a table with fewer rows, a new environment read, a
// knob moved. Pure: the texts in, the findings out.
import type { Finding, ReviewVerdict } from "./model.ts";
import { readTestInventory, type Knob, type TestInventory, type TestSite } from "./test-inventory.ts";

/** Where tests live, and their tier; the vitest projects (vitest.config.ts) as paths. */
export const TEST_TIERS: readonly { tier: string; match: RegExp }[] = [
  { tier: "selftest", match: /^contract\/mutation-runner\.test\.ts$/ },
  { tier: "contract", match: /^contract\/.+\.test\.ts$/ },
  { tier: "live", match: /^live\/.+\.test\.ts$/ },
  { tier: "matrix", match: /^matrix\/.+\.test\.ts$/ },
];

/** Files read for tests, environment reads and knobs: the tiers' tests and their support code. */
export const isTestSource = (path: string): boolean =>
  /^(contract|live|matrix)\/.+\.[cm]?ts$/.test(path) && !path.startsWith("contract/fixtures/");

export const tierOf = (path: string): string | null => TEST_TIERS.find((t) => t.match.test(path))?.tier ?? null;

/** Modifiers under which a test can pass while proving nothing, or not run at all. */
const NEUTERING = /^(fails|skip|todo|only|skipIf\(|runIf\()/;
/** Knobs whose rise, not fall, lets more through: another try hides a failure. */
const RISE_WEAKENS = /^(retry|repeats) /;

const EMPTY: TestInventory = { sites: [], envReads: {}, knobs: [], problems: [] };

type Make = (verdict: ReviewVerdict, rule: string, kase: string, before: string, after: string, why: string) => Finding;

const NONE = "(none)";
const list = (xs: readonly string[]) => (xs.length === 0 ? NONE : xs.join("; "));
const neutering = (s: TestSite) => s.modifiers.filter((m) => NEUTERING.test(m));

/** Findings for one site present on both sides, or only after (before undefined). */
function diffSite(make: Make, before: TestSite | undefined, after: TestSite): Finding[] {
  const out: Finding[] = [];
  const label = `${after.kind} ${after.name}`;
  const was = before ? neutering(before) : [];
  const now = neutering(after);
  if (now.some((m) => !was.includes(m)))
    // safety: proof-test-modifier
    out.push(
      make(
        "weakens",
        "test-modifier-added",
        label,
        list(was),
        list(now),
        "a modifier that passes a failing test, skips it, or runs only some: the test may prove nothing",
      ),
    );
  const under = before?.under ?? [];
  if (after.under.some((u) => !under.includes(u)))
    // safety: proof-test-under-condition
    out.push(
      make(
        "weakens",
        "test-registered-under-condition",
        label,
        list(under),
        list(after.under),
        "registered under a new condition or loop: it may not be registered at all, and then no report lists it",
      ),
    );
  if (after.earlyReturns > (before?.earlyReturns ?? 0))
    // safety: proof-test-early-return
    out.push(
      make(
        "weakens",
        "test-early-return",
        label,
        String(before?.earlyReturns ?? 0),
        String(after.earlyReturns),
        "the test's body returns early: the checks after the return may never run",
      ),
    );
  if (before && before.rows !== null && (after.rows === null || after.rows < before.rows))
    // safety: proof-test-rows
    out.push(
      make(
        "weakens",
        "test-rows-removed",
        label,
        String(before.rows),
        after.rows === null ? "(not in this file)" : String(after.rows),
        "the table the test runs over has fewer rows: some cases no longer run",
      ),
    );
  if (!before && out.length === 0 && after.kind === "test")
    out.push(make("strengthens", "test-added", label, NONE, `line ${after.line}`, "a new test"));
  return out;
}

function diffSites(make: Make, before: TestInventory, after: TestInventory): Finding[] {
  const key = (s: TestSite) => `${s.kind} ${s.name}`;
  const old = new Map(before.sites.map((s) => [key(s), s]));
  const now = new Set(after.sites.map(key));
  const removed = before.sites
    .filter((s) => s.kind === "test" && !now.has(key(s))) // safety: proof-test-removed
    .map((s) =>
      make(
        "weakens",
        "test-removed",
        `test ${s.name}`,
        `line ${s.line}`,
        NONE,
        "a test is gone or renamed: what it checked is no longer checked under its name",
      ),
    );
  return [...removed, ...after.sites.flatMap((s) => diffSite(make, old.get(key(s)), s))];
}

function diffEnv(make: Make, before: TestInventory, after: TestInventory): Finding[] {
  return Object.keys(after.envReads)
    .filter((k) => !(k in before.envReads)) // safety: proof-test-env-read
    .map((k) =>
      make(
        "weakens",
        "test-env-read-added",
        `env ${k}`,
        NONE,
        `read ${after.envReads[k]}×`,
        "the file reads an environment variable it did not: what a test checks may now depend on where it runs",
      ),
    );
}

function diffKnobs(make: Make, before: readonly Knob[], after: readonly Knob[]): Finding[] {
  const now = new Map(after.map((k) => [k.key, k]));
  const out: Finding[] = [];
  for (const b of before) {
    const a = now.get(b.key);
    if (a === undefined) {
      out.push(
        make(
          "weakens",
          "test-knob-removed",
          `knob ${b.key}`,
          String(b.value),
          NONE,
          "a number that set how much a test checks is gone or no longer a constant: read what replaced it",
        ),
      );
      continue;
    }
    if (a.value === b.value) continue;
    const looser = RISE_WEAKENS.test(b.key) ? a.value > b.value : a.value < b.value; // safety: proof-test-knob
    out.push(
      looser
        ? make(
            "weakens",
            "test-knob-lowered",
            `knob ${b.key}`,
            String(b.value),
            String(a.value),
            "fewer sessions, runs or rows, or a shorter wait, or more retries: the test checks less",
          )
        : make(
            "weakens",
            "test-knob-raised",
            `knob ${b.key}`,
            String(b.value),
            String(a.value),
            "a bound raised may loosen what a test accepts, a timeout raised may hide a hang: read it",
          ),
    );
  }
  return out;
}

/** The findings of one test or support file between two revisions; null where it does not exist. */
export function diffTestFile(path: string, before: string | null, after: string | null): Finding[] {
  const make: Make = (verdict, rule, kase, b, a, why) => ({
    verdict,
    file: path,
    case: kase,
    before: b,
    after: a,
    rule,
    why,
  });
  const inv = (t: string | null) => (t === null ? EMPTY : readTestInventory(path, t));
  const b = inv(before);
  const a = inv(after);
  if (a.problems.length > 0)
    return [
      {
        verdict: "unknown",
        file: path,
        case: "syntax",
        before: NONE,
        after: a.problems.join("; "),
        rule: null,
        why: "the file does not parse: its tests cannot be read",
      },
    ];
  // A file gone takes its knobs with it: its tests, each named removed, say what went.
  const knobs = after === null ? [] : diffKnobs(make, b.knobs, a.knobs);
  return [...diffSites(make, b, a), ...diffEnv(make, b, a), ...knobs];
}
