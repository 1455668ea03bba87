// The files a verdict rests on that no finding reads by meaning: the review and the mutation
// runner themselves, the test configs and setup files, the tiers' skip logic, the sweep's
// committed report, the package scripts and lockfile, CI. A change to one is shown as unknown,
// named by the hashes of both texts, so an approval answers exactly that change.
import { createHash } from "node:crypto";
import type { Finding } from "./model.ts";
import type { FilePair } from "./proof-catalog.ts";

/** Each input, and why a change to it can change a verdict without changing a test. */
export const VERDICT_INPUTS: readonly { match: RegExp; why: string }[] = [
  { match: /^src\/review\//, why: "the review that ranks goldens and proof changes" },
  { match: /^src\/mutation\//, why: "the mutation runner, its catalog checks and the sweep's triage" },
  {
    match: /^src\/conformance\/(tiers|golden)\//,
    why: "when a live test runs, skips or fails, and how goldens are written and checked",
  },
  {
    match: /^mutants\/sweep\//,
    why: "the sweep's committed report: a verdict in it is reused while the code it covers is unchanged",
  },
  {
    match: /^(vitest(\.[a-z]+)?\.config\.ts|stryker\.config\.mjs)$/,
    why: "which tests run, with which setup, and how mutants are made",
  },
  {
    match: /^(contract\/support\/(golden-log|sweep-sandbox)\.ts|live\/support\/keep-failed-scratch\.ts)$/,
    why: "a setup file every test of a tier runs under",
  },
  {
    match: /^(contract|live|matrix|selftest)\/(support|fixtures)\//, // safety: proof-input-helpers
    why: "the helpers and fixtures tests run (the attack scripts and stand-ins among them): weakened here, every test that uses them weakens with no test's own text changed",
  },
  {
    match: /^(tsconfig\.json|\.npmrc)$/, // safety: proof-input-project
    why: "how the tree is type-checked and what npm installs for every tier",
  },
  {
    match: /^scripts\/(goldens-|skips-check|tree-proof|mutants|sweep-triage|review-)/,
    why: "a command CI runs to reach a verdict",
  },
  { match: /^package(-lock)?\.json$/, why: "the npm scripts CI runs and the pinned tools they run" },
  { match: /^\.ci\//, why: "the CI entry point" },
  { match: /^\.github\//, why: "the workflows, who must approve (CODEOWNERS), and what a job may write" },
];

const digest = (t: string | null) =>
  t === null ? "(none)" : `sha256 ${createHash("sha256").update(t).digest("hex").slice(0, 16)}`;

export const verdictInputOf = (path: string) => VERDICT_INPUTS.find((v) => v.match.test(path));

/** What a verdict rests on: the inputs above, the goldens, the mutant catalog and every tier's tests. */
const READ_BY_MEANING = /^(goldens|mutants|contract|live|matrix|selftest)\//;

/** True for every file whose change can change a verdict: CODEOWNERS must name who approves it. */
export const isProofInput = (path: string) => READ_BY_MEANING.test(path) || verdictInputOf(path) !== undefined;

/** One unknown finding per changed verdict input. */
export function diffVerdictInputs(pairs: readonly FilePair[]): Finding[] {
  return pairs.flatMap((p) => {
    const input = verdictInputOf(p.path);
    if (input === undefined || p.before === p.after) return []; // safety: proof-verdict-input
    return [
      {
        verdict: "unknown" as const,
        file: p.path,
        case: "file",
        before: digest(p.before),
        after: digest(p.after),
        rule: null,
        why: `a verdict input changed: ${input.why}; read its diff`,
      },
    ];
  });
}
