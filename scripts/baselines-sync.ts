// npm run baselines:sync: re-reads each real binary's version and options into baselines/<binary>.json.
// Review the diff: a removed option the adapters pass, or a new one that changes confinement, is a finding.
import { writeFileSync } from "node:fs";
import { BASELINE_SOURCES, baselinePath, readBaseline } from "../src/conformance/baselines.ts";

for (const src of BASELINE_SOURCES) {
  const b = readBaseline(src);
  writeFileSync(baselinePath(src.binary), JSON.stringify(b, null, 2) + "\n");
  console.log(`${src.binary} ${b.version}: ${b.options.length} options → baselines/${src.binary}.json`);
}
