// npm run baselines:sync: re-reads each real binary's version, options and facts into baselines/
// (bwrap: baselines/bwrap/<installed version>.json). The facts run sessions the launcher starts in bwrap.
// Review the diff: a removed option the adapters pass, a changed fact, or a new option that
// changes confinement is a finding.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readClaudeFacts, readPiFacts, type FactSet } from "../src/conformance/baselines/baseline-facts.ts";
import { BASELINE_SOURCES, baselinePath, readBaseline, type Baseline } from "../src/conformance/baselines/baselines.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { withLiveWorld } from "../src/conformance/worlds/live-session.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

const hostFacts = readHostFacts({ repo: REPO_ROOT });
const problem = sandboxProblem(hostFacts);
if (problem !== null) {
  console.error(`baselines:sync: the facts need a working bwrap sandbox: ${problem}`);
  process.exit(1);
}
const facts: Record<string, FactSet> = await withLiveWorld("baselines-sync", async (w) => ({
  "claude-code": await readClaudeFacts(w),
  pi: await readPiFacts(w),
}));

for (const src of BASELINE_SOURCES) {
  const b = readBaseline(src);
  const path = baselinePath(src.binary, src.binary === "bwrap" ? b.version : undefined);
  const before = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Baseline) : undefined;
  const out: Baseline = {
    ...b,
    ...(facts[src.binary] ? { facts: facts[src.binary] } : {}),
    ...(before?.source === "binary" && before.note ? { note: before.note } : {}),
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(out, null, 2) + "\n");
  console.log(
    `${src.binary} ${b.version}: ${b.options.length} options${out.facts ? `, ${Object.keys(out.facts).length} facts` : ""} → ${path.replace(REPO_ROOT + "/", "")}`,
  );
}
