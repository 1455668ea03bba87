// Which tests a mutant's run asks for: its named killers, and the tiers they live in.
import { parseTestRef, type Mutant } from "./catalog.ts";
import type { SpecRequest } from "./host-protocol.ts";
import type { Host } from "./host-pool.ts";

/** The expected killers as spec requests, one per test file. */
export function specifyKillers(m: Mutant): SpecRequest[] {
  const byFile = new Map<string, string[]>();
  for (const k of m.killedBy) {
    const ref = parseTestRef(k);
    byFile.set(ref.file, [...(byFile.get(ref.file) ?? []), ref.name]);
  }
  return [...byFile].map(([file, names]) => ({ file, names }));
}

export function findProject(host: Host, file: string): string | undefined {
  return host.projects.find((p) => p.files.includes(file))?.name;
}

/** Every test file of every tier one of m's killers lives in. */
export function listTierFiles(host: Host, m: Mutant): string[] {
  const tiers = new Set(
    specifyKillers(m)
      .map((s) => findProject(host, s.file))
      .filter((p): p is string => p !== undefined),
  );
  return host.projects.filter((p) => tiers.has(p.name)).flatMap((p) => p.files);
}

/** Killers that are no test file of any project: a run cannot ask for them. */
export function listUnknownKillerFiles(host: Host, mutants: readonly Mutant[]): string[] {
  return mutants.flatMap((m) =>
    specifyKillers(m)
      .filter((s) => !findProject(host, s.file))
      .map((s) => `${m.id}: killedBy file ${s.file} is not a test file of any vitest project`),
  );
}
