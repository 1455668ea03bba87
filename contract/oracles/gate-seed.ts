// Hand-written from seed 000, "The gate" (and two sentences of "Limits"), independent of src:
// its own tree, its own expected decisions. Each case quotes the sentence it checks. Each
// refusal is paired with an allowed case that differs only in the condition the sentence names.

export type SeedTreeEntry = "file" | { link: string };

/**
 * The seed's world: a data root behind a link (/data -> /mnt/disk1), the workspace /data/ws,
 * the session's HOME outside it, and a directory beside the workspace under another spelling.
 */
export const SEED_TREE: Record<string, SeedTreeEntry> = {
  "/data": { link: "/mnt/disk1" },
  "/mnt/disk1/ws/src/main.ts": "file",
  "/mnt/disk1/ws/docs/guide.md": "file",
  "/mnt/disk1/ws/to-src": { link: "src" },
  "/mnt/disk1/ws/to-etc": { link: "/etc" },
  "/mnt/disk1/ws/to etc": { link: "/etc" },
  "/mnt/disk1/ws/docs/read me.md": "file",
  "/mnt/disk1/ws/to-missing-inside": { link: "/data/ws/src/later.ts" },
  "/mnt/disk1/ws/hop1": { link: "hop2" },
  "/mnt/disk1/ws/hop2": { link: "src/gone.ts" },
  "/mnt/disk1/ws/Screenshot 9.41.00\u202FAM.png": { link: "/etc/passwd" },
  "/mnt/disk1/ws/Screenshot 9.42.00\u202FAM.png": "file",
  "/mnt/disk1/ws/O'ne\u0301e.txt": { link: "/etc/passwd" },
  "/mnt/disk1/ws/nai\u0308ve.txt": "file",
  "/mnt/disk1/ws/Ga\u00EBl\u2019s.png": { link: "/etc/passwd" },
  "/mnt/disk1/ws/Mike\u2019s.png": "file",
  "/mnt/disk1/ws/Capture d\u2019e\u0301cran.png": { link: "/mnt/disk1/ws/nothing-here" },
  "/mnt/disk1/ws/Ren\u2019e\u0301e.png": "file",
  "/mnt/data/ws/x": "file",
  "/etc/passwd": "file",
  "/run/home/notes.txt": "file",
};

export const SEED_POLICY = {
  harness: "pi",
  workspace: "/data/ws",
  home: "/run/home",
  builtInTools: ["read", "write", "edit", "grep", "find", "ls", "bash", "Read", "Write", "Glob"],
  typedTools: ["send_message"],
  network: "none",
  services: [],
  credentials: { set: null },
};

export type SeedCase = {
  id: string;
  says: string;
  tool: string;
  input: Record<string, unknown>;
  want: "allow" | "block";
};

const BUILT_IN = "the policy's built-in tools and typed tools pass, anything else is blocked";
const INSIDE =
  "every path argument of a file tool (and a find/Glob pattern) must resolve inside the workspace after symlinks and Pi's own path normalisation";
const DANGLING = "A path that reaches a dangling symlink, at any depth, is refused even when the link points inside";
const REAL_PARENTS =
  "With the workspace or the dataRoot behind a symlink, those differ from the parents of the path as given, and ../../data/ws/x can be inside as given but outside for Pi";
const BOTH =
  "The gate requires a relative path to be inside from both the real path and the path as given. ... a path that only climbs out and back in through the real path's parents is refused";
const CC_ABSOLUTE =
  "[Claude Code] makes a path absolute against its own (real) working directory before the PreToolUse hook sees it";
const SPELLINGS =
  "for read, the gate also checks every one of those spellings that exists as a name ... If any of them resolves outside the workspace or goes through a dangling symlink, the read is refused";
const MISSING_SPELLING = "A spelling that doesn't exist is ignored";
const CC_READ = "Claude Code's Read gets the same check";
const AS_GIVEN = "write, edit, grep, find and ls take the name as given in Pi 0.85.1, so they get no such check";
const LIMIT_EXISTS =
  "A read is refused when a spelling Pi might open points outside the workspace, even if the name as given exists and is inside";
