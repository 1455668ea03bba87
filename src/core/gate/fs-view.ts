/**
 * What the gate may ask of a filesystem: one lstat-like question per path. src/host answers it
 * from the real filesystem, src/conformance from a declarative tree, so the same decide() runs
 * over both and a test can compare them.
 */
export type FsEntry =
  | { kind: "dir" }
  | { kind: "file" }
  | { kind: "link"; target: string }
  | { kind: "missing" }
  /** Anything else the gate cannot see through (a permission error, a socket): fail closed. */
  | { kind: "unreadable"; why: string };

export interface FsView {
  /** The entry at an absolute, normalised path, without following a link at its last component. */
  lstat(path: string): FsEntry;
}
