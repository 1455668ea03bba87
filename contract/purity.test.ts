import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf } from "../src/conformance/imports.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CORE = join(ROOT, "src/core");

/** Modules that reach the machine; src/core decides over data and must not import them. */
const FORBIDDEN = /^(node:)?(fs|fs\/promises|child_process|net|os|dgram|cluster|worker_threads|http|https|dns|process)$/;
/** Modules src/core may import: pure computation only (node:crypto here only hashes). */
const CORE_PACKAGES = new Set(["zod", "node:crypto"]);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Walks the import graph from every src/core module and returns each violation found. */
function coreViolations(entries: string[]): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, "utf8");
    const rel = relative(ROOT, file);
    if (/\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*["']env["']\s*\]/.test(src)) problems.push(`${rel} reads process.env`);
    for (const spec of importsOf(src)) {
      if (spec.startsWith(".")) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(CORE + "/")) problems.push(`${rel} imports ${spec}, outside src/core`);
        else visit(target);
      } else if (FORBIDDEN.test(spec)) problems.push(`${rel} imports ${spec}`);
      else if (!CORE_PACKAGES.has(spec)) problems.push(`${rel} imports package ${spec}, not on the pure list`);
    }
  };
  entries.forEach(visit);
  return problems;
}

describe("src/core is pure", () => {
  it("no module of src/core imports fs, processes, sockets, os, or reads process.env", () => {
    const files = tsFiles(CORE);
    expect(files.length).toBeGreaterThan(5);
    expect(coreViolations(files)).toEqual([]);
  });

  it("the import scanner sees every import form (positive control)", () => {
    const src = [
      `import { readFileSync } from "node:fs";`,
      `import type { X } from "./x.ts";`,
      `export { y } from "./y.ts";`,
      `const m = await import("child_process");`,
      `import "node:net";`,
      `import {\n  a,\n  b,\n} from "os";`,
    ].join("\n");
    expect(importsOf(src)).toEqual(["node:fs", "./x.ts", "./y.ts", "child_process", "node:net", "os"]);
  });

  it("a module that reads the machine is caught (positive control)", () => {
    const bad = join(ROOT, "src/host/host-facts.ts");
    const problems = coreViolations([bad]);
    expect(problems).toContain("src/host/host-facts.ts imports node:child_process");
    expect(problems.some((p) => p.includes("process.env"))).toBe(true);
  });
});
