// What each matrix row showed, kept in baselines/hosts.json, and the README's Hosts table written
// from it. The matrix compares every run's results with the file and fails on a difference;
// `MATRIX_UPDATE=1 npm run test:matrix` rewrites it, for review like any baseline.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { DIAGNOSES } from "../src/core/sandbox/diagnose.ts";
import { HOSTS } from "./hosts.ts";

export const HOSTS_BASELINE = join(REPO_ROOT, "baselines/hosts.json");

/** One row as one identity saw it. */
export interface HostResult {
  row: string;
  as: "root" | "user";
  /** `bwrap --version` on that host. */
  bwrap: string | null;
  /** /bin as the host has it: a link into /usr, or a directory. */
  usr: "merged" | "split";
  /** "works", or the refusal's `<cause>: <fix>`, without bwrap's own words. */
  probe: string;
  /** The scenarios that passed there, and the attack rows blocked (with their controls through). */
  sessions: string[];
  attacksBlocked: number;
}

export function readHostResults(file = HOSTS_BASELINE): HostResult[] {
  return JSON.parse(readFileSync(file, "utf8")) as HostResult[];
}

export function writeHostResults(results: readonly HostResult[], file = HOSTS_BASELINE): void {
  writeFileSync(file, JSON.stringify(sortResults(results), null, 2) + "\n");
}

export function sortResults(results: readonly HostResult[]): HostResult[] {
  const order = (r: HostResult) => HOSTS.findIndex((h) => h.id === r.row) * 2 + (r.as === "root" ? 0 : 1);
  return [...results].sort((a, b) => order(a) - order(b));
}

/** The probe line's cause and fix, without the step and bwrap's own words after them. */
export function probeSays(problem: string | null): string {
  if (problem === null) return "works";
  const at = problem.indexOf(" (bwrap cannot apply ");
  return at === -1 ? problem : problem.slice(0, at);
}

const cell = (s: string) => s.replace(/\|/g, "\\|");

/** The probe's words split into its cause and its fix, by the diagnosis row whose cause they start with. */
function causeAndFix(probe: string): [string, string] {
  if (probe === "works") return ["works", "nothing"];
  const d = DIAGNOSES.find((x) => probe === `${x.cause}: ${x.fix}`);
  return d === undefined ? [probe, "unknown: see the probe's line"] : [d.cause, d.fix];
}

/** The README's Hosts table: one line per row, root and user together where they agree. */
export function renderHostsTable(results: readonly HostResult[]): string {
  const lines = [
    "| host | bwrap | /usr | what the probe says | sessions and attack rows, as root and as a user | the fix a user applies |",
    "|---|---|---|---|---|---|",
  ];
  for (const h of HOSTS) {
    const rs = results.filter((r) => r.row === h.id);
    const root = rs.find((r) => r.as === "root");
    const user = rs.find((r) => r.as === "user");
    if (root === undefined || user === undefined) {
      lines.push(`| \`${h.id}\` | ? | ? | not run | not run | ? |`);
      continue;
    }
    const [cause, fix] = causeAndFix(root.probe);
    const says = root.probe === user.probe ? cause : `as root ${cause}; as a user ${causeAndFix(user.probe)[0]}`;
    const ran =
      root.sessions.length + user.sessions.length === 0
        ? "none: no session starts"
        : `${[...new Set([...root.sessions, ...user.sessions])].join(", ")} pass; ${root.attacksBlocked} and ${user.attacksBlocked} attack rows blocked`;
    lines.push(
      `| \`${h.id}\` | ${(root.bwrap ?? "none").replace("bubblewrap ", "")} | ${root.usr} | ${cell(says)} | ${ran} | ${cell(fix)} |`,
    );
  }
  return lines.join("\n");
}

const README = join(REPO_ROOT, "README.md");
export const HOSTS_TABLE = /<!-- hosts:start -->\n([\s\S]*?)\n<!-- hosts:end -->/;

/** The README's Hosts table rewritten from results (MATRIX_UPDATE=1). */
export function writeReadmeTable(results: readonly HostResult[]): void {
  const text = readFileSync(README, "utf8");
  if (!HOSTS_TABLE.test(text)) throw new Error("README.md has no hosts:start / hosts:end markers");
  writeFileSync(
    README,
    text.replace(HOSTS_TABLE, `<!-- hosts:start -->\n${renderHostsTable(results)}\n<!-- hosts:end -->`),
  );
}
