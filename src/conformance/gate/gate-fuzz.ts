import {
  globSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmSync,
  rmdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { decide, type Decision } from "../../core/gate/decide.ts";
import type { GatePolicy } from "../../core/gate/policy-shape.ts";
import { isWithin } from "../../core/paths.ts";
import { realFsView } from "../../host/fs-view.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { layOutTree, memoryView, rebaseTarget, type Tree, type TreeEntry } from "../worlds/tree.ts";

/**
 * Generated worlds and tool calls for the gate's property tests and `npm run fuzz:gate`: each
 * world is a tree laid out in memory and on disk; each call is decided over both, and an allowed
 * call is checked against what Pi's own code would open, resolved by the kernel.
 */

/** Names that tempt every rule: Pi's spellings, unicode and ASCII spaces, @, ~, apostrophes. */
export const NAMES = [
  "a",
  "b.txt",
  "it's",
  "it\u2019s",
  "caf\u00E9",
  "cafe\u0301",
  "x y",
  "9 AM.png",
  "9\u202FAM.png",
  "@n",
  "~",
  "d'\u00E9t\u00E9",
  "d\u2019e\u0301te\u0301",
];

type Layout = { why: string; skeleton: Tree; workspace: string; dirs: string[] };
const LAYOUTS: Layout[] = [
  {
    why: "a real workspace",
    skeleton: { "/data/ws/sub": "dir", "/data/other": "dir", "/out": "dir", "/home/s": "dir" },
    workspace: "/data/ws",
    dirs: ["/data/ws", "/data/ws/sub", "/data/other", "/out"],
  },
  {
    why: "the workspace behind a link",
    skeleton: {
      "/data/ws": { link: "/store/ws" },
      "/store/ws/sub": "dir",
      "/data/other": "dir",
      "/out": "dir",
      "/home/s": "dir",
    },
    workspace: "/data/ws",
    dirs: ["/store/ws", "/store/ws/sub", "/data/other", "/out"],
  },
  {
    why: "the data root behind a link, with a twin workspace beside it",
    skeleton: {
      "/data": { link: "/mnt/d1" },
      "/mnt/d1/ws/sub": "dir",
      "/mnt/data/ws": "dir",
      "/mnt/d1/other": "dir",
      "/home/s": "dir",
    },
    workspace: "/data/ws",
    dirs: ["/mnt/d1/ws", "/mnt/d1/ws/sub", "/mnt/data/ws", "/mnt/d1/other"],
  },
];

export type World = { layout: number; tree: Tree; workspace: string; home: string };
export type Call = { tool: string; input: Record<string, unknown> };
export type FuzzCase = { world: World; calls: Call[] };

const name = fc.constantFrom(...NAMES);
const target = fc.oneof(
  fc.constantFrom(
    "/data/ws",
    "/data/ws/sub",
    "/store/ws",
    "/mnt/d1/ws",
    "/out",
    "/data/other",
    "/home/s",
    "/nowhere",
    "/data/ws/gone",
  ),
  fc.tuple(fc.constantFrom("/data/ws/", "/out/", "/data/other/", ""), name).map(([d, n]) => d + n),
  fc.tuple(fc.constantFrom("../", "sub/", "./", "../ws/"), name).map(([d, n]) => d + n),
);
const entry: fc.Arbitrary<TreeEntry> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<TreeEntry>("file") },
  { weight: 1, arbitrary: fc.constant<TreeEntry>("dir") },
  { weight: 4, arbitrary: target.map((t): TreeEntry => ({ link: t })) },
);

export const worldArb: fc.Arbitrary<World> = fc.integer({ min: 0, max: LAYOUTS.length - 1 }).chain((layout) => {
  const L = LAYOUTS[layout]!;
  return fc.array(fc.tuple(fc.constantFrom(...L.dirs), name, entry), { minLength: 1, maxLength: 9 }).map((es) => {
    const tree: Record<string, TreeEntry> = { ...L.skeleton };
    for (const [d, n, e] of es) tree[`${d}/${n}`] = e;
    return { layout, tree, workspace: L.workspace, home: "/home/s" };
  });
});

const seg = fc.oneof(
  { weight: 4, arbitrary: name },
  { weight: 2, arbitrary: fc.constantFrom("..", ".", "sub", "ws", "data", "other", "out", "gone") },
);
const unicodeSpace = fc.constantFrom(" ", "\u00A0", "\u3000", "\u202F", "\u2009");
export const pathArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(
      "",
      "",
      "./",
      "<root>/data/ws/",
      "<root>/mnt/d1/ws/",
      "<root>/store/ws/",
      "<root>/",
      "~/",
      "@",
      "file://<root>/data/ws/",
      "../",
      "@<root>/out/",
    ),
    fc.array(seg, { minLength: 0, maxLength: 4 }),
    unicodeSpace,
  )
  .map(([pre, segs, sp]) => (pre + segs.join("/")).replace(/ /g, sp));

