// The proof review: every change of a pull request that can weaken what CI proves without a
// golden showing it, ranked like the golden review's findings. The catalog, the safety tags, the
// equivalence arguments, StrykerJS's disable comments, each test file's inventory and the files
// a verdict rests on. Pure: the changed files' two texts in, the findings out.
import { VERDICT_ORDER, type Finding } from "./model.ts";
import {
  EQUIVALENTS,
  diffCatalog,
  diffEquivalents,
  diffStrykerDisables,
  diffTags,
  isCatalogFile,
  isTaggedSource,
  type FilePair,
} from "./proof-catalog.ts";
import { diffVerdictInputs, verdictInputOf } from "./proof-inputs.ts";
import { diffTestFile, isTestSource } from "./proof-tests.ts";

export type ProofReport = {
  findings: Finding[];
  /** The changed files the proof review read. */
  files: string[];
  counts: Record<Finding["verdict"], number>;
};

/** Whether the proof review reads a changed file: the shell reads these texts and no others. */
export const readsForProof = (path: string): boolean =>
  !path.startsWith("goldens/") &&
  (isCatalogFile(path) ||
    path === EQUIVALENTS ||
    isTaggedSource(path) ||
    isTestSource(path) ||
    verdictInputOf(path) !== undefined ||
    /\.[cm]?[jt]sx?$/.test(path));

const rank = (f: Finding) => VERDICT_ORDER.indexOf(f.verdict);

export function reviewProof(changed: readonly FilePair[]): ProofReport {
  const pairs = changed.filter((p) => readsForProof(p.path) && p.before !== p.after);
  const findings = [
    ...diffCatalog(pairs),
    ...diffTags(pairs),
    ...diffStrykerDisables(pairs),
    ...diffEquivalents(pairs.find((p) => p.path === EQUIVALENTS)),
    ...pairs.filter((p) => isTestSource(p.path)).flatMap((p) => diffTestFile(p.path, p.before, p.after)),
    ...diffVerdictInputs(pairs),
  ]
    .map((f, i) => ({ f, i }))
    .sort((x, y) => rank(x.f) - rank(y.f) || (x.f.file < y.f.file ? -1 : x.f.file > y.f.file ? 1 : x.i - y.i))
    .map((x) => x.f);
  const counts = { weakens: 0, unknown: 0, strengthens: 0, neutral: 0 };
  for (const f of findings) counts[f.verdict]++;
  return { findings, files: pairs.map((p) => p.path).sort(), counts };
}
