import type { GatePolicy } from "../../src/core/gate/policy-shape.ts";
import type { Tree } from "../../src/conformance/worlds/tree.ts";

/**
 * The gate's decision tables: a few declarative trees, and for each a list of tool calls with the
 * decision a reviewer expects and why. contract/gate.test.ts writes each scene's decisions to a
 * golden and asserts every `want` beside it, so a regenerated golden cannot flip a decision.
 */
export type Want = "allow" | "block";
export type GateCase = { tool: string; input: unknown; want: Want; why: string };
export type GateScene = { name: string; what: string; tree: Tree; policy: GatePolicy; cases: GateCase[] };

const PI_FILE_TOOLS = ["read", "write", "edit", "grep", "find", "ls"];
const CC_FILE_TOOLS = ["Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep"];
/** One policy for both harnesses' names, so one scene covers both; a real policy holds one harness. */
const policyFor = (workspace: string, home: string): GatePolicy => ({
  workspace,
  home,
  builtInTools: [...PI_FILE_TOOLS, "bash", ...CC_FILE_TOOLS, "Bash"],
  typedTools: ["mosaic_send_message", "mcp__mosaic__send_message"],
});

const c = (tool: string, input: unknown, want: Want, why: string): GateCase => ({ tool, input, want, why });
/** The same path through every tool whose path field is called `path` (Pi) or `file_path` (Claude Code). */
const piPath = (p: string, want: Want, why: string, tools = ["read", "write", "edit", "ls", "grep"]) =>
  tools.map((t) => c(t, { path: p }, want, why));
const ccPath = (p: string, want: Want, why: string, tools = ["Read", "Write", "Edit", "MultiEdit"]) =>
  tools.map((t) => c(t, { file_path: p }, want, why));

function chain(dir: string, prefix: string, links: number, target: string): Tree {
  const t: Record<string, { link: string }> = {};
  for (let i = 0; i < links; i++) t[`${dir}/${prefix}${i}`] = { link: i === links - 1 ? target : `${prefix}${i + 1}` };
  return t;
}

const PLAIN_TREE: Tree = {
  "/data/ws/a.txt": "file",
  "/data/ws/a b.txt": "file",
  "/data/ws/sub/b.txt": "file",
  "/data/ws/sub/deep/er/c.txt": "file",
  "/data/ws/in-link": { link: "/data/ws/sub/b.txt" },
  "/data/ws/in-rel": { link: "sub/b.txt" },
  "/data/ws/in-dir": { link: "sub" },
  "/data/ws/out-file": { link: "/etc/passwd" },
  "/data/ws/out-dir": { link: "/etc" },
  "/data/ws/out-rel": { link: "../other/secret.txt" },
  "/data/ws/x y": { link: "/etc/passwd" },
  "/data/ws/@secret": { link: "/etc/passwd" },
  "/data/ws/dangle-in": { link: "/data/ws/not-yet.txt" },
  "/data/ws/dangle-dir": { link: "gone/dir" },
  "/data/ws/chain1": { link: "chain2" },
  "/data/ws/chain2": { link: "not-there.txt" },
  "/data/ws/chain-ok1": { link: "chain-ok2" },
  "/data/ws/chain-ok2": { link: "a.txt" },
  "/data/ws/loop-a": { link: "loop-b" },
  "/data/ws/loop-b": { link: "loop-a" },
  "/data/ws/self": { link: "self" },
  ...chain("/data/ws/chains", "c", 40, "/data/ws/a.txt"),
  ...chain("/data/ws/chains", "d", 41, "/data/ws/a.txt"),
  // Pi's read spellings: each twin exists only under its other spelling.
  "/data/ws/shot 10.00.00\u202FAM.png": { link: "/etc/passwd" },
  "/data/ws/shot 11.00.00\u202FPM.png": "file",
  "/data/ws/meet 9\u202FAM.txt": { link: "nowhere.txt" },
  "/data/ws/cafe\u0301.txt": { link: "/etc/passwd" },
  "/data/ws/re\u0301sume\u0301.txt": "file",
  "/data/ws/jo\u2019s.txt": { link: "/etc/passwd" },
  "/data/ws/it\u2019s.txt": "file",
  "/data/ws/d\u2019e\u0301te\u0301.txt": { link: "/etc/passwd" },
  "/data/ws/l\u2019e\u0301te\u0301.txt": "file",
  "/data/ws/shot 10.00.00\u202Fam.png": { link: "/etc/passwd" },
  "/data/ws/lunch 1\u202Fpm.txt": "file",
  "/data/ws/nb.ipynb": "file",
  // Names Claude Code's Glob reads as plain (only * ? [ { end its fixed part), each a link out.
  "/data/ws/a]b": { link: "/etc" },
  "/data/ws/c}d": { link: "/etc" },
  "/data/ws/e\\f": { link: "/etc" },
  "/data/ws/+(g)": { link: "/etc" },
  "/data/ws/!(h)": { link: "/etc" },
  "/data/ws/@(i)": { link: "/etc" },
  "/data/ws/in]side/n.txt": "file",
  // A name of 255 bytes is the longest there can be.
  [`/data/ws/${"n".repeat(255)}`]: "file",
  "/data/ws-evil/x.txt": "file",
  "/data/other/secret.txt": "file",
  "/etc/passwd": "file",
  "/run/home/.ssh/id_ed25519": "file",
};