/**
 * Glob tails after a generated prefix: plain wildcards, and the forms the pattern rules refuse
 * (groups holding a "/" or an alternative from / or ~, ".." spelled by escapes, classes or
 * braces, a "\" that node's fs.glob reads as "/") beside near misses that stay allowed.
 */
export const GLOB_TAILS = [
  "*",
  "**/*.txt",
  "*/..",
  "{<root>/out,sub}/*",
  "{<root>/data/other,a}/*",
  "@(<root>/out|sub)/*",
  "{x,\\.\\./\\.\\.}/*",
  "{x,../..}/*",
  "{x,[.][.]/[.][.]}/*",
  "{~,sub}/*",
  "\\.\\./*",
  "\\.\\./\\.\\./*",
  "[.][.]/*",
  "{.,}{.,}/*",
  ".{,x}./*",
  "{..,x}/*",
  "{a,sub}/*",
  "*.{txt,png}",
  "[.]*",
  ".[!.]*",
  "@(a|sub)/*",
  "\\*",
  "sub\\..\\..\\*",
  "<root>\\out\\*",
  "{.,x}y/*",
];

const patternArb: fc.Arbitrary<string> = fc
  .tuple(pathArb, fc.constantFrom(...GLOB_TAILS))
  .map(([p, g]) => `${p === "" ? "" : p + "/"}${g}`);

export const callArb: fc.Arbitrary<Call> = fc.oneof(
  pathArb.map((p) => ({ tool: "read", input: { path: p } })),
  pathArb.map((p) => ({ tool: "write", input: { path: p, content: "x" } })),
  pathArb.map((p) => ({ tool: "ls", input: { path: p } })),
  patternArb.map((p) => ({ tool: "find", input: { pattern: p } })),
  patternArb.map((p) => ({ tool: "Glob", input: { pattern: p } })),
  pathArb.map((p) => ({ tool: "Read", input: { file_path: p } })),
);

/** A world and some calls in it; more calls per world spend less time laying trees out. */
export function caseArb(calls: { min: number; max: number }): fc.Arbitrary<FuzzCase> {
  return fc.record({ world: worldArb, calls: fc.array(callArb, { minLength: calls.min, maxLength: calls.max }) });
}

export function policyOf(world: World, root: string): GatePolicy {
  return {
    workspace: root + world.workspace,
    home: root + world.home,
    builtInTools: ["read", "write", "ls", "find", "Read", "Glob"],
    typedTools: [],
  };
}

type PiPaths = {
  resolveToCwd: (p: string, cwd: string) => string;
  resolveReadPath: (p: string, cwd: string) => string;
};
let pi: PiPaths | undefined;
/** Pi 0.85.1's own path functions (not in its exports map, so by file). */
export async function loadPiPaths(): Promise<PiPaths> {
  pi ??= (await import(
    pathToFileURL(`${REPO_ROOT}/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/path-utils.js`).href
  )) as PiPaths;
  return pi;
}

/**
 * What the tool would open, by Pi's own code (Claude Code's Read: the name as given, made
 * absolute against the real working directory). HOME must be the session's home (Pi reads it).
 */
export function opensWhat(call: Call, cwd: string, piPaths: PiPaths): string {
  const i = call.input;
  switch (call.tool) {
    case "read":
      return piPaths.resolveReadPath(i.path as string, cwd);
    case "write":
    case "ls":
      return piPaths.resolveToCwd(i.path as string, cwd);
    case "find":
    case "Glob":
      return cwd;
    default:
      return resolvePath(cwd, i.file_path as string);
  }
}

/**
 * The first path node's fs.glob expands a pattern to, searched from cwd, that lies outside the
 * workspace (as given or real) by its name alone, or null. A glob library of that kind opens
 * every brace alternative and unescaped name as a path; links it follows from inside are the
 * Limits' business (docs/gate.md), so the check is lexical.
 */
export function globEscape(pattern: string, cwd: string, workspaces: readonly string[]): string | null {
  let found: string[];
  try {
    found = globSync(pattern, { cwd });
  } catch {
    return null;
  }
  for (const f of found) {
    const abs = resolvePath(cwd, f);
    if (!workspaces.some((w) => isWithin(abs, w))) return abs;
  }
  return null;
}

/** Why the kernel says a path is not a safe place inside wsReal (outside, dangling, a loop), or null. */
export function kernelViolation(p: string, wsReal: string): string | null {
  for (let cur = p; ; cur = dirname(cur)) {
    try {
      lstatSync(cur);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code === "ENOENT" || code === "ENOTDIR") && cur !== "/") continue;
      return `${cur}: ${code}`;
    }
    let real: string;
    try {
      real = realpathSync.native(cur);
    } catch (e) {
      return `${cur} exists as a name but does not resolve (${(e as NodeJS.ErrnoException).code}): a dangling link or a loop`;
    }
    // Under a file nothing can be created: harmless.
    if (cur !== p && !statSync(real).isDirectory()) return null;
    return isWithin(real, wsReal)
      ? null
      : `${p} resolves by the kernel to ${real}${cur === p ? "" : " (its nearest existing ancestor)"}, outside ${wsReal}`;
  }
}

