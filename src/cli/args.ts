export const USAGE = `usage: mosaic-harness plan <spec.json> [--json]

  plan   print the bind table, the bwrap argv and this machine's sandbox probe for a session spec

exit codes: 0 plan printed and the probe passed; 2 bad arguments or spec; 3 the probe failed`;

export type CliCommand =
  | { kind: "help" }
  | { kind: "plan"; file: string; json: boolean }
  | { kind: "usage-error"; message: string };

/** Reads the command line; every mistake comes back as a usage error naming it. */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h") return { kind: "help" };
  if (command === undefined) return { kind: "usage-error", message: "no command given" };
  if (command !== "plan") return { kind: "usage-error", message: `unknown command ${JSON.stringify(command)}` };
  const unknown = rest.find((a) => a.startsWith("-") && a !== "--json");
  if (unknown !== undefined) return { kind: "usage-error", message: `plan: unknown option ${unknown}` };
  const files = rest.filter((a) => !a.startsWith("-"));
  if (files.length !== 1) return { kind: "usage-error", message: `plan: expected exactly one spec file, got ${files.length}` };
  return { kind: "plan", file: files[0]!, json: rest.includes("--json") };
}