const PLAIN: GateScene = {
  name: "plain",
  what: "workspace /data/ws is a real directory; links inside point in, out and nowhere",
  tree: PLAIN_TREE,
  policy: policyFor("/data/ws", "/run/home"),
  cases: [
    // Tool names
    c("bash", { command: "ls /" }, "allow", "a built-in tool without paths passes on its name"),
    c("Bash", { command: "ls /" }, "allow", "Claude Code's built-in bash, named in the policy"),
    c("mosaic_send_message", { to: "pm", text: "hi" }, "allow", "a typed tool (Pi name)"),
    c("mcp__mosaic__send_message", { to: "pm", text: "hi" }, "allow", "a typed tool (Claude Code name)"),
    c("WebFetch", { url: "https://example.com" }, "block", "not in the policy"),
    c("mcp__other__send", {}, "block", "another MCP server's tool is not one of ours"),
    c("READ", { path: "a.txt" }, "block", "names are case-sensitive"),
    c("read ", { path: "a.txt" }, "block", "no trimming of names"),
    c("", {}, "block", "the empty name"),
    c("__proto__", {}, "block", "an object key of every JS object is not a tool"),
    c("toString", {}, "block", "likewise"),
    c(42 as unknown as string, {}, "block", "a name that is not a string"),
    // Malformed inputs
    c("read", "a.txt", "block", "the input must be an object"),
    c("read", null, "block", "null input"),
    c("read", ["a.txt"], "block", "an array input"),
    c("read", {}, "block", "read without its required path"),
    c("read", { path: 5 }, "block", "a path that is not a string"),
    c("read", { path: "a.txt\u0000/etc/passwd" }, "block", "a NUL byte"),
    c("ls", {}, "allow", "ls without a path lists the working directory"),
    c("ls", { path: null }, "block", "an optional path that is present must be a string"),
    c("grep", { pattern: "../../etc/passwd" }, "allow", "grep's pattern is a regex, not a path"),
    c("Grep", { pattern: "x", glob: "../../**" }, "allow", "Grep's glob filters names under its path"),
    // Relative paths
    ...piPath("a.txt", "allow", "a file in the workspace"),
    ...piPath("./sub/b.txt", "allow", "a file below it"),
    ...piPath("sub/deep/er/c.txt", "allow", "four levels down"),
    c(
      "write",
      { path: "new/dir/file.txt", content: "x" },
      "allow",
      "a new file in new directories inside (Pi makes them)",
    ),
    c("read", { path: "" }, "allow", "the empty path is the working directory"),
    c("ls", { path: "." }, "allow", "the workspace itself"),
    c("read", { path: "../ws/a.txt" }, "allow", "out and back in through the same parent"),
    c("read", { path: "sub/../../ws/a.txt" }, "allow", "likewise, deeper"),
    ...piPath("../other/secret.txt", "block", "a sibling directory", ["read", "write", "ls"]),
    c("ls", { path: ".." }, "block", "the workspace's parent"),
    c("read", { path: "../ws-evil/x.txt" }, "block", "a sibling whose name starts with the workspace's"),
    c("read", { path: "a.txt/x" }, "block", "a file used as a directory"),
    // Absolute paths
    ...ccPath("/data/ws/a.txt", "allow", "absolute, inside"),
    ...ccPath("/etc/passwd", "block", "absolute, outside"),
    c("Read", { file_path: "/data/ws/" }, "allow", "the workspace, with a trailing slash"),
    c("Read", { file_path: "/data/ws/sub/../a.txt" }, "allow", "a .. that stays inside"),
    c("Read", { file_path: "/data/ws/../other/secret.txt" }, "block", "a .. that leaves"),
    c("Read", { file_path: "/data/ws-evil/x.txt" }, "block", "a prefix of the name is not containment"),
    c("Read", { file_path: "/data" }, "block", "the workspace's parent"),
    c("Read", { file_path: "/" }, "block", "the root"),
    c(
      "NotebookEdit",
      { notebook_path: "/data/ws/nb.ipynb", new_source: "x" },
      "allow",
      "NotebookEdit's notebook_path, inside",
    ),
    c(
      "NotebookEdit",
      { notebook_path: "/data/other/secret.txt", new_source: "x" },
      "block",
      "NotebookEdit's notebook_path, outside",
    ),
    c("NotebookEdit", { file_path: "/data/ws/nb.ipynb" }, "block", "NotebookEdit needs notebook_path"),
    // Links
    ...piPath("in-link", "allow", "a link to a file inside", ["read", "write"]),
    ...piPath("in-rel", "allow", "a relative link inside", ["read", "edit"]),
    c("read", { path: "in-dir/b.txt" }, "allow", "through a directory link inside"),
    ...piPath("out-file", "block", "a link to a file outside", ["read", "write", "edit"]),
    c("read", { path: "out-dir/passwd" }, "block", "through a directory link outside"),
    c("ls", { path: "out-dir" }, "block", "listing a directory link outside"),
    c("read", { path: "out-rel" }, "block", "a relative link that climbs out"),
    c("Read", { file_path: "/data/ws/out-file" }, "block", "Claude Code, a link outside"),
    c("Read", { file_path: "/data/ws/in-link" }, "allow", "Claude Code, a link inside"),
    // Dangling links, at any depth, even pointing inside
    ...piPath("dangle-in", "block", "a dangling link, though it points inside", ["read", "write", "edit"]),
    c("Write", { file_path: "/data/ws/dangle-in", content: "x" }, "block", "Claude Code writing through it"),
    c("write", { path: "not-yet.txt", content: "x" }, "allow", "the link's target named directly (positive control)"),
    c("write", { path: "dangle-dir/x.txt", content: "x" }, "block", "a dangling directory link on the way"),
    c("write", { path: "gone/dir/x.txt", content: "x" }, "allow", "the same place named directly (positive control)"),
    c("read", { path: "chain1" }, "block", "a chain whose second link dangles"),
    c("read", { path: "chain-ok1" }, "allow", "the same chain ending at a file (positive control)"),
    // Cycles and the 40-link limit
    c("read", { path: "loop-a" }, "block", "a two-link cycle"),
    c("read", { path: "self" }, "block", "a link to itself"),
    c("read", { path: "chains/c0" }, "allow", "a chain of exactly 40 links"),
    c("read", { path: "chains/d0" }, "block", "a chain of 41 links"),
    // ".." after a link, as the kernel would take it
    c("read", { path: "in-dir/../a.txt" }, "allow", ".. after a link inside stays inside"),
    c(
      "read",
      { path: "out-dir/../data/other/secret.txt" },
      "block",
      ".. after a link outside climbs from the link's target",
    ),
    c("Read", { file_path: "/data/ws/out-dir/../data/other/secret.txt" }, "block", "the same, absolute"),
    // ~, @, file://
    ...piPath("~", "block", "~ is the session's HOME, outside", ["read", "ls"]),
    c("read", { path: "~/.ssh/id_ed25519" }, "block", "a file under HOME"),
    c("ls", { path: "~/" }, "block", "~/ is HOME too"),
    c("read", { path: "~x" }, "allow", "~x is a plain name: Pi does not expand ~user"),
    c("read", { path: "./~/.ssh/id_ed25519" }, "allow", "a directory called ~ inside is a plain name"),
    c("read", { path: "@a.txt" }, "allow", "one leading @ is stripped"),
    c("read", { path: "@@a.txt" }, "allow", "only one @ is stripped: @a.txt stays inside"),
    c("read", { path: "@/etc/passwd" }, "block", "after the @, an absolute path outside"),
    c("read", { path: "@~/.ssh/id_ed25519" }, "block", "@ then ~"),
    c("read", { path: "@secret" }, "block", "the name as given is a link outside (Claude Code opens it)"),
    c("read", { path: "file:///data/ws/a.txt" }, "allow", "a file URL inside"),
    c("read", { path: "file:///data/ws/a%20b.txt" }, "allow", "percent escapes are decoded"),
    c("read", { path: "file:///etc/passwd" }, "block", "a file URL outside"),
    c("read", { path: "file://localhost/etc/passwd" }, "block", "localhost is the local host"),
    c("read", { path: "file://evil.example/data/ws/a.txt" }, "block", "a file URL with a host names no local path"),
    c("read", { path: "file:///data/ws/%2e%2e/other/secret.txt" }, "block", "an escaped .. is still .."),
    c("read", { path: "file:///data/ws/x%2Fy" }, "block", "an escaped / is refused, as node does"),
    c("read", { path: "@file:///etc/passwd" }, "block", "@ then a file URL"),
    c("read", { path: "file:///data/ws/a%00.txt" }, "block", "a %00 that decodes to a NUL byte"),
    c("Write", { file_path: "/data/ws/a\u0000.txt", content: "x" }, "block", "a NUL byte as given"),
    // Unicode spaces
    c("read", { path: "x\u00A0y" }, "block", "a no-break space becomes a space: Pi opens 'x y', a link outside"),
    c("read", { path: "x\u3000y" }, "block", "an ideographic space, likewise"),
    c("read", { path: "a\u2009b.txt" }, "allow", "a thin space: Pi opens 'a b.txt', inside (positive control)"),
    // Pi's read spellings
    c("read", { path: "shot 10.00.00 AM.png" }, "block", "its U+202F spelling is a link outside"),
    c("Read", { file_path: "/data/ws/shot 10.00.00 AM.png" }, "block", "Claude Code's Read gets the same check"),
    c("write", { path: "shot 10.00.00 AM.png", content: "x" }, "allow", "write takes the name as given"),
    c("read", { path: "shot 11.00.00 PM.png" }, "allow", "its U+202F spelling is a file inside (positive control)"),
    c("read", { path: "meet 9 AM.txt" }, "block", "its U+202F spelling is a dangling link"),
    c("read", { path: "caf\u00E9.txt" }, "block", "its NFD spelling is a link outside"),
    c("edit", { path: "caf\u00E9.txt", edits: [] }, "allow", "edit takes the name as given"),
    c("read", { path: "r\u00E9sum\u00E9.txt" }, "allow", "its NFD spelling is a file inside (positive control)"),
    c("read", { path: "jo's.txt" }, "block", "its U+2019 spelling is a link outside"),
    c("grep", { pattern: "x", path: "jo's.txt" }, "allow", "grep takes the name as given"),
    c("read", { path: "it's.txt" }, "allow", "its U+2019 spelling is a file inside (positive control)"),
    c("read", { path: "d'\u00E9t\u00E9.txt" }, "block", "its NFD+U+2019 spelling is a link outside"),
    c("Read", { file_path: "/data/ws/d'\u00E9t\u00E9.txt" }, "block", "the same through Claude Code's Read"),
    c("read", { path: "l'\u00E9t\u00E9.txt" }, "allow", "its NFD+U+2019 spelling is a file inside (positive control)"),
    c("read", { path: "nothing 1 PM.txt" }, "allow", "no spelling exists: nothing else to check"),
    c(
      "read",
      { path: "shot 10.00.00 am.png" },
      "block",
      "Pi's AM/PM spelling ignores case: its U+202F am twin is a link outside",
    ),
    c("Read", { file_path: "/data/ws/shot 10.00.00 am.png" }, "block", "the same through Claude Code's Read"),
    c("read", { path: "lunch 1 pm.txt" }, "allow", "its U+202F pm twin is a file inside (positive control)"),
    // find / Glob patterns
    c("find", { pattern: "*.txt" }, "allow", "a pattern with no fixed prefix"),
    c("find", { pattern: "sub/**/*.txt" }, "allow", "a fixed prefix inside"),
    c("find", { pattern: "deep/*", path: "sub" }, "allow", "a prefix under the tool's path"),
    c("find", { pattern: "in-dir/*.txt" }, "allow", "a prefix through a link inside"),
    c("find", { pattern: "../other/*" }, "block", "a fixed prefix outside"),
    c("find", { pattern: "out-dir/*" }, "block", "a prefix through a link outside"),
    c("find", { pattern: "dangle-dir/*" }, "block", "a prefix through a dangling link"),
    c("find", { pattern: "**/../../etc/*" }, "block", ".. after a wildcard"),
    c("find", { pattern: "sub/*/../../../*" }, "block", ".. after a wildcard, deeper"),
    c("find", { pattern: "{..,sub}/*" }, "block", "a .. inside braces"),
    c("find", { pattern: "*.txt", path: "../other" }, "block", "the tool's path outside"),
    c("find", { pattern: "/etc/*" }, "block", "an absolute prefix outside"),
    c("find", {}, "block", "find without its pattern"),
    c("Glob", { pattern: "/data/ws/**/*.ts" }, "allow", "Claude Code Glob, absolute inside"),
    c("Glob", { pattern: "**/*.ts", path: "/data/ws/sub" }, "allow", "Glob's path inside"),
    c("Glob", { pattern: "/data/**" }, "block", "Glob, absolute prefix outside"),
    c("Glob", { pattern: "~/.ssh/*" }, "block", "Glob, a ~ prefix"),
    c("Glob", { pattern: "**/*", path: "/etc" }, "block", "Glob's path outside"),
    // The fixed part Claude Code's Glob searches is longer than the gate's own cut
    c(
      "Glob",
      { pattern: "/data/ws/a]b/*" },
      "block",
      "Claude Code searches /data/ws/a]b (] does not end its fixed part), a link outside",
    ),
    c("Glob", { pattern: "/data/ws/c}d/**/*.conf" }, "block", "} does not end it either"),
    c("Glob", { pattern: "/data/ws/e\\f/*" }, "block", "nor a backslash"),
    c("Glob", { pattern: "/data/ws/+(g)/*" }, "block", "nor an extglob +( )"),
    c("Glob", { pattern: "/data/ws/!(h)/*.txt" }, "block", "nor !( )"),
    c("Glob", { pattern: "/data/ws/@(i)/**" }, "block", "nor @( )"),
    c("find", { pattern: "/data/ws/a]b/*" }, "block", "Pi's find gets the same check (fail closed)"),
    c(
      "Glob",
      { pattern: "a]b/*", path: "/data/ws" },
      "block",
      "relative, under the path: stricter than Claude Code, which walks the path without following the link",
    ),
    c("Glob", { pattern: "/data/ws/in]side/*.txt" }, "allow", "a ] directory inside (positive control)"),
    c("Glob", { pattern: "/data/ws/sub" }, "allow", "no wildcard: Claude Code searches its dirname, the workspace"),
    c(
      "Glob",
      { pattern: "/data/ws" },
      "block",
      "no wildcard: Claude Code searches its dirname, /data, for names matching ws",
    ),
    c("Grep", { pattern: "root", path: "/etc/passwd" }, "block", "Grep's path outside"),
    c("Grep", { pattern: "root", path: "/data/ws/sub" }, "allow", "Grep's path inside"),
  ],
};

