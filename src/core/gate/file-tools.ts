/**
 * The file tools whose inputs name paths, per harness, and which fields carry them. Read off
 * Pi 0.85.1's tool schemas (dist/core/tools/*.js) and Claude Code's tool inputs (sdk-tools.d.ts).
 */

export type PathField = {
  field: string;
  /** "path": a path the tool opens; "pattern": a glob whose fixed prefix is a path. */
  role: "path" | "pattern";
  /** A required field that is missing is a block; an optional one defaults to the working directory. */
  required: boolean;
};

export type FileTool = {
  fields: PathField[];
  /** Pi's read tries other spellings of a name that does not exist; each is checked too. */
  readSpellings: boolean;
  why: string;
};

const path = (field: string, required: boolean): PathField => ({ field, role: "path", required });
const pattern = (field: string): PathField => ({ field, role: "pattern", required: true });

export const FILE_TOOLS: Readonly<Record<string, FileTool>> = {
  // Pi: every tool resolves its path with resolveToCwd; read with resolveReadPath.
  // safety: gate-pi-read-unchecked
  read: { fields: [path("path", true)], readSpellings: true, why: "Pi read: opens path, or another spelling of it" },
  write: {
    fields: [path("path", true)],
    readSpellings: false,
    why: "Pi write: creates path and its missing directories",
  },
  edit: { fields: [path("path", true)], readSpellings: false, why: "Pi edit: rewrites path" },
  grep: {
    fields: [path("path", false)],
    readSpellings: false,
    why: "Pi grep: searches path (its pattern is a regex, not a path)",
  },
  find: {
    fields: [path("path", false), pattern("pattern")],
    readSpellings: false,
    why: "Pi find: globs pattern under path",
  },
  ls: { fields: [path("path", false)], readSpellings: false, why: "Pi ls: lists path" },
  // Claude Code: it makes paths absolute against its real working directory before the hook.
  // safety: gate-cc-read-no-spellings
  Read: {
    fields: [path("file_path", true)],
    readSpellings: true,
    why: "Claude Code Read: gets Pi's spelling check too (fail closed)",
  },
  // safety: gate-cc-write-unchecked
  Write: { fields: [path("file_path", true)], readSpellings: false, why: "Claude Code Write: creates file_path" },
  Edit: { fields: [path("file_path", true)], readSpellings: false, why: "Claude Code Edit: rewrites file_path" },
  MultiEdit: {
    fields: [path("file_path", true)],
    readSpellings: false,
    why: "Claude Code MultiEdit: rewrites file_path",
  },
  NotebookEdit: {
    fields: [path("notebook_path", true)],
    readSpellings: false,
    why: "Claude Code NotebookEdit: rewrites notebook_path",
  },
  Glob: {
    fields: [path("path", false), pattern("pattern")],
    readSpellings: false,
    why: "Claude Code Glob: globs pattern under path",
  },
  Grep: {
    fields: [path("path", false)],
    readSpellings: false,
    why: "Claude Code Grep: searches path (pattern is a regex; glob filters names under path)",
  },
};

export function fileTool(name: string): FileTool | undefined {
  return Object.hasOwn(FILE_TOOLS, name) ? FILE_TOOLS[name] : undefined;
}
