// node scripts/record-model-requests.ts: re-reads what the installed Claude Code and Pi send the
// model API (src/conformance/baselines/model-requests.ts) into baselines/model-requests.json. Review the
// diff: a new beta, body field, tool type, block or source type is refused by the proxy until its
// table in src/core/network/ names it (live/model-proxy.test.ts fails on the same drift).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { MODEL_REQUESTS_BASELINE, recordModelRequests } from "../src/conformance/baselines/model-requests.ts";
import { makeRuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

const problem = sandboxProblem(readHostFacts({ repo: REPO_ROOT }));
if (problem !== null) {
  console.error(`record-model-requests: the sessions need a working bwrap sandbox: ${problem}`);
  process.exit(1);
}
const version = (pkg: string) =>
  (JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string })
    .version;
const w = await makeRuntimeWorld("record-model-requests");
try {
  const b = await recordModelRequests(w, {
    claudeCode: version("@anthropic-ai/claude-code"),
    pi: version("@earendil-works/pi-coding-agent"),
  });
  const failed = b.arms.filter((a) => !a.ok).map((a) => a.arm);
  if (failed.length > 0) {
    console.error(
      `record-model-requests: these arms did not finish their turn (a refusal by the proxy shows here): ${failed.join(", ")}`,
    );
    process.exitCode = 1;
  }
  writeFileSync(MODEL_REQUESTS_BASELINE, JSON.stringify(b, null, 2) + "\n");
  for (const [kind, values] of Object.entries(b.observed)) console.log(`${kind}: ${Object.keys(values).join(" ")}`);
  console.log(`→ ${MODEL_REQUESTS_BASELINE.replace(REPO_ROOT + "/", "")}`);
} finally {
  await w.close();
}