const LONG_PATTERN = `sub/${"a".repeat(4100)}*`;

/**
 * Patterns whose groups, escapes or classes name paths their fixed prefix does not vouch for. A
 * glob library that expands its pattern (node's fs.glob: `{/outside,sub}/*` lists /outside, and
 * `\.\./*`, `[.][.]/*`, `{.,}{.,}/*` climb) opens each of them; Claude Code 2.1.332's Glob and
 * Pi's fd only filter names under the directory they walk (baselines/README.md), so for them the
 * rules are a second line. Each refusal has near misses beside it that stay allowed.
 */
const GLOB_GROUPS: GateScene = {
  name: "glob-groups",
  what: "find/Glob patterns with groups spanning /, alternatives from / or ~, and .. spelled by escapes, classes or groups",
  tree: {
    "/data/ws/a.txt": "file",
    "/data/ws/.hidden": "file",
    "/data/ws/sub/deep/x.txt": "file",
    "/data/other/ws": "file",
    "/outside/marker.txt": "file",
    "/run/home/.ssh/id_ed25519": "file",
  },
  policy: policyFor("/data/ws", "/run/home"),
  cases: [
    // A group holding a "/": its alternatives are paths of their own.
    c("Glob", { pattern: "{/outside,sub}/*" }, "block", "the review's bypass: an absolute alternative in a brace"),
    c("find", { pattern: "{/outside,sub}/*" }, "block", "the same through Pi's find"),
    c("Glob", { pattern: "{/outside,sub}/*", path: "/data/ws/sub" }, "block", "under a path inside, too"),
    c("Glob", { pattern: "sub/{/outside,x}/*" }, "block", "a brace after a fixed prefix inside"),
    c("Glob", { pattern: "/data/ws/{/outside,sub}/*" }, "block", "after an absolute prefix inside"),
    c(
      "Glob",
      { pattern: "{x,\\.\\./\\.\\.}/*" },
      "block",
      "escaped dots across a / inside a brace: no segment holds them whole",
    ),
    c(
      "Glob",
      { pattern: "{x,[.][.]/[.][.]}/*" },
      "block",
      "classes across a / inside a brace: no segment holds a whole ..",
    ),
    c("Glob", { pattern: "{sub/../..,x}/*" }, "block", "a / inside a brace, not at an alternative's start"),
    c("Glob", { pattern: "{x,../../outside}/*" }, "block", "a climbing alternative after the first"),
    c("Glob", { pattern: "{a,{b,/outside}}/*" }, "block", "nested braces"),
    c("Glob", { pattern: "@(/outside|sub)/*" }, "block", "an extglob alternative that is absolute"),
    c("Glob", { pattern: "+(/outside|sub)/*" }, "block", "+( )"),
    c("Glob", { pattern: "?(/outside)/*" }, "block", "?( )"),
    c("Glob", { pattern: "*(/outside)/*" }, "block", "*( )"),
    c("Glob", { pattern: "!(/outside)/*" }, "block", "!( )"),
    c("Glob", { pattern: "{/outside,sub" }, "block", "a brace that never closes: fail closed"),
    c("Glob", { pattern: "\\{/outside,sub}/*" }, "block", "an escaped opener still counts: fail closed"),
    c("Glob", { pattern: "{a\\},/outside}/*" }, "block", "an escaped closer closes nothing"),
    // An alternative from HOME.
    c("Glob", { pattern: "{~,sub}/*" }, "block", "a ~ alternative: a shell expands it to HOME"),
    c("Glob", { pattern: "@(sub|~)/.ssh/*" }, "block", "a ~ alternative in an extglob"),
    c("Glob", { pattern: "{~root,sub}/*" }, "block", "~user is another home"),
    // ".." spelled by escapes, classes or groups, after the first wildcard.
    c(
      "Glob",
      { pattern: "*/a..b/*" },
      "block",
      "a segment holding .. anywhere, though it spells no climb: fail closed",
    ),
    c("Glob", { pattern: "\\.\\./*" }, "block", "escaped dots: an escaped .. climbs"),
    c("find", { pattern: "\\.\\./\\.\\./outside/*" }, "block", "twice, toward /outside"),
    c("Glob", { pattern: "/data/ws/\\.\\./other/*" }, "block", "after an absolute prefix inside"),
    c("Glob", { pattern: ".\\./*" }, "block", "one dot escaped"),
    c(
      "Glob",
      { pattern: "sub/*/\\.\\./x" },
      "block",
      "escaped dots after a wildcard (read with \\ as /, they are two .)",
    ),
    c("Glob", { pattern: "[.][.]/*" }, "block", "two classes of one dot"),
    c("Glob", { pattern: "[.]./*" }, "block", "a class and a dot"),
    c("Glob", { pattern: "sub/*/[.][.]/../x" }, "block", "deeper, after a wildcard"),
    c("Glob", { pattern: "[!a][.]/*" }, "block", "a negated class that does not list . may be ."),
    c("Glob", { pattern: "[+-.][.]/*" }, "block", "a range that reaches . (+ to .)"),
    c("Glob", { pattern: "[[:punct:]]./*" }, "block", "a POSIX class may hold .: fail closed"),
    c("Glob", { pattern: "{.,}{.,}/*" }, "block", "braces that spell .."),
    c("Glob", { pattern: "{.,x}{.,y}/*" }, "block", "braces with other alternatives still spell .."),
    c("Glob", { pattern: ".{,x}./*" }, "block", "an empty alternative between two dots"),
    c("Glob", { pattern: "{{.,a},b}./*" }, "block", "nested braces"),
    c("Glob", { pattern: "@(.)@(.)/*" }, "block", "extglobs of one dot"),
    c("Glob", { pattern: "+(.)/*" }, "block", "+(.) repeats to .."),
    c("Glob", { pattern: "?(.).*/*" }, "block", "?(.) and a dot (a * supplies nothing)"),
    c("Glob", { pattern: ".*./*" }, "block", "a * between two dots may match nothing"),
    c("Glob", { pattern: ".!(x)./*" }, "block", "so may a !( )"),
    // A "\" read as "/": node's fs.glob does, even on Linux.
    c("Glob", { pattern: "\\outside\\*" }, "block", "node's fs.glob lists /outside/*"),
    c("find", { pattern: "\\*" }, "block", "node's fs.glob lists /*"),
    c("Glob", { pattern: "sub\\..\\..\\*" }, "block", "and climbs through sub/../../*"),
    c("Glob", { pattern: "\\*.txt" }, "block", "an escaped star to ripgrep, /*.txt to node's fs.glob"),
    c("Glob", { pattern: LONG_PATTERN }, "block", "over 4096 characters: no path that long can be looked up"),
    // Near misses: the same shapes, naming nothing outside.
    c("Glob", { pattern: "{a.txt,sub}/*" }, "allow", "braces of plain names"),
    c("Glob", { pattern: "sub/{deep,x}/*.txt" }, "allow", "braces after a prefix inside"),
    c("Glob", { pattern: "**/*.{ts,txt}" }, "allow", "braces in a name"),
    c("find", { pattern: "{sub,a.txt}" }, "allow", "braces alone"),
    c("Glob", { pattern: "@(sub|a.txt)" }, "allow", "an extglob of plain names"),
    c("Glob", { pattern: "!(node_modules)/**" }, "allow", "!( ) of a plain name"),
    c("Glob", { pattern: "notes (draft)/*" }, "allow", "parentheses without a / inside"),
    c("Glob", { pattern: "a~b/*" }, "allow", "a ~ that starts no alternative"),
    c("Glob", { pattern: "{x,y~}/*" }, "allow", "a ~ inside an alternative"),
    c("Glob", { pattern: "sub/\\[x\\]/*" }, "allow", "escaped brackets"),
    c("Glob", { pattern: "**/*.test.ts" }, "allow", "two dots apart"),
    c("Glob", { pattern: "a.*.b" }, "allow", "a * between dots with a name around them"),
    c("Glob", { pattern: ".*" }, "allow", "dotfiles"),
    c("Glob", { pattern: "**/.*" }, "allow", "dotfiles anywhere"),
    c("Glob", { pattern: ".[!.]*" }, "allow", "dotfiles, .. excluded by the class"),
    c("Glob", { pattern: "[.]*" }, "allow", "a class of one dot, once"),
    c("Glob", { pattern: ".?/*" }, "allow", "a ? supplies no dot: no listing holds .."),
    c("Glob", { pattern: "[a-z]*.txt" }, "allow", "a range that leaves . out"),
    c("Glob", { pattern: "{.,x}y/*" }, "allow", "one dot spelled, not two"),
    c("Glob", { pattern: "+(a).txt" }, "allow", "an extglob of a name"),
    // The workspace itself as a pattern.
    c("Glob", { pattern: "/data/ws/**" }, "allow", "the workspace and a trailing /**: Claude Code walks /data/ws"),
    c("Glob", { pattern: "/data/ws/*" }, "allow", "a trailing /*"),
    c("Glob", { pattern: "/data/ws/." }, "allow", "no wildcard, its dirname is the workspace"),
    c(
      "Glob",
      { pattern: "/data/ws" },
      "block",
      "no wildcard: Claude Code walks the dirname /data for names ws, and lists /data/other/ws (measured, baselines/README.md)",
    ),
    c("Glob", { pattern: "/data/ws/" }, "block", "the same with a trailing /"),
    c(
      "Glob",
      { pattern: "../ws" },
      "allow",
      "relative and no wildcard: a name filter under the working directory, whose dirname .. is never searched",
    ),
    c("find", { pattern: "../ws/" }, "allow", "the same through Pi's find"),
    c("Glob", { pattern: "sub/../../ws" }, "allow", "out and back in, lexically and by the real path"),
    c("Glob", { pattern: "../other" }, "block", "relative, no wildcard, but the pattern itself outside"),
    c("Glob", { pattern: "../ws/../other/*" }, "block", "a prefix that leaves again"),
  ],
};

