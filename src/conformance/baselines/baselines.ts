import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../golden/golden.ts";

/** One named fact the adapters rely on, read off the binary (baselines/README.md lists them). */
export interface Fact {
  value: string | string[];
  /** behaviour: read by running the binary; binary-strings: read from its code, no run shows it. */
  how: "behaviour" | "binary-strings";
  /** What was run or searched, so anyone can re-read it. */
  readWith: string;
}

/** What we pin about one real binary: its version, the options its own --help lists, its facts. */
export interface Baseline {
  binary: string;
  /** The commands the facts were read with, so anyone can re-read them. */
  readWith: string[];
  version: string;
  /**
   * binary: read off the installed binary by `npm run baselines:sync`. documentation: written from
   * the version's documented --help until a machine that has it runs baselines:sync.
   */
  source: "binary" | "documentation";
  /** Every option the binary's --help lists, sorted. */
  options: string[];
  /** Behaviour the adapters rely on, by name; re-read by baselines:sync, checked by the live tier. */
  facts?: Record<string, Fact>;
  note?: string;
}

type Source = {
  binary: string;
  command: string;
  versionArgs: string[];
  helpArgs: string[];
  parseVersion: (out: string) => string;
};

const bin = (name: string) => join(REPO_ROOT, "node_modules/.bin", name);

/** The binaries the confinement layer drives, and how each is read. */
export const BASELINE_SOURCES: readonly Source[] = [
  {
    binary: "bwrap",
    command: "bwrap",
    versionArgs: ["--version"],
    helpArgs: ["--help"],
    parseVersion: (o) => o.trim().replace(/^bubblewrap /, ""),
  },
  {
    binary: "claude-code",
    command: bin("claude"),
    versionArgs: ["--version"],
    helpArgs: ["--help"],
    parseVersion: (o) => o.trim().split(" ")[0]!,
  },
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
  return execFileSync(command, args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" },
    timeout: 30_000,
  });
}

/** Reads one binary's version and options off the binary itself (facts: baseline-facts.ts). */
export function readBaseline(src: Source): Baseline {
  const shown = src.command.replace(REPO_ROOT + "/", "");
  return {
    binary: src.binary,
    readWith: [`${shown} ${src.versionArgs.join(" ")}`, `${shown} ${src.helpArgs.join(" ")}`],
    version: src.parseVersion(run(src.command, src.versionArgs)),
    source: "binary",
    options: parseHelpOptions(run(src.command, src.helpArgs)),
  };
}

/**
 * bwrap is the system's, so its baselines are kept per version (baselines/bwrap/<version>.json):
 * this machine and CI's runner ship different ones. Claude Code and Pi are pinned by npm: one file each.
 */
export function baselinePath(binary: string, version?: string): string {
  if (binary === "bwrap") {
    if (version === undefined) throw new Error("bwrap baselines are per version: name the version");
    return join(REPO_ROOT, "baselines", "bwrap", `${version}.json`);
  }
  return join(REPO_ROOT, "baselines", `${binary}.json`);
}

/** The pinned baseline, or null when there is none for this bwrap version. */
export function loadBaseline(binary: string, version?: string): Baseline | null {
  const p = baselinePath(binary, version);
  return existsSync(p) ? (JSON.parse(readFileSync(p, "utf8")) as Baseline) : null;
}

/** Every pinned bwrap baseline, by version order of the file names. */
export function loadBwrapBaselines(): Baseline[] {
  const dir = join(REPO_ROOT, "baselines", "bwrap");
  return readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as Baseline);
}

/** One pinned fact's value; throws naming the fact when it is not pinned. */
export function loadFact(binary: "claude-code" | "pi", name: string): Fact["value"] {
  const f = loadBaseline(binary)?.facts?.[name];
  if (f === undefined) throw new Error(`baselines/${binary}.json pins no fact ${name}: run npm run baselines:sync`);
  return f.value;
}

/** How a read baseline differs from a pinned one, one line per difference; empty when they agree. */
export function diffBaselines(pinned: Baseline, read: Baseline): string[] {
  const out: string[] = [];
  if (pinned.version !== read.version) out.push(`version: pinned ${pinned.version}, installed ${read.version}`);
  const have = new Set(read.options);
  const want = new Set(pinned.options);
  const missing = pinned.options.filter((o) => !have.has(o));
  const extra = read.options.filter((o) => !want.has(o));
  if (missing.length > 0) out.push(`options pinned but not in the installed --help: ${missing.join(" ")}`);
  if (extra.length > 0) out.push(`options in the installed --help but not pinned: ${extra.join(" ")}`);
  return out;
}
