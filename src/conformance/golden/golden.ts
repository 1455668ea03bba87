import { appendFileSync, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
export const GOLDEN_ROOT = join(REPO_ROOT, "goldens");
export const GOLDEN_LOG_ENV = "MOSAIC_GOLDEN_LOG";
export const UPDATE_COMMAND = "npm run goldens:update";

export type GoldenExt = "txt" | "jsonc" | "md" | "sh";

/** Absolute path of one golden: goldens/<area>/<name>.<ext>. */
export function goldenPath(area: string, name: string, ext: GoldenExt): string {
  if (!/^[a-z0-9][a-z0-9-]*(\/[a-z0-9][a-z0-9-]*)*$/.test(area))
    throw new Error(`golden area ${JSON.stringify(area)}: lower-case words and dashes only`);
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name))
    throw new Error(`golden name ${JSON.stringify(name)}: lower-case words, dots and dashes only`);
  return join(GOLDEN_ROOT, area, `${name}.${ext}`);
}

const FROM = " · from ";
const REGENERATE = ` · regenerate: ${UPDATE_COMMAND}`;

/**
 * The header line every golden starts with: what it shows, the test that wrote it (`<file> >
 * <test>`, so a reviewer can open it from the diff) and how to regenerate it.
 */
export function goldenHeader(what: string, ext: GoldenExt, from?: string): string {
  if (what.includes(FROM) || from?.includes(" · "))
    throw new Error(`golden header ${JSON.stringify(what)}: " · " separates the header's parts; reword it`);
  const text = `${what}${from ? `${FROM}${from}` : ""}${REGENERATE}`;
  return ext === "jsonc" ? `// ${text}` : ext === "md" ? `<!-- ${text} -->` : `# ${text}`;
}

export function withHeader(what: string, ext: GoldenExt, body: string, from?: string): string {
  return `${goldenHeader(what, ext, from)}\n${body.endsWith("\n") ? body : body + "\n"}`;
}

/** The test a golden's header names as its writer (`<file> > <test>`), or null for a header without one. */
export function readProvenance(text: string): { file: string; test: string } | null {
  const first = text.split("\n", 1)[0] ?? "";
  const at = first.lastIndexOf(FROM);
  const end = first.lastIndexOf(REGENERATE);
  if (at === -1 || end < at) return null;
  const from = first.slice(at + FROM.length, end);
  const cut = from.indexOf(" > ");
  return cut === -1 ? null : { file: from.slice(0, cut), test: from.slice(cut + 3) };
}

/**
 * Replaces machine-specific values by placeholders (<run>, <ws>, <home>, <repo>, <node>, ...).
 * Longer values go first, so a run directory under the repository becomes <run>, not <repo>/...
 */
export function normalise(text: string, placeholders: Record<string, string | undefined>): string {
  const pairs = Object.entries(placeholders)
    .filter((e): e is [string, string] => typeof e[1] === "string" && e[1].length > 1)
    .sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [token, value] of pairs) out = out.split(value).join(token);
  return out;
}

/** Notes that a test wrote (or compared) a golden, for the orphan check after the run. */
export function recordGolden(path: string, env: NodeJS.ProcessEnv = process.env): void {
  const log = env[GOLDEN_LOG_ENV];
  if (log) appendFileSync(log, relative(REPO_ROOT, path) + "\n");
}

/** Every file under goldens/, relative to the repository, sorted. */
export function listGoldens(root = GOLDEN_ROOT): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(REPO_ROOT, p));
    }
  };
  walk(root);
  return out.sort();
}

/** Goldens on disk that no test wrote in a full run. */
export function findOrphans(onDisk: readonly string[], written: ReadonlySet<string>): string[] {
  return onDisk.filter((p) => !written.has(p));
}

/**
 * goldens-check's verdict over what a whole contract run wrote: a golden whose writer cannot be
 * opened fails; a golden no test wrote (an orphan) fails under CI, and locally is listed with the
 * command that removes it. Every line it prints comes back with the exit code.
 */
export function goldensCheckOutcome(
  onDisk: readonly string[],
  written: ReadonlySet<string>,
  unnamed: readonly string[],
  ci: boolean,
): { code: 0 | 1; out: string[]; err: string[] } {
  if (unnamed.length > 0)
    return {
      code: 1,
      out: [],
      err: [
        `goldens-check: ${unnamed.length} golden(s) whose writer cannot be opened:`,
        ...unnamed.map((u) => `  ${u}`),
        "Regenerate them: npm run goldens:update",
      ],
    };
  const orphans = findOrphans(onDisk, written);
  if (orphans.length === 0)
    return { code: 0, out: [`goldens-check: ${written.size} goldens written, no orphan`], err: [] };
  return {
    code: ci ? 1 : 0, // safety: goldens-orphan-tolerated
    out: [],
    err: [
      `goldens-check: ${orphans.length} golden file(s) that no test wrote:`,
      ...orphans.map((o) => `  ${o}`),
      `Remove them after review: git rm ${orphans.join(" ")}`,
    ],
  };
}

/**
 * goldens-check after a whole contract run: `log` is the run's golden log (each golden a test wrote,
 * relative to the repository), `goldens` the folder to list. Without the log it fails, as the run
 * that writes it did not happen; else goldensCheckOutcome's verdict over what is on disk.
 */
export function checkGoldens(log: string, goldens: string, ci: boolean): { code: 0 | 1; out: string[]; err: string[] } {
  if (!existsSync(log))
    return {
      code: 1,
      out: [],
      err: [`goldens-check: ${log} is missing; run the whole contract tier first (npm run test:contract)`],
    };
  const written = new Set(readFileSync(log, "utf8").split("\n").filter(Boolean));
  const onDisk = listGoldens(goldens);
  const texts = new Map(onDisk.map((g) => [g, readFileSync(join(REPO_ROOT, g), "utf8")]));
  const unnamed = findUnnamedWriters(texts, (f) => existsSync(join(REPO_ROOT, f)));
  return goldensCheckOutcome(onDisk, written, unnamed, ci);
}

/**
 * Goldens whose header names no writer, or a test file that is not there: a reviewer could not
 * open the test behind the diff. `texts` maps each golden (from the repository) to its text.
 */
export function findUnnamedWriters(texts: ReadonlyMap<string, string>, exists: (file: string) => boolean): string[] {
  return [...texts].flatMap(([path, text]) => {
    const from = readProvenance(text);
    if (from === null) return [`${path}: its header names no test that wrote it`];
    return exists(from.file) ? [] : [`${path}: its header names ${from.file}, which is not in the repository`];
  });
}