const DATA_ROOT_LINK: GateScene = {
  name: "data-root-link",
  what: "the data root /data is a link to /mnt/disk1; workspace /data/ws, real path /mnt/disk1/ws",
  tree: {
    "/data": { link: "/mnt/disk1" },
    "/mnt/disk1/ws/x.txt": "file",
    "/mnt/data/ws/x.txt": "file",
  },
  policy: policyFor("/data/ws", "/run/home"),
  cases: [
    c("read", { path: "x.txt" }, "allow", "a file inside"),
    c("read", { path: "/data/ws/x.txt" }, "allow", "absolute, as given"),
    c("read", { path: "/mnt/disk1/ws/x.txt" }, "allow", "absolute, by the real path"),
    c("read", { path: "../ws/x.txt" }, "allow", "out and back in through the shared parent name"),
    c(
      "read",
      { path: "../../data/ws/x.txt" },
      "block",
      "inside as given, but from the real path it is /mnt/data/ws/x.txt",
    ),
    c("write", { path: "../../data/ws/new.txt", content: "x" }, "block", "the same for a write"),
    c("Read", { file_path: "../../data/ws/x.txt" }, "block", "the same for Claude Code, had it not made it absolute"),
    c("read", { path: "../../mnt/disk1/ws/x.txt" }, "block", "inside from the real path only: climbs out and back in"),
    c("find", { pattern: "../../data/ws/*" }, "block", "a pattern prefix that leaves by the real path"),
    c("ls", { path: "/mnt/data/ws" }, "block", "the other disk's copy"),
  ],
};

