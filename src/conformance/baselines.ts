import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./golden.ts";

/** What we pin about one real binary: its version and the options its own --help lists. */
export interface Baseline {
  binary: string;
  /** The commands the facts were read with, so anyone can re-read them. */
  readWith: string[];
  version: string;
  /** Every option the binary's --help lists, sorted. */
  options: string[];
}

type Source = { binary: string; command: string; versionArgs: string[]; helpArgs: string[]; parseVersion: (out: string) => string };

const bin = (name: string) => join(REPO_ROOT, "node_modules/.bin", name);

/** The binaries the confinement layer drives, and how each is read. */
export const BASELINE_SOURCES: readonly Source[] = [
  { binary: "bwrap", command: "bwrap", versionArgs: ["--version"], helpArgs: ["--help"], parseVersion: (o) => o.trim().replace(/^bubblewrap /, "") },
  { binary: "claude-code", command: bin("claude"), versionArgs: ["--version"], helpArgs: ["--help"], parseVersion: (o) => o.trim().split(" ")[0]! },
  { binary: "pi", command: bin("pi"), versionArgs: ["--version"], helpArgs: ["--help"], parseVersion: (o) => o.trim() },
];

/** Option names from a --help text: each line's leading `-x, --long` or `--long` tokens. */
export function parseHelpOptions(help: string): string[] {
  const found = new Set<string>();
  for (const line of help.split("\n")) {
    const m = /^\s{1,8}((?:-{1,2}[a-zA-Z][\w-]*(?:,\s*|\s+))+)/.exec(line + " ");
    if (!m) continue;
    for (const tok of m[1]!.split(/[,\s]+/)) if (/^-{1,2}[a-zA-Z][\w-]*$/.test(tok)) found.add(tok);
  }
  return [...found].sort();
}

function run(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" }, timeout: 30_000 });
}

/** Reads one binary's baseline off the binary itself. */
export function readBaseline(src: Source): Baseline {
  const shown = src.command.replace(REPO_ROOT + "/", "");
  return {
    binary: src.binary,
    readWith: [`${shown} ${src.versionArgs.join(" ")}`, `${shown} ${src.helpArgs.join(" ")}`],
    version: src.parseVersion(run(src.command, src.versionArgs)),
    options: parseHelpOptions(run(src.command, src.helpArgs)),
  };
}

export function baselinePath(binary: string): string {
  return join(REPO_ROOT, "baselines", `${binary}.json`);
}

export function loadBaseline(binary: string): Baseline {
  return JSON.parse(readFileSync(baselinePath(binary), "utf8")) as Baseline;
}
