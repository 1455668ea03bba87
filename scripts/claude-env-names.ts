// node scripts/claude-env-names.ts: re-reads the ANTHROPIC_*/CLAUDE_* names in the installed Claude
// Code binary into baselines/claude-code-env.json. Review the diff: a new name is one more variable
// the session-env test proves sessionEnv() drops.
import { writeFileSync } from "node:fs";
import {
  CLAUDE_EXE,
  ENV_NAMES_BASELINE,
  readEnvNames,
  type EnvNamesBaseline,
} from "../src/conformance/baselines/claude-env-names.ts";
import { loadBaseline } from "../src/conformance/baselines/baselines.ts";

const b: EnvNamesBaseline = {
  binary: "claude-code",
  version: loadBaseline("claude-code")!.version,
  readWith:
    "node scripts/claude-env-names.ts: every match of /\\b(?:ANTHROPIC|CLAUDE)_[A-Z0-9_]*[A-Z0-9]\\b/ in node_modules/@anthropic-ai/claude-code/bin/claude.exe",
  names: readEnvNames(CLAUDE_EXE),
};
writeFileSync(ENV_NAMES_BASELINE, JSON.stringify(b, null, 2) + "\n");
console.log(`claude-code ${b.version}: ${b.names.length} names → baselines/claude-code-env.json`);