const WORKSPACE_LINK: GateScene = {
  name: "workspace-link",
  what: "the workspace /home/jo/ws is itself a link to /srv/store/jo-ws",
  tree: {
    "/home/jo/ws": { link: "/srv/store/jo-ws" },
    "/home/jo/.ssh/id_ed25519": "file",
    "/srv/store/jo-ws/notes.md": "file",
    "/srv/store/jo-ws/sub/n.md": "file",
    "/srv/store/other/secret.txt": "file",
  },
  policy: policyFor("/home/jo/ws", "/run/home"),
  cases: [
    c("read", { path: "notes.md" }, "allow", "a file inside"),
    c("read", { path: "sub/../notes.md" }, "allow", "a .. that stays inside"),
    c("read", { path: "/home/jo/ws/notes.md" }, "allow", "absolute, through the workspace link"),
    c("read", { path: "/srv/store/jo-ws/notes.md" }, "allow", "absolute, by the real path"),
    c(
      "read",
      { path: "../jo-ws/notes.md" },
      "block",
      "inside from the real path, /home/jo/jo-ws as given: climbs out and back in",
    ),
    c("read", { path: "../ws/notes.md" }, "block", "inside as given, /srv/store/ws from the real path"),
    c("read", { path: "../other/secret.txt" }, "block", "the real path's sibling"),
    c("read", { path: "../.ssh/id_ed25519" }, "block", "the given path's sibling"),
    c("ls", { path: "/home/jo/ws" }, "allow", "the workspace as given"),
    c("ls", { path: "/home/jo" }, "block", "its parent as given"),
    c("Write", { file_path: "/srv/store/jo-ws/new.md", content: "x" }, "allow", "Claude Code writes by the real path"),
    c("Write", { file_path: "/srv/store/other/new.md", content: "x" }, "block", "Claude Code, outside"),
  ],
};

