import type { HarnessModule } from "./types.ts";
import { pi } from "./pi.ts";
import { claudeCode } from "./claude-code.ts";

/** The only way core reaches a harness module: by name, and only these two (seed 003). */
const MODULES: Readonly<Record<string, HarnessModule>> = { pi, "claude-code": claudeCode };

export function loadHarness(name: string): HarnessModule | undefined {
  return Object.hasOwn(MODULES, name) ? MODULES[name] : undefined; // safety: loader-prototype
}

export function harnessNames(): string[] {
  return Object.keys(MODULES);
}
