// The attack-table rows the matrix runs on every working host, as root and as a user: rows whose
// protection depends on what the host has (bwrap's --disable-userns, its binds, the session uid).
export const MATRIX_ATTACKS = [
  "nested-userns", // bwrap's --disable-userns and the seccomp filter: both need a bwrap and kernel that apply them
  "write-bundle", // a read-only bind over a writable run directory
  "git-hook", // protected paths: read-only binds over the workspace
  "symlink-swap-founder", // nothing of the founder's home is in the sandbox
  "etc-shadow", // a root caller's session runs as its own uid
  "cap-eff", // no capability in the session
] as const;