const APOSTROPHE_WORKSPACE: GateScene = {
  name: "apostrophe-workspace",
  what: "workspace /data/jo's/ws beside another spelling of its path, /data/jo\u2019s/ws",
  tree: {
    "/data/jo's/ws/notes.md": "file",
    "/data/jo's/ws/only-here.md": "file",
    "/data/jo\u2019s/ws/notes.md": "file",
    "/data/jo\u2019s/ws/secret.txt": "file",
  },
  policy: policyFor("/data/jo's/ws", "/run/home"),
  cases: [
    c(
      "read",
      { path: "secret.txt" },
      "block",
      "missing here, and Pi's read would open its U+2019 twin beside the workspace",
    ),
    c(
      "read",
      { path: "notes.md" },
      "block",
      "a twin exists outside: refused although Pi would open this one (seed, Limits)",
    ),
    c("Read", { file_path: "/data/jo's/ws/notes.md" }, "block", "the same through Claude Code's Read"),
    c("read", { path: "only-here.md" }, "allow", "no twin outside (positive control)"),
    c("write", { path: "secret.txt", content: "x" }, "allow", "write takes the name as given"),
    c("edit", { path: "notes.md", edits: [] }, "allow", "edit takes the name as given"),
    c("ls", { path: "." }, "allow", "ls takes the name as given"),
  ],
};

