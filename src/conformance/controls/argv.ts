// Removing flags from an argv on purpose, for a positive control. A bwrap argv's own flags end at
// its first `--` (setpriv, prlimit and the runner follow); a CLI's argv (the adapter's) ends its
// flags at its last `--`, if it has one.

/** Where bwrap's own flags end: its first `--`. */
const bwrapFlagsEnd = (argv: readonly string[]): number =>
  argv.indexOf("--") === -1 ? argv.length : argv.indexOf("--");
/** Where a CLI's flags end: its last `--`, or the argv's end. */
const flagsEnd = (argv: readonly string[]): number =>
  argv.lastIndexOf("--") === -1 ? argv.length : argv.lastIndexOf("--");

/**
 * The argv without each given flag (a token, or `[flag, value]` with its value). A flag that is not
 * there throws: a control that removes nothing would pass as a proof.
 */
export function withoutFlags(
  argv: readonly string[],
  drop: ReadonlyArray<string | readonly [string, string]>,
): string[] {
  const out = [...argv];
  for (const d of drop) {
    const [flag, value] = typeof d === "string" ? [d, undefined] : d;
    const end = flagsEnd(out);
    const i = out.findIndex((t, k) => k < end && t === flag && (value === undefined || out[k + 1] === value));
    if (i === -1)
      throw new Error(`the argv has no ${flag}${value === undefined ? "" : ` ${JSON.stringify(value)}`} to drop`);
    out.splice(i, value === undefined ? 1 : 2);
  }
  return out;
}

/**
 * A bwrap argv without every occurrence of the given flags, present or not: for a control that
 * removes several layers at once, where another layer's removal may already have taken a flag.
 */
export const withoutAnyOf =
  (...flags: string[]) =>
  (argv: readonly string[]): string[] => {
    const end = bwrapFlagsEnd(argv);
    return [...argv.slice(0, end).filter((t) => !flags.includes(t)), ...argv.slice(end)];
  };

/** A bwrap argv without its `flag value`, when it has it. */
export const withoutPair =
  (flag: string, value: string) =>
  (argv: readonly string[]): string[] => {
    const end = bwrapFlagsEnd(argv);
    const i = argv.findIndex((t, k) => k < end && t === flag && argv[k + 1] === value);
    return i === -1 ? [...argv] : [...argv.slice(0, i), ...argv.slice(i + 2)];
  };

/** The argv without any token that starts with a prefix (prlimit's `--nproc=`, after bwrap's `--`). */
export const withoutPrefixed =
  (prefix: string) =>
  (argv: readonly string[]): string[] =>
    argv.filter((t) => !t.startsWith(prefix));

/** The argv with extra tokens just before the first `flag value` pair (the root's `--remount-ro /`, say). */
export function withBeforePair(
  argv: readonly string[],
  flag: string,
  value: string,
  extra: readonly string[],
): string[] {
  const i = argv.findIndex((t, k) => t === flag && argv[k + 1] === value);
  if (i === -1) throw new Error(`the argv has no ${flag} ${JSON.stringify(value)} to insert before`);
  return [...argv.slice(0, i), ...extra, ...argv.slice(i)];
}

/**
 * A session's bwrap argv without `setpriv --pdeathsig KILL --`: its runner no longer dies with its
 * bwrap, as when bwrap dies before the runner's prctl (seed 002's choice 1). Throws when it is not there.
 */
export function withoutParentDeathSignal(argv: readonly string[]): string[] {
  const i = argv.findIndex(
    (t, k) => t === "setpriv" && argv[k + 1] === "--pdeathsig" && argv[k + 2] === "KILL" && argv[k + 3] === "--",
  );
  if (i === -1) throw new Error("the argv has no setpriv --pdeathsig KILL -- to drop");
  return [...argv.slice(0, i), ...argv.slice(i + 4)];
}

/**
 * A session's bwrap argv whose runner is `command` instead: everything after the last `--` (the
 * runner's node and its arguments) is replaced; setpriv and prlimit before it stay.
 */
export function withRunnerCommand(argv: readonly string[], command: readonly string[]): string[] {
  const i = argv.lastIndexOf("--");
  if (i === -1) throw new Error("the argv has no -- before its runner");
  return [...argv.slice(0, i + 1), ...command];
}
