// Reading the JUnit XML vitest's junit reporter writes (reports/junit/<tier>.xml), for the check
// that no tier passes CI on a skipped or todo test. vitest writes one element per line and marks
// both a skip and a todo as <skipped/>; this reader takes that shape, not arbitrary XML.

export type JunitCase = { suite: string; name: string; skipped: boolean; failed: boolean; timeMs: number };

const ENTITIES: Record<string, string> = { "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&amp;": "&" };

function unescapeXml(s: string): string {
  return s.replace(/&(?:lt|gt|quot|apos|amp);/g, (e) => ENTITIES[e]!);
}

function attribute(tag: string, name: string): string {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescapeXml(m[1]!) : "";
}

/** Every <testcase> of a report, with the suite (test file) it sits in. */
export function readJunitCases(xml: string): JunitCase[] {
  const out: JunitCase[] = [];
  let suite = "";
  const re = /<testsuite\s[^>]*>|<testcase\s[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const tag = m[0].slice(0, m[0].indexOf(">") + 1);
    if (tag.startsWith("<testsuite")) {
      suite = attribute(tag, "name");
      continue;
    }
    const body = m[2] ?? "";
    out.push({
      suite,
      name: attribute(tag, "name"),
      skipped: /<skipped\b/.test(body),
      failed: /<(failure|error)\b/.test(body),
      timeMs: Number(attribute(tag, "time") || 0) * 1000,
    });
  }
  return out;
}

/** Why a tier's report does not show a whole, unskipped run; empty when it does. */
export function findSkipProblems(report: string, xml: string | null): string[] {
  if (xml === null) return [`${report}: no report (did the tier run with its junit reporter?)`];
  const cases = readJunitCases(xml);
  if (cases.length === 0) return [`${report}: no test case in the report`];
  return cases.filter((c) => c.skipped).map((c) => `${report}: skipped or todo: ${c.suite} > ${c.name}`);
}

/**
 * skips-check's verdict over the reports it was given (`read` gives a report's text, null when it is
 * missing): exit 2 with the usage for none; under CI any skip, todo, missing or empty report fails
 * (1); locally they are listed and it exits 0. Every line it prints comes back with the exit code.
 */
export function skipsCheckOutcome(
  reports: readonly string[],
  read: (report: string) => string | null,
  ci: boolean,
): { code: 0 | 1 | 2; out: string[]; err: string[] } {
  if (reports.length === 0) return { code: 2, out: [], err: ["usage: node scripts/skips-check.ts <junit.xml>..."] };
  const problems = reports.flatMap((r) => findSkipProblems(r, read(r)));
  if (problems.length === 0) return { code: 0, out: [`skips-check: ${reports.join(", ")}: every test ran`], err: [] };
  return {
    code: ci ? 1 : 0,
    out: [],
    err: [
      ...problems.map((p) => `skips-check: ${p}`),
      ci ? "skips-check: FAILED: under CI=true every test must run" : "skips-check: (not CI: reported, not failed)",
    ],
  };
}