const HOME_IN_WORKSPACE: GateScene = {
  name: "home-in-workspace",
  what: "HOME /data/ws/.home lies inside the workspace",
  tree: { "/data/ws/.home/notes.txt": "file", "/data/other/x.txt": "file" },
  policy: policyFor("/data/ws", "/data/ws/.home"),
  cases: [
    c("read", { path: "~/notes.txt" }, "allow", "~ expands to HOME, here inside (positive control for ~)"),
    c("ls", { path: "~" }, "allow", "HOME itself"),
    c("read", { path: "~/../../other/x.txt" }, "block", "climbing out of HOME and the workspace"),
    c("Glob", { pattern: "~/*.txt" }, "allow", "a ~ pattern prefix inside"),
  ],
};

const NO_WORKSPACE: GateScene = {
  name: "no-workspace",
  what: "the workspace /data/ws is a dangling link: no file tool can be checked",
  tree: { "/data/ws": { link: "/data/gone" }, "/data/ws2/a.txt": "file" },
  policy: policyFor("/data/ws", "/run/home"),
  cases: [
    c("read", { path: "a.txt" }, "block", "the workspace does not resolve"),
    c("Write", { file_path: "/data/gone/a.txt", content: "x" }, "block", "nor through its target"),
    c("bash", { command: "true" }, "allow", "a tool without paths still passes on its name"),
    c("mosaic_send_message", { to: "pm" }, "allow", "a typed tool too"),
  ],
};

