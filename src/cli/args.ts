export const USAGE = `usage: mosaic-harness run [scenario.yaml|dir ...] [--only id,...] [--json] [--junit FILE] [--repeat N] [--jobs N]
       mosaic-harness plan <spec.json> [--json]

  run    run conformance scenarios (scenarios/*.yaml by default) as real confined sessions and
         print a verdict table: scenario x assertion, then a summary line; --jobs N runs up to N
         scenarios at once (default: the number of cores), each in its own world
  plan   print the bind table, the bwrap argv and this machine's sandbox probe for a session spec

exit codes (run): 0 every assertion passed; 1 an assertion failed or went unobserved;
                  2 bad arguments or a bad scenario; 3 the sandbox cannot be set up
exit codes (plan): 0 plan printed and the probe passed; 2 bad arguments or spec; 3 the probe failed`;

/** --jobs bounds: 1 runs one scenario after another; more than 64 would only queue on bwrap and the CLIs. */
export const JOBS_MAX = 64;

export type CliCommand =
  | { kind: "help" }
  | { kind: "plan"; file: string; json: boolean }
  | {
      kind: "run";
      paths: string[];
      only: string[] | null;
      json: boolean;
      junit: string | null;
      repeat: number;
      /** null: the number of cores, resolved by the command. */
      jobs: number | null;
    }
  | { kind: "usage-error"; message: string };

/** Reads the command line; every mistake comes back as a usage error naming it. */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h") return { kind: "help" };
  if (command === undefined) return { kind: "usage-error", message: "no command given" };
  if (command === "run") return parseRunArgs(rest);
  if (command !== "plan") return { kind: "usage-error", message: `unknown command ${JSON.stringify(command)}` };
  const unknown = rest.find((a) => a.startsWith("-") && a !== "--json");
  if (unknown !== undefined) return { kind: "usage-error", message: `plan: unknown option ${unknown}` };
  const files = rest.filter((a) => !a.startsWith("-"));
  if (files.length !== 1)
    return { kind: "usage-error", message: `plan: expected exactly one spec file, got ${files.length}` };
  return { kind: "plan", file: files[0]!, json: rest.includes("--json") };
}

function parseRunArgs(rest: readonly string[]): CliCommand {
  const cmd = {
    kind: "run" as const,
    paths: [] as string[],
    only: null as string[] | null,
    json: false,
    junit: null as string | null,
    repeat: 1,
    jobs: null as number | null,
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const value = (): string | null => {
      const v = rest[i + 1];
      if (v === undefined || v.startsWith("-")) return null;
      i++;
      return v;
    };
    if (a === "--json") cmd.json = true;
    else if (a === "--only") {
      const v = value();
      const ids = v?.split(",").filter((s) => s !== "") ?? [];
      if (ids.length === 0)
        return { kind: "usage-error", message: "run: --only needs a comma-separated list of scenario names" };
      cmd.only = [...(cmd.only ?? []), ...ids]; // repeated, each adds
    } else if (a === "--junit") {
      const v = value();
      if (v === null) return { kind: "usage-error", message: "run: --junit needs a file" };
      cmd.junit = v;
    } else if (a === "--repeat") {
      const v = value();
      const n = v === null ? NaN : Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100)
        return {
          kind: "usage-error",
          message: `run: --repeat needs a whole number from 1 to 100, got ${v ?? "nothing"}`,
        };
      cmd.repeat = n;
    } else if (a === "--jobs") {
      const v = value();
      const n = v === null ? NaN : Number(v);
      if (!Number.isInteger(n) || n < 1 || n > JOBS_MAX)
        return {
          kind: "usage-error",
          message: `run: --jobs needs a whole number from 1 to ${JOBS_MAX}, got ${v ?? "nothing"}`,
        };
      cmd.jobs = n;
    } else if (a.startsWith("-")) return { kind: "usage-error", message: `run: unknown option ${a}` };
    else cmd.paths.push(a);
  }
  return cmd;
}