export type CaseFailure = { call: Call; problem: string };

/** The call with its <root> placeholders (absolute paths in the tree's own namespace) filled in. */
export function rootCall(call: Call, root: string): Call {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(call.input)) input[k] = typeof v === "string" ? v.split("<root>").join(root) : v;
  return { tool: call.tool, input };
}

export type CaseResult = { failure: CaseFailure | null; allowed: number; blocked: number };

/**
 * Worlds laid out on disk under base, one skeleton per layout kept across worlds: a world writes
 * only its own entries (direct children of the skeleton's directories) and removes them after,
 * then checks that each directory it touched holds the skeleton's children again. The disk a call
 * is decided on is the world's tree exactly, as a fresh layout would be, for a fraction of the
 * system calls (laying out and removing whole trees was most of a fuzz run's time).
 */
export class WorldDisk {
  private readonly base: string;
  private readonly ready = new Set<number>();
  constructor(base: string) {
    this.base = base;
  }

  /** Lays the world out and returns its root and the undo, which leaves the skeleton as it was. */
  place(world: World): { root: string; clear: () => void } {
    const L = LAYOUTS[world.layout]!;
    const root = `${this.base}/L${world.layout}`;
    if (!this.ready.has(world.layout)) {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(root, { recursive: true });
      layOutTree(L.skeleton, root);
      this.ready.add(world.layout);
    }
    const own = Object.entries(world.tree).filter(([k]) => !(k in L.skeleton));
    const made: [string, TreeEntry][] = [];
    const clear = () => {
      for (const [k, e] of made.reverse()) (e === "dir" ? rmdirSync : unlinkSync)(root + k);
      for (const d of new Set(own.map(([k]) => k.slice(0, k.lastIndexOf("/"))))) {
        const left = readdirSync(root + d).filter((n) => !(`${d}/${n}` in L.skeleton));
        if (left.length > 0)
          throw new Error(`world disk: ${root + d} still holds ${left.join(", ")} after the world was cleared`);
      }
    };
    try {
      for (const [k, e] of own) {
        const parent = k.slice(0, k.lastIndexOf("/"));
        if (!L.dirs.includes(parent)) throw new Error(`world entry ${k} is not a direct child of a skeleton directory`);
        const p = root + k;
        if (e === "dir") mkdirSync(p);
        else if (e === "file") writeFileSync(p, k);
        else symlinkSync(rebaseTarget(e.link, root), p);
        made.push([k, e]);
      }
    } catch (err) {
      clear();
      throw err;
    }
    return { root, clear };
  }
}

/** Lays the world out (on a WorldDisk, or under a fresh root), decides every call over memory and disk, checks the allowed ones. */
export function checkCase(c: FuzzCase, where: string | WorldDisk, piPaths: PiPaths): CaseResult {
  const disk = typeof where === "string" ? new WorldDisk(where) : where;
  const { root, clear } = disk.place(c.world);
  try {
    return checkCalls(c, root, piPaths);
  } finally {
    clear();
    if (typeof where === "string") rmSync(where, { recursive: true, force: true });
  }
}

/** Decides every call of the case over memory and the world laid out under root. */
function checkCalls(c: FuzzCase, root: string, piPaths: PiPaths): CaseResult {
  let allowed = 0;
  let blocked = 0;
  const fail = (failure: CaseFailure): CaseResult => ({ failure, allowed, blocked });
  const policy = policyOf(c.world, root);
  const mem = memoryView(c.world.tree, root);
  const real = realFsView();
  const wsReal = realpathSync.native(policy.workspace);
  const savedHome = process.env.HOME;
  process.env.HOME = policy.home;
  try {
    for (const unrooted of c.calls) {
      const call = rootCall(unrooted, root);
      const dMem: Decision = decide(policy, call.tool, call.input, mem);
      const dReal: Decision = decide(policy, call.tool, call.input, real);
      if (JSON.stringify(dMem) !== JSON.stringify(dReal))
        return fail({ call, problem: `memory says ${JSON.stringify(dMem)}, the disk says ${JSON.stringify(dReal)}` });
      if (!dReal.allow) {
        blocked++;
        continue;
      }
      allowed++;
      const opened = opensWhat(call, wsReal, piPaths);
      const v = kernelViolation(opened, wsReal);
      if (v !== null) return fail({ call, problem: `false allow: ${v}` });
      if (typeof call.input.pattern !== "string") continue;
      const out = globEscape(call.input.pattern, wsReal, [wsReal, policy.workspace]);
      if (out !== null) return fail({ call, problem: `false allow: node's fs.glob expands it to ${out}` });
    }
  } finally {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
  }
  return { failure: null, allowed, blocked };
}