const LONG = "n".repeat(255);

const LONG_NAMES: GateScene = {
  name: "long-names",
  what: "names at and past Linux's NAME_MAX (255 bytes): the kernel's ENAMETOOLONG is a block",
  tree: { [`/data/ws/${LONG}`]: "file", "/data/ws/sub/a.txt": "file" },
  policy: policyFor("/data/ws", "/run/home"),
  cases: [
    c("read", { path: LONG }, "allow", "a 255-byte name that exists"),
    c("write", { path: `sub/${"m".repeat(255)}`, content: "x" }, "allow", "a new 255-byte name"),
    c("write", { path: `sub/${"m".repeat(256)}`, content: "x" }, "block", "256 bytes: the kernel cannot look it up"),
    c("write", { path: `sub/${"\u00E9".repeat(128)}`, content: "x" }, "block", "128 characters, 256 bytes in UTF-8"),
    c(
      "write",
      { path: `sub/${"\u00E9".repeat(127)}x`, content: "x" },
      "allow",
      "255 bytes in UTF-8 (positive control)",
    ),
    c(
      "Write",
      { file_path: `/data/ws/${"m".repeat(300)}/x.txt`, content: "x" },
      "block",
      "a directory name too long, Claude Code",
    ),
    c(
      "write",
      { path: `gone/${"m".repeat(300)}`, content: "x" },
      "allow",
      "under a missing directory the lookup stops there first, as the kernel's does",
    ),
  ],
};

const NO_TYPED_TOOLS: GateScene = {
  name: "no-typed-tools",
  what: "a policy with two built-in tools and no typed tools: every other name is blocked",
  tree: { "/data/ws/a.txt": "file" },
  policy: { workspace: "/data/ws", home: "/run/home", builtInTools: ["read", "Read"], typedTools: [] },
  cases: [
    c("read", { path: "a.txt" }, "allow", "a built-in tool of the policy (positive control)"),
    c("mcp__mosaic__send_message", { to: "pm", body: "hi" }, "block", "a typed tool's name, with no typed tools"),
    c("send_message", { to: "pm", body: "hi" }, "block", "likewise, Pi's spelling"),
    c("mcp__mosaic__", {}, "block", "the bare prefix"),
    c("bash", { command: "true" }, "block", "a built-in tool the policy does not list"),
    c("Bash", { command: "true" }, "block", "likewise, Claude Code's"),
    c("write", { path: "a.txt", content: "x" }, "block", "a file tool the policy does not list"),
    c("", {}, "block", "the empty name"),
  ],
};

export const GATE_SCENES: readonly GateScene[] = [
  PLAIN,
  GLOB_GROUPS,
  DATA_ROOT_LINK,
  WORKSPACE_LINK,
  APOSTROPHE_WORKSPACE,
  HOME_IN_WORKSPACE,
  NO_WORKSPACE,
  LONG_NAMES,
  NO_TYPED_TOOLS,
];

/**
 * Non-ASCII and control characters as \u escapes, so a golden shows what is invisible; a run of
 * 20 or more of one character as that character and its count, e.g. n{x255}.
 */
export function visible(s: string): string {
  return s
    .replace(/(.)\1{19,}/gsu, (run, ch: string) => `${ch}{x${[...run].length}}`)
    .replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
}

export function renderTree(tree: Tree): string[] {
  const keys = new Set(Object.keys(tree));
  // A numbered chain (c0 -> c1 -> ... -> cN -> target) is one line, not N+1.
  const next = (k: string): string | null => {
    const m = /^(.*\/)([^/]*?)(\d+)$/.exec(k);
    const e = tree[k];
    if (m === null || typeof e !== "object") return null;
    const succ = `${m[2]}${Number(m[3]) + 1}`;
    return e.link === succ && keys.has(m[1] + succ) ? m[1] + succ : null;
  };
  const inChain = new Set<string>();
  for (const k of keys) {
    const n = next(k);
    if (n !== null) inChain.add(n);
  }
  return Object.entries(tree)
    .filter(([k]) => !inChain.has(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k]) => {
      let last = k;
      let links = 0;
      for (let n = next(last); n !== null; n = next(last)) {
        last = n;
        links++;
      }
      const end = tree[last]!;
      const shown = end === "dir" ? "/" : end === "file" ? "" : ` -> ${visible(end.link)}`;
      return links === 0
        ? `# tree: ${visible(k)}${shown}`
        : `# tree: ${visible(k)} -> ... -> ${visible(last.slice(last.lastIndexOf("/") + 1))}${shown} (a chain of ${links + 1} links)`;
    });
}
