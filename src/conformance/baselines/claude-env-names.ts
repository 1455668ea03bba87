import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../golden/golden.ts";

/**
 * The ANTHROPIC_* and CLAUDE_* names the Claude Code binary holds (the variables it reads, and a
 * few that only look like them), pinned in baselines/claude-code-env.json. The session-env test
 * offers every one to sessionEnv(): none may pass unless ENV_ALLOW names it exactly.
 */
export type EnvNamesBaseline = { binary: string; version: string; readWith: string; names: string[] };

export const ENV_NAMES_BASELINE = join(REPO_ROOT, "baselines/claude-code-env.json");
export const CLAUDE_EXE = join(REPO_ROOT, "node_modules/@anthropic-ai/claude-code/bin/claude.exe");
export const ENV_NAME_PATTERN = /\b(?:ANTHROPIC|CLAUDE)_[A-Z0-9_]*[A-Z0-9]\b/g;

const CHUNK = 16 << 20;
const OVERLAP = 4096;

/**
 * Every match of ENV_NAME_PATTERN in a file, read in chunks (the binary is about 400 MB, near
 * V8's longest string). A match touching a chunk's cut is left to the chunk that holds it whole.
 */
export function readEnvNames(file: string): string[] {
  const names = new Set<string>();
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(CHUNK + OVERLAP);
    for (let pos = 0; ; pos += CHUNK) {
      const start = pos === 0 ? 0 : pos - OVERLAP;
      const n = readSync(fd, buf, 0, buf.length, start);
      if (n === 0) break;
      const text = buf.toString("latin1", 0, n);
      const last = n < buf.length;
      for (const m of text.matchAll(ENV_NAME_PATTERN)) {
        if (start > 0 && m.index === 0) continue;
        if (!last && m.index + m[0].length === n) continue;
        names.add(m[0]);
      }
      if (last) break;
    }
  } finally {
    closeSync(fd);
  }
  return [...names].sort();
}

export function loadEnvNamesBaseline(): EnvNamesBaseline {
  return JSON.parse(readFileSync(ENV_NAMES_BASELINE, "utf8")) as EnvNamesBaseline;
}
