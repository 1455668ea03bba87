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

/**
 * One row of mutants/equivalent.md: the file, the mutator, the code it changes, what it puts there,
 * and how many places of that file it answers for (`×N` after the mutator; 1 without).
 */
export type EquivalentRow = {
  file: string;
  mutator: string;
  places: number;
  original: string;
  replacement: string;
  why: string;
};

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

const UNTRIAGED = new Set(["Survived", "NoCoverage"]); // safety: triage-no-coverage

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
    const [file, mutatorCell, original, replacement, why] = cells as [string, string, string, string, string];
    const m = /^(\w+)(?: ×([1-9]\d*))?$/.exec(mutatorCell);
    if (m === null)
      return {
        problem: `equivalent.md line ${i + 1}: "${mutatorCell}" is not a mutator, or a mutator and ×N for the places the row answers`,
      };
    const places = m[2] === undefined ? 1 : Number(m[2]);
    rows.push({
      file,
      mutator: m[1]!,
      places,
      original,
      replacement: replacement === "(empty)" ? "" : replacement,
      why,
    });
  }
  return rows;
}

/** Per file, the lines a safety tag with a catalog mutant protects. */
export type TaggedLines = ReadonlyMap<string, ReadonlySet<number>>;

const onTaggedLine = (m: SweepMutant, tagged: TaggedLines) => tagged.get(m.file)?.has(m.line) === true;

const answers = (r: EquivalentRow, m: SweepMutant) =>
  r.file === m.file &&
  r.mutator === m.mutator &&
  r.original === oneLine(m.original) &&
  r.replacement === oneLine(m.replacement); // safety: triage-row-replacement

/** A row with places it was written for but answers no survivor at: `left` of its `places`. */
export type UnusedRow = { row: EquivalentRow; left: number };

/**
 * How each survivor is triaged. A row answers as many survivors as the places it names (`×N`, 1
 * without): one more identical mutant in its file stays `open`, so a row argued for some places
 * cannot hide a later survivor at another with the same code; a row with places left over is
 * `unused`, since it would answer the next such survivor unargued. Rows answer first; a survivor no
 * row answers is triaged by a catalog-tagged line (`tagged`), or is open.
 */
export function matchRows(
  survivors: readonly SweepMutant[],
  rows: readonly EquivalentRow[],
  tagged: TaggedLines = new Map(),
): { open: SweepMutant[]; onTag: SweepMutant[]; unused: UnusedRow[] } {
  const left = rows.map((r) => r.places);
  const open: SweepMutant[] = [];
  const onTag: SweepMutant[] = [];
  for (const m of survivors) {
    const i = rows.findIndex((r, k) => left[k]! > 0 && answers(r, m)); // safety: equivalent-row-places
    if (i !== -1) left[i]! -= 1;
    else (onTaggedLine(m, tagged) ? onTag : open).push(m); // safety: triage-tagged-line
  }
  const unused = rows.flatMap((row, k) => (left[k]! > 0 ? [{ row, left: left[k]! }] : [])); // safety: equivalent-row-unused
  return { open, onTag, unused };
}

/** Survivors no equivalent row covers: each must get a test, a catalog mutant, or a row. */
export function untriaged(
  survivors: readonly SweepMutant[],
  rows: readonly EquivalentRow[],
  tagged: TaggedLines = new Map(),
): SweepMutant[] {
  return matchRows(survivors, rows, tagged).open;
}

/**
 * The triage's verdict: exit 0 only when every survivor is answered and, under CI, no row has
 * places left over (locally those are a warning, so a row can be written before its survivor).
 */
export function triageVerdict(
  survivors: number,
  t: { open: readonly SweepMutant[]; unused: readonly UnusedRow[] },
  ci: boolean,
): { exit: 0 | 1; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  if (t.unused.length > 0) {
    const say = ci ? err : out;
    say.push(
      `sweep-triage: ${t.unused.length} row(s) of mutants/equivalent.md name more places than they answer; lower ×N or delete the row (CI fails on them):`,
      ...t.unused.map((u) => `  ${describeUnused(u)}`),
    );
  }
  if (t.open.length > 0) {
    err.push(
      `sweep-triage: ${t.open.length} survivors without a test or an equivalent.md row:`,
      ...t.open.map((m) => `  ${describeSurvivor(m)}`),
    );
    return { exit: 1, out, err }; // safety: triage-open-fails
  }
  if (ci && t.unused.length > 0) return { exit: 1, out, err }; // safety: equivalent-row-unused-fails
  out.push(
    `sweep-triage: ${survivors} survivors, each argued equivalent in mutants/equivalent.md or on a catalog-tagged line`,
  );
  return { exit: 0, out, err };
}

/** One line naming a row with places left over, and how many. */
export function describeUnused(u: UnusedRow): string {
  const r = u.row;
  const of = r.places === 1 ? "answers no survivor" : `answers ${r.places - u.left} of its ${r.places} places`;
  return `| ${r.file} | ${r.mutator}${r.places === 1 ? "" : ` ×${r.places}`} | \`${r.original}\` | \`${r.replacement || "(empty)"}\` | … ${of}`;
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
  const triage = matchRows(survivors, rows, tagged);
  const left = new Set(triage.open);
  const byTag = new Set(triage.onTag);
  return Object.entries(d.files ?? {})
    .map(([file, f]) => {
      const killed = (f.mutants ?? []).filter((m) => KILLED.has(m.status ?? "")).length;
      const mine = survivors.filter((m) => m.file === file);
      const open = mine.filter((m) => left.has(m)).length;
      const onTag = mine.filter((m) => byTag.has(m)).length;
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
