/**
 * What the end-of-session check may ask of a tree: lstat without following a link, a directory's
 * names, and the first bytes of a small regular file. src/host answers from the real workspace,
 * src/conformance from a declarative tree, so the same inspection runs over both.
 */
export type TreeKind = "file" | "dir" | "link" | "other" | "unreadable";

export interface TreeStat {
  kind: TreeKind;
  /** Permission bits with setuid, setgid and sticky (07777). */
  mode: number;
}

export interface TreeView {
  /** null when nothing is there. */
  lstat(path: string): TreeStat | null;
  /** The names in a directory, sorted; null when it cannot be listed. */
  readdir(path: string): string[] | null;
  /** A regular file's first bytes as UTF-8; null when it is not one or cannot be read. */
  head(path: string, bytes: number): string | null;
}
