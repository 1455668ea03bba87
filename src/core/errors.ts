/**
 * Every code a MosaicError may carry, with what it refuses. A code is stable: tests, scripts and the
 * CLI's exit report match on it, so a new refusal gets a new row, not a reused code.
 */
export const MOSAIC_ERROR_CODES = {
  "missing-field": "a required field of an instance, spec or script is absent",
  "bad-field": "a field of an instance or spec has the wrong type or value",
  "unknown-harness": "the spec names a harness the sandbox cannot confine",
  "not-a-path": "a path field is not a string",
  "not-normal-absolute": "a path is relative or not normalised, so its meaning depends on who reads it",
  "control-char": "a path holds a newline, carriage return or NUL, which would split a bwrap option or a golden line",
  "contains-home": "a bound path contains the founder's HOME, which no session may see",
  "under-tmp": "a bound path lies under /tmp, which the session's private /tmp covers",
  "package-outside": "a gate package directory is not under the checkout's node_modules",
  "runner-not-bound": "the runner is not among the files bound into the sandbox",
  "run-in-workspace": "the run directory lies inside the workspace, so the harness could rewrite its own bundle",
  "workspace-in-run": "the workspace lies inside the run directory",
  "protected-link": "a protected path is a symbolic link, so a bind would land on its target",
  "path-through-link":
    "the workspace or run directory is reached through a symbolic link, so its checks judge one tree and bwrap binds another",
  "protected-unreadable": "a protected path cannot be examined, so it cannot be protected",
  "handover-hardlink": "a file to hand to the session's uid has other hard links, which a chown would hand over too",
  "session-identity": "MOSAIC_SESSION_UID or MOSAIC_SESSION_GID is not a numeric id a session may run as",
  "bind-unreachable": "the session's uid could not use a bind (an ancestor it cannot search)",
  "adapter-empty": "the planned harness command is empty",
  "adapter-not-found": "no Claude Code binary to run",
  "no-effort": "Claude Code needs a thinking level for --effort",
  "bad-bundle-file": "a bundle file name is not one plain path segment",
  "bundle-dir": "the bundle directory exists and is not a directory",
  "bundle-exists": "a bundle file already exists: a bundle is written once",
  "run-dir-exists": "the run directory cannot be made fresh",
  "sandbox-spawn": "the sandbox's command could not be started (setpriv or bwrap missing, say)",
  "seccomp-arch": "no seccomp filter is written for the host's architecture",
  "session-uid-busy": "every uid of the sessions' range runs a session, or another launch took the one planned",
  "workspace-busy": "another launch holds the workspace: one session per workspace at a time",
  "gate-cache": "warming the gate's compile cache failed",
  "bad-binding": "the stand-in broker got a binding that is not a non-empty string",
  "run-ended": "the stand-in broker got a call for a run that has ended",
  "socket-path-too-long": "a Unix socket path is over the kernel's 107 bytes",
  "bad-script": "a model script is malformed",
  "bad-template-var": "a {{name}} in a model script is malformed or stands where it may not",
  "unknown-template-var": "a {{name}} in a model script is not one the run fills",
  "unfilled-template-var": "a model script was served with a {{name}} never filled",
  "bad-scenario": "a scenario file breaks the scenario format",
  "bad-yaml": "a scenario file is not YAML",
  unreadable: "a scenario file cannot be read",
  "bad-instance-ref": "a scenario names an instance it does not define",
} as const satisfies Record<string, string>;

export type MosaicErrorCode = keyof typeof MOSAIC_ERROR_CODES;

/**
 * Every refusal of bad input is a MosaicError: a stable code for tests and scripts,
 * the field or path it is about, and a message a person can act on.
 */
export class MosaicError extends Error {
  readonly code: MosaicErrorCode;
  readonly field: string;
  constructor(code: MosaicErrorCode, field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "MosaicError";
    this.code = code;
    this.field = field;
  }
}

export function isMosaicError(e: unknown): e is MosaicError {
  return e instanceof MosaicError;
}
