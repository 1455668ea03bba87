/**
 * What the end-of-session check may ask of a tree: lstat without following a link, a directory's
 * names, and the first bytes of a small regular file. src/host answers from the real workspace,
 * src/conformance from a declarative tree, so the same inspection runs over both.
 *
 * Paths and names are byte strings (bytes.ts): one char per byte, whatever the bytes are.
 */
export type TreeKind = "file" | "dir" | "link" | "other" | "unreadable";

export interface TreeStat {
  /** other: a fifo, socket or device. unreadable: something is there that cannot be examined. */
  kind: TreeKind;
  /** Permission bits with setuid, setgid and sticky (07777). */
  mode: number;
}

export interface TreeView {
  /** null when nothing is there. */
  lstat(path: string): TreeStat | null;
  /**
   * The names in a directory, sorted; null when it cannot be listed. `max`: the walk needs no more
   * than that many (it stops past its bound), so a view may stop reading there.
   */
  readdir(path: string, max?: number): string[] | null;
  /** A regular file's first bytes (a byte string); null when it is not one or cannot be read. */
  head(path: string, bytes: number): string | null;
}

/** The view the end-of-session check walks: a TreeView that can also search a regular file. */
export interface WorkspaceView extends TreeView {
  /** Whether a regular file's bytes hold `needle` anywhere; null when it is not one or cannot be read. */
  holds(path: string, needle: string): boolean | null;
}
