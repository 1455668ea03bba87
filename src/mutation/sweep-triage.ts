// The generated sweep's triage (npm run mutants:sweep): every mutant StrykerJS reports as
// survived or without coverage must be killed by a test, have a row in mutants/equivalent.md that
// argues it cannot change behaviour, or sit on a line whose safety tag has a catalog mutant (the
// catalog runner, which drives the live tier, proves that line). Anything else fails the sweep.

/** One generated mutant as the triage reads it off StrykerJS's mutation.json. */
export type SweepMutant = {
  file: string;
  line: number;
  mutator: string;
  original: string;
  replacement: string;
  status: string;
};

/** One row of mutants/equivalent.md: the file, the mutator, the code it changes and what it puts there. */
export type EquivalentRow = { file: string; mutator: string; original: string; replacement: string; why: string };

type Report = {
  files?: Record<
    string,
    {
      source?: string;
      mutants?: Array<{
        mutatorName?: string;
        replacement?: string;
        status?: string;
        location?: { start: { line: number; column: number }; end: { line: number; column: number } };
      }>;
    }
  >;
};

const UNTRIAGED = new Set(["Survived", "NoCoverage"]);

/** Source text between a mutant's start and end (1-based lines and columns, end exclusive). */
function sliceOf(
  source: string,
  start: { line: number; column: number },
  end: { line: number; column: number },
): string {
  const lines = source.split("\n").slice(start.line - 1, end.line);
  if (lines.length === 0) return "";
  if (lines.length === 1) return lines[0]!.slice(start.column - 1, end.column - 1);
  return [lines[0]!.slice(start.column - 1), ...lines.slice(1, -1), lines.at(-1)!.slice(0, end.column - 1)].join("\n");
}

/** The survivors and uncovered mutants of a mutation.json, or what is wrong with it. */
export function readSweepSurvivors(text: string): SweepMutant[] | { problem: string } {
  let d: Report;
  try {
    d = JSON.parse(text) as Report;
  } catch {
    return { problem: "mutation.json is not JSON" };
  }
  if (typeof d.files !== "object" || d.files === null) return { problem: "mutation.json has no files" };
  const out: SweepMutant[] = [];
  for (const [file, f] of Object.entries(d.files)) {
    for (const m of f.mutants ?? []) {
      if (!UNTRIAGED.has(m.status ?? "")) continue;
      if (m.location === undefined || typeof f.source !== "string")
        return { problem: `${file}: a ${m.status} mutant without its location or the file's source` };
      out.push({
        file,
        line: m.location.start.line,
        mutator: m.mutatorName ?? "",
        original: sliceOf(f.source, m.location.start, m.location.end),
        replacement: m.replacement ?? "",
        status: m.status!,
      });
    }
  }
  return out;
}

const cell = (s: string) =>
  s
    .trim()
    .replace(/^`(.*)`$/s, "$1")
    .replaceAll("\\|", "|");
/** Code in a cell: newlines are written as ⏎ so a row stays one line. */
const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ⏎ ");

/** The rows of mutants/equivalent.md's table: | file | mutator | code | replacement | why |. */
export function readEquivalents(markdown: string): EquivalentRow[] | { problem: string } {
  const rows: EquivalentRow[] = [];
  for (const [i, line] of markdown.split("\n").entries()) {
    if (!line.startsWith("| src/") && !line.startsWith("| scripts/")) continue;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map(cell);
    if (cells.length !== 5 || cells.some((c) => c === ""))
      return {
        problem: `equivalent.md line ${i + 1}: a row needs five cells (file, mutator, code, replacement, why), all filled`,
      };
    const [file, mutator, original, replacement, why] = cells as [string, string, string, string, string];
    rows.push({ file, mutator, original, replacement: replacement === "(empty)" ? "" : replacement, why });
  }
  return rows;
}

/** Survivors no equivalent row covers: each must get a test, a catalog mutant, or a row. */
/** Per file, the lines a safety tag with a catalog mutant protects. */
export type TaggedLines = ReadonlyMap<string, ReadonlySet<number>>;

const onTaggedLine = (m: SweepMutant, tagged: TaggedLines) => tagged.get(m.file)?.has(m.line) === true;

export function untriaged(
  survivors: readonly SweepMutant[],
  rows: readonly EquivalentRow[],
  tagged: TaggedLines = new Map(),
): SweepMutant[] {
  return survivors.filter(
    (m) =>
      !onTaggedLine(m, tagged) &&
      !rows.some(
        (r) =>
          r.file === m.file &&
          r.mutator === m.mutator &&
          r.original === oneLine(m.original) &&
          r.replacement === oneLine(m.replacement),
      ),
  );
}

/** One line naming a survivor, in the form a row of mutants/equivalent.md takes. */
export function describeSurvivor(m: SweepMutant): string {
  const esc = (s: string) => oneLine(s).replaceAll("|", "\\|");
  return `${m.status} ${m.file}:${m.line}: | ${m.file} | ${m.mutator} | \`${esc(m.original)}\` | \`${esc(m.replacement) || "(empty)"}\` | <why> |`;
}

/**
 * One file's score: killed (timeouts count, as Stryker counts them) over the mutants neither argued
 * equivalent nor on a catalog-tagged line.
 */
export type FileScore = {
  file: string;
  killed: number;
  equivalent: number;
  /** Survivors on a line whose safety tag has a catalog mutant: proven by the catalog, not by this sweep. */
  tagged: number;
  untriaged: number;
  /** Killed over killed plus untriaged, in percent; 100 when every non-equivalent mutant is killed. */
  score: number;
};

const KILLED = new Set(["Killed", "Timeout"]);

/** Each file's score from a mutation.json and the equivalent rows; what cannot be read is a problem. */
export function sweepScores(
  text: string,
  rows: readonly EquivalentRow[],
  tagged: TaggedLines = new Map(),
): FileScore[] | { problem: string } {
  const survivors = readSweepSurvivors(text);
  if ("problem" in survivors) return survivors;
  const d = JSON.parse(text) as Report;
  const left = new Set(untriaged(survivors, rows, tagged));
  return Object.entries(d.files ?? {})
    .map(([file, f]) => {
      const killed = (f.mutants ?? []).filter((m) => KILLED.has(m.status ?? "")).length;
      const mine = survivors.filter((m) => m.file === file);
      const open = mine.filter((m) => left.has(m)).length;
      const onTag = mine.filter((m) => onTaggedLine(m, tagged)).length;
      const score = killed + open === 0 ? 100 : (100 * killed) / (killed + open);
      return {
        file,
        killed,
        equivalent: mine.length - open - onTag,
        tagged: onTag,
        untriaged: open,
        score: Math.floor(score * 10) / 10,
      };
    })
    .sort((a, b) => a.file.localeCompare(b.file));
}

/** The scores as a markdown table, for the README and the sweep's output. */
export function renderScores(scores: readonly FileScore[]): string {
  return [
    "| file | killed | argued equivalent | on a catalog-tagged line | untriaged | score |",
    "|---|---|---|---|---|---|",
    ...scores.map((s) => `| ${s.file} | ${s.killed} | ${s.equivalent} | ${s.tagged} | ${s.untriaged} | ${s.score}% |`),
  ].join("\n");
}
