import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { importsOf } from "../core/imports.ts";

/**
 * Every repository file an entry point loads, following relative static and dynamic imports.
 * Node built-ins are skipped; a package import is returned apart, because a sandbox without
 * node_modules (Claude Code's) could not load it.
 */
export function importGraph(entries: readonly string[]): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    // Type-only imports are erased before Node runs the file, so they load nothing.
    const runtime = readFileSync(file, "utf8").replace(/^\s*(?:import|export)\s+type\s[^;]*;/gm, "");
    for (const spec of importsOf(runtime)) {
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith("node:")) packages.add(spec);
    }
  };
  entries.forEach(visit);
  return { files: [...files].sort(), packages: [...packages].sort() };
}