const NOT_A_SANDBOX = "The gate is not a sandbox. ... bash, where the role's tool limit grants it, can reach anything";

export const SEED_CASES: readonly SeedCase[] = [
  { id: "built-in passes", says: BUILT_IN, tool: "ls", input: {}, want: "allow" },
  { id: "typed tool passes", says: BUILT_IN, tool: "send_message", input: { to: "pm" }, want: "allow" },
  { id: "other tool blocked", says: BUILT_IN, tool: "web_fetch", input: { url: "https://example.com" }, want: "block" },
  {
    id: "ungranted built-in blocked",
    says: BUILT_IN,
    tool: "Edit",
    input: { file_path: "/data/ws/src/main.ts" },
    want: "block",
  },
  {
    id: "bash passes on its name",
    says: NOT_A_SANDBOX,
    tool: "bash",
    input: { command: "cat /etc/passwd" },
    want: "allow",
  },

  { id: "inside allowed", says: INSIDE, tool: "read", input: { path: "src/main.ts" }, want: "allow" },
  { id: "absolute outside blocked", says: INSIDE, tool: "read", input: { path: "/etc/passwd" }, want: "block" },
  { id: "link inside allowed", says: INSIDE, tool: "read", input: { path: "to-src/main.ts" }, want: "allow" },
  { id: "link outside blocked", says: INSIDE, tool: "read", input: { path: "to-etc/passwd" }, want: "block" },
  { id: "at stripped inside", says: INSIDE, tool: "read", input: { path: "@src/main.ts" }, want: "allow" },
  { id: "at stripped outside", says: INSIDE, tool: "read", input: { path: "@/etc/passwd" }, want: "block" },
  { id: "tilde is HOME", says: INSIDE, tool: "read", input: { path: "~/notes.txt" }, want: "block" },
  { id: "a directory called tilde", says: INSIDE, tool: "read", input: { path: "./~/notes.txt" }, want: "allow" },
  { id: "file URL inside", says: INSIDE, tool: "read", input: { path: "file:///data/ws/src/main.ts" }, want: "allow" },
  { id: "file URL outside", says: INSIDE, tool: "read", input: { path: "file:///etc/passwd" }, want: "block" },
  {
    id: "unicode space to a link outside",
    says: INSIDE,
    tool: "read",
    input: { path: "to\u00A0etc/passwd" },
    want: "block",
  },
  {
    id: "unicode space to a file inside",
    says: INSIDE,
    tool: "read",
    input: { path: "docs/read\u00A0me.md" },
    want: "allow",
  },
  { id: "pattern prefix inside", says: INSIDE, tool: "find", input: { pattern: "src/**/*.ts" }, want: "allow" },
  { id: "pattern prefix outside", says: INSIDE, tool: "find", input: { pattern: "/etc/*" }, want: "block" },
  { id: "pattern dotdot outside", says: INSIDE, tool: "Glob", input: { pattern: "**/../../../etc/*" }, want: "block" },
  { id: "Glob prefix inside", says: INSIDE, tool: "Glob", input: { pattern: "/data/ws/docs/*.md" }, want: "allow" },

  {
    id: "dangling inside refused",
    says: DANGLING,
    tool: "write",
    input: { path: "to-missing-inside", content: "x" },
    want: "block",
  },
  {
    id: "dangling target named directly",
    says: DANGLING,
    tool: "write",
    input: { path: "src/later.ts", content: "x" },
    want: "allow",
  },
  { id: "dangling at depth two", says: DANGLING, tool: "write", input: { path: "hop1", content: "x" }, want: "block" },
  {
    id: "depth two target named directly",
    says: DANGLING,
    tool: "write",
    input: { path: "src/gone.ts", content: "x" },
    want: "allow",
  },

  {
    id: "inside as given, outside for Pi",
    says: REAL_PARENTS,
    tool: "read",
    input: { path: "../../data/ws/x" },
    want: "block",
  },
  { id: "plain relative path", says: REAL_PARENTS, tool: "read", input: { path: "src/main.ts" }, want: "allow" },
  {
    id: "climbs out and back in by the real parents",
    says: BOTH,
    tool: "read",
    input: { path: "../../disk1/ws/src/main.ts" },
    want: "block",
  },
  {
    id: "out and back in by a shared parent",
    says: BOTH,
    tool: "read",
    input: { path: "../ws/src/main.ts" },
    want: "allow",
  },

  {
    id: "Claude Code real absolute path",
    says: CC_ABSOLUTE,
    tool: "Write",
    input: { file_path: "/mnt/disk1/ws/src/new.ts", content: "x" },
    want: "allow",
  },
  {
    id: "Claude Code absolute outside",
    says: CC_ABSOLUTE,
    tool: "Write",
    input: { file_path: "/mnt/data/ws/x", content: "x" },
    want: "block",
  },

  {
    id: "AM/PM spelling outside",
    says: SPELLINGS,
    tool: "read",
    input: { path: "Screenshot 9.41.00 AM.png" },
    want: "block",
  },
  {
    id: "AM/PM spelling inside",
    says: SPELLINGS,
    tool: "read",
    input: { path: "Screenshot 9.42.00 AM.png" },
    want: "allow",
  },
  { id: "NFD spelling outside", says: SPELLINGS, tool: "read", input: { path: "O'n\u00E9e.txt" }, want: "block" },
  { id: "NFD spelling inside", says: SPELLINGS, tool: "read", input: { path: "na\u00EFve.txt" }, want: "allow" },
  { id: "curly spelling outside", says: SPELLINGS, tool: "read", input: { path: "Ga\u00EBl's.png" }, want: "block" },
  { id: "curly spelling inside", says: SPELLINGS, tool: "read", input: { path: "Mike's.png" }, want: "allow" },
  {
    id: "NFD curly spelling dangling",
    says: SPELLINGS,
    tool: "read",
    input: { path: "Capture d'\u00E9cran.png" },
    want: "block",
  },
  { id: "NFD curly spelling inside", says: SPELLINGS, tool: "read", input: { path: "Ren'\u00E9e.png" }, want: "allow" },
  {
    id: "no spelling exists",
    says: MISSING_SPELLING,
    tool: "read",
    input: { path: "Screenshot 1.00.00 PM.png" },
    want: "allow",
  },
  {
    id: "Claude Code Read spelling outside",
    says: CC_READ,
    tool: "Read",
    input: { file_path: "/data/ws/Screenshot 9.41.00 AM.png" },
    want: "block",
  },
  {
    id: "Claude Code Read spelling inside",
    says: CC_READ,
    tool: "Read",
    input: { file_path: "/data/ws/Screenshot 9.42.00 AM.png" },
    want: "allow",
  },
  {
    id: "write takes the name as given",
    says: AS_GIVEN,
    tool: "write",
    input: { path: "Screenshot 9.41.00 AM.png", content: "x" },
    want: "allow",
  },
  {
    id: "edit takes the name as given",
    says: AS_GIVEN,
    tool: "edit",
    input: { path: "O'n\u00E9e.txt", edits: [] },
    want: "allow",
  },
  { id: "ls takes the name as given", says: AS_GIVEN, tool: "ls", input: { path: "Ga\u00EBl's.png" }, want: "allow" },
];

/** Seed "Limits": a workspace in jo's/ws beside jo’s/ws. */
export const SEED_TWIN_TREE: Record<string, SeedTreeEntry> = {
  "/data/jo's/ws/notes.md": "file",
  "/data/jo's/ws/todo.md": "file",
  "/data/jo\u2019s/ws/notes.md": "file",
};
export const SEED_TWIN_CASES: readonly SeedCase[] = [
  { id: "twin beside the workspace", says: LIMIT_EXISTS, tool: "read", input: { path: "notes.md" }, want: "block" },
  { id: "no twin beside the workspace", says: LIMIT_EXISTS, tool: "read", input: { path: "todo.md" }, want: "allow" },
];
