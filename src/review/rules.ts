// The rules that say what a golden change does to confinement. Each row selects changes by fact
// type, operation, field and place, and gives its verdict and why. The first row that matches a
// change classifies it; a change no row matches is unknown. Rows are ordered specific before general.
import { MODEL_URL } from "../core/network/egress.ts";
import { CREDENTIAL_PLACEHOLDER } from "../core/network/placeholder.ts";
import { isWithin } from "../core/paths.ts";
import { factOf, type Change, type Fact, type Risk } from "./model.ts";
import { BWRAP_OPTIONS, optionOf, type BwrapOption } from "../core/sandbox/bwrap-options.ts";
import { decisionOf, namedChecks } from "./parse-gate.ts";
import { egressOf } from "./parse-egress.ts";
import { actionWidth, isDenyReturn, landingOf, type Jump } from "./parse-seccomp.ts";

/** Both revisions' facts of the golden, for rules that read a change against its neighbours. */
export type Context = { before: readonly Fact[]; after: readonly Fact[] };

export type Rule = {
  id: string;
  verdict: Risk;
  why: string;
  /** Fact types the rule reads. */
  types: readonly string[];
  op: Change["op"] | readonly Change["op"][];
  /** For `changed`: the fields it reads. */
  fields?: readonly string[];
  /** The fact's key, or its place (`at`), must match. */
  key?: RegExp;
  at?: RegExp;
  when?: (c: Change, ctx: Context) => boolean;
};

// ---- helpers the rows read ------------------------------------------------------------------

const was = (c: Change, field: string): string => (c.op === "added" ? "" : (c.before.fields[field] ?? ""));
const now = (c: Change, field: string): string => (c.op === "removed" ? "" : (c.after.fields[field] ?? ""));
const fieldOf = (c: Change): string => (c.op === "changed" ? c.field : "");

/** How much of the host a mount shows: private, an empty stand-in, a tmpfs or a link 0, read-only 1, writable 2, devices 3. */
const MODE_WIDTH: Readonly<Record<string, number>> = {
  private: 0,
  symlink: 0,
  "ro-empty": 0,
  tmpfs: 0,
  ro: 1,
  "ro-try": 1,
  rw: 2,
};
export function mountWidth(f: Fact | undefined): number {
  if (!f) return -1;
  if (f.type === "bind") return MODE_WIDTH[f.fields.mode ?? ""] ?? -1;
  return optionOf(f.fields.option ?? "")?.mount?.width ?? -1;
}
const MOUNT_TYPES = ["bind", "bwrap-mount"] as const;
const mountsOf = (facts: readonly Fact[], type: string) => facts.filter((f) => f.type === type);
const findMount = (facts: readonly Fact[], type: string, key: string) =>
  facts.find((f) => f.type === type && f.key === key);

/** A read-only mount removed from under a writable one that stays: the path becomes writable. */
function uncoversWritable(c: Change, ctx: Context): boolean {
  if (c.op !== "removed") return false;
  const f = c.before;
  if (mountWidth(f) !== 1) return false;
  return mountsOf(ctx.after, f.type).some((p) => p.key !== f.key && isWithin(f.key, p.key) && mountWidth(p) >= 2);
}

/**
 * How the later mount that covers this one (now, or before when it no longer does) compares with
 * it: a wider cover takes the narrower mode away, a narrower one takes reach away.
 */
function compareCover(c: Change, ctx: Context): "wider" | "narrower" | "same" | null {
  if (c.op !== "changed" || c.field !== "shadowedBy") return null;
  const nowCovered = c.after.fields.shadowedBy ?? "";
  const side = nowCovered ? ctx.after : ctx.before;
  const cover = findMount(side, c.after.type, nowCovered || (c.before.fields.shadowedBy ?? ""));
  const self = mountWidth(nowCovered ? c.after : c.before);
  const other = mountWidth(cover);
  if (self < 0 || other < 0) return null;
  return other > self ? "wider" : other < self ? "narrower" : "same";
}
const newlyCovered = (c: Change) => c.op === "changed" && was(c, "shadowedBy") === "" && now(c, "shadowedBy") !== "";
const newlyUncovered = (c: Change) => c.op === "changed" && was(c, "shadowedBy") !== "" && now(c, "shadowedBy") === "";

const widened = (c: Change) =>
  c.op === "changed" && mountWidth(c.after) > mountWidth(c.before) && mountWidth(c.before) >= 0;
const narrowed = (c: Change) =>
  c.op === "changed" && mountWidth(c.after) < mountWidth(c.before) && mountWidth(c.after) >= 0;

/** The option a listed tool belongs to is on both sides: the member's own change is the news. */
const listKept = (c: Change, ctx: Context) => {
  const f = c.op === "removed" ? c.before : c.op === "added" ? c.after : c.after;
  return (
    ctx.before.some((o) => o.type === "adapter-option" && o.key === f.at) &&
    ctx.after.some((o) => o.type === "adapter-option" && o.key === f.at)
  );
};

/** A JSON fact whose parent container is new (or gone) on its side: it comes with its entry. */
function comesWithEntry(c: Change, ctx: Context): boolean {
  if (c.op !== "added" && c.op !== "removed") return false;
  const f = c.op === "added" ? c.after : c.before;
  const mine = c.op === "added" ? ctx.after : ctx.before;
  const other = c.op === "added" ? ctx.before : ctx.after;
  const parents = mine.filter(
    (p) =>
      p.type === f.type.replace(/-member$/, "") &&
      p.key !== f.key &&
      p.key !== "" &&
      ((f.type.endsWith("-member") && f.at === p.key) ||
        f.key.startsWith(p.key + ".") ||
        f.key.startsWith(p.key + "[")),
  );
  const otherKeys = new Set(other.filter((o) => o.type === f.type.replace(/-member$/, "")).map((o) => o.key));
  return parents.some((p) => !otherKeys.has(p.key));
}

const isToolList = (f: Fact) =>
  f.type === "adapter-listed" || f.type === "tool" || /^(builtInTools|typedTools|builtInTools\(all\))$/.test(f.at);
const isEnvRow = (f: Fact) => f.type === "adapter-env" || f.at === "adapterEnv";

/** A check the before reason names that the after reason does not. */
const lostCheck = (before: string, after: string) => {
  const now = new Set(namedChecks(after));
  return namedChecks(before).some((c) => !now.has(c)); // safety: review-check-gained-as-lost
};

const varCount = (s: string) =>
  s
    .split("+")
    .map((v) => v.trim())
    .filter(Boolean).length;

const REVIEW_RANK: Readonly<Record<string, number>> = { weakens: 3, unknown: 2, strengthens: 1, neutral: 0 };
const reviewRank = (c: Change, side: "before" | "after"): number => {
  if (side === "before") return c.op === "added" ? -1 : (REVIEW_RANK[c.before.fields.verdict ?? ""] ?? -1);
  return c.op === "removed" ? -1 : (REVIEW_RANK[c.after.fields.verdict ?? ""] ?? -1);
};

/** Whether a listed instruction's jump lands, in one revision, on a return that stops the call. */
const JUMPS: readonly Jump[] = ["jt", "jf"];
const landsOnDeny = (f: Fact, field: string, facts: readonly Fact[]) =>
  f.fields[field] !== undefined && isDenyReturn(landingOf(f, f.fields[field]!, facts));
const jumpLeftDeny = (c: Change, ctx: Context) =>
  c.op === "changed" && landsOnDeny(c.before, c.field, ctx.before) && !landsOnDeny(c.after, c.field, ctx.after);
const jumpReachedDeny = (c: Change, ctx: Context) =>
  c.op === "changed" && !landsOnDeny(c.before, c.field, ctx.before) && landsOnDeny(c.after, c.field, ctx.after);
/** A return that lets the call through. */
const isAllowReturn = (f: Fact | undefined) =>
  f !== undefined && f.fields.op === "ret" && actionWidth((f.fields.args ?? "").replace(/^#/, "")) >= 3;
const landsOnAllow = (f: Fact, field: string, facts: readonly Fact[]) =>
  f.fields[field] !== undefined && isAllowReturn(landingOf(f, f.fields[field]!, facts));
/** A jump into a block that checks a call's arguments (its family, flags or request): not next, not a return. */
const entersArgCheck = (f: Fact, facts: readonly Fact[]) =>
  f.fields.op === "jeq" &&
  f.fields.jt !== undefined &&
  f.fields.jt !== "next" &&
  (() => {
    const t = landingOf(f, f.fields.jt!, facts);
    return t !== undefined && t.fields.op !== "ret";
  })();
/** A check that sends some calls to a kill or an errno: removing it lets them on. */
const sendsToDeny = (f: Fact, facts: readonly Fact[]) => JUMPS.some((j) => landsOnDeny(f, j, facts));

/** The bits of a mask (`0x7e020080`) and the names of a flag list, as sets to compare. */
const maskBits = (v: string): bigint => (/^(0x[0-9a-f]+|\d+)$/i.test(v.trim()) ? BigInt(v.trim()) : -1n);
const words = (v: string) => new Set(v.split(/\s+/).filter(Boolean));
/** -1 when a flag mask or flag list lost a member, 1 when it gained one and lost none, else 0 (or not a mask). */
function flagChange(c: Change): -1 | 0 | 1 {
  if (c.op !== "changed") return 0;
  const b = was(c, c.field);
  const a = now(c, c.field);
  if (c.field === "args") {
    const [x, y] = [maskBits(b), maskBits(a)];
    if (x < 0n || y < 0n) return 0;
    return (x & ~y) !== 0n ? -1 : (y & ~x) !== 0n ? 1 : 0;
  }
  const [x, y] = [words(b), words(a)];
  return [...x].some((w) => !y.has(w)) ? -1 : [...y].some((w) => !x.has(w)) ? 1 : 0;
}
const isMaskTest = (c: Change) => c.op === "changed" && c.before.fields.op === "jset" && c.after.fields.op === "jset";

/** A tmpfs's `--size` in bytes; none is no bound. */
const sizeOf = (v: string) => (/^\d+$/.test(v) ? Number(v) : Infinity);
/** The per-process memory bound of a `prlimit --data=N` wrapper; none is no bound. */
const dataOf = (v: string) => {
  const m = /--data[= ](\d+)/.exec(v);
  return m ? Number(m[1]) : Infinity;
};
/** A uid or gid as setpriv names it; none (no drop) is the caller's, which for a root caller is 0. */
const idOf = (v: string) => (/^\d+$/.test(v) ? Number(v) : 0);
/** A mount with a size bound removed: what it covered falls back to the mount under it, unbounded. */
const boundedRemoved = (c: Change) => c.op === "removed" && (c.before.fields.size ?? "") !== "";
/** A read-only mount removed from inside the session's own /proc or /dev: the kernel's writable files there come back. */
const kernelCoverRemoved = (c: Change, ctx: Context) =>
  c.op === "removed" &&
  mountWidth(c.before) === 1 &&
  mountsOf(ctx.after, c.before.type).some(
    (p) =>
      p.key !== c.before.key &&
      isWithin(c.before.key, p.key) &&
      (p.fields.mode === "private" || p.fields.option === "--proc" || p.fields.option === "--dev"),
  );

/** The task bound of a `prlimit --nproc=N --` wrapper; none is no bound. */
const nprocOf = (v: string) => {
  const m = /--nproc[= ](\d+)/.exec(v);
  return m ? Number(m[1]) : Infinity;
};

/**
 * The execute-only copy of node the runner runs on (`runner-node.ts`, mode 0111), as the argv
 * golden names it. A binary its user may not read makes its process not dumpable.
 */
export const EXECUTE_ONLY_NODE = /\/runner-node\/node-[^/\s]+$/;

/** A mount inside a writable mount the after side keeps: what it covered falls back to that mount. */
const insideKeptWritable = (f: Fact, ctx: Context) =>
  mountsOf(ctx.after, f.type).some((p) => p.key !== f.key && isWithin(f.key, p.key) && mountWidth(p) >= 2);
/** An empty stand-in, a private tmpfs or a link removed from inside a writable tree. */
const standInRemoved = (c: Change, ctx: Context) =>
  c.op === "removed" && mountWidth(c.before) === 0 && insideKeptWritable(c.before, ctx);
/** A writable bind of a path onto itself removed from inside a writable tree: it only made the path a mount point. */
const mountPointRemoved = (c: Change, ctx: Context) =>
  c.op === "removed" &&
  mountWidth(c.before) === 2 &&
  c.before.fields.source === c.before.key &&
  insideKeptWritable(c.before, ctx);

/** A decision line `<request> → refuse 403: why · admitted by g` or `<request> → pass`: the request, and pass or refuse. */
const requestOf = (f: Fact) => f.text.split(" → ")[0] ?? "";
const outcomeOf = (f: Fact) => /^(refuse|pass)\b/.exec(f.text.split(" → ")[1] ?? "")?.[1] ?? "";
const DECISION_TYPES = ["model-decision", "proxy-limit"] as const;
/** Whether the other revision decides the same request `outcome`. */
const decidedThere = (f: Fact, facts: readonly Fact[], outcome: string) =>
  facts.some((o) => o.type === f.type && requestOf(o) === requestOf(f) && outcomeOf(o) === outcome);
/** A limit row `name | number | why` of a bounds table, as name and number. */
const limitRow = (f: Fact) => {
  const m = /^(\w+) \| (\d+) \|/.exec(f.text);
  return m ? { name: m[1]!, value: Number(m[2]) } : null;
};
/** -1 when the other revision bounds the same limit lower, 1 when higher, 0 when equal or absent. */
const limitThere = (f: Fact, facts: readonly Fact[]): number => {
  const mine = limitRow(f);
  const other = facts.map(limitRow).find((r) => r !== null && r.name === mine?.name);
  return mine === null || other === undefined || other === null ? 0 : Math.sign(other.value - mine.value);
};
/** What an end-of-session check line is about: a finding's kind and path, or a remedy's action and path. */
const workspaceSubject = (f: Fact) => f.text.split(" | ").slice(0, 2).join(" | ").split(" -> ")[0]!;
const isWorkspaceEntry = (f: Fact) => f.text !== "findings:" && f.text !== "remedies:";
const keptThere = (f: Fact, facts: readonly Fact[]) =>
  facts.some((o) => o.type === f.type && o.text !== f.text && workspaceSubject(o) === workspaceSubject(f));
/** 1 when a session.json bound loosens (a number grows, a `true` switch turns off), -1 when it tightens, else 0. */
const boundChange = (c: Change): number => {
  const [b, a] = [was(c, "value"), now(c, "value")];
  if (b === "true" && a === "false") return 1;
  if (b === "false" && a === "true") return -1;
  if (/^\d+$/.test(b) && /^\d+$/.test(a)) return Math.sign(Number(a) - Number(b));
  return 0;
};

// ---- the tables the rows are built from ------------------------------------------------------

/** Each name of `names` and nothing else. */
const exactly = (names: readonly string[]) => new RegExp(`^(${names.join("|")})$`);

/** The option table's rows grouped by what `of` says of them (rows it says nothing of left out), in table order. */
function groupOptions<T extends { why: string }>(of: (o: BwrapOption) => T | undefined): Array<T & { key: RegExp }> {
  const groups = new Map<string, { value: T; names: string[] }>();
  for (const [name, o] of Object.entries(BWRAP_OPTIONS)) {
    const v = of(o);
    if (v === undefined) continue;
    const id = JSON.stringify(v);
    if (!groups.has(id)) groups.set(id, { value: v, names: [] });
    groups.get(id)!.names.push(name);
  }
  return [...groups.values()].map((g) => ({ ...g.value, key: exactly(g.names) }));
}

/** bwrap options whose presence confines (core's option table); removing one weakens, adding one strengthens. */
export const BWRAP_HARDENING: readonly { key: RegExp; id: string; why: string }[] = groupOptions((o) =>
  o.confines === undefined ? undefined : { id: o.confines.rule, why: o.confines.why },
);

/** bwrap options whose presence widens what the session can do or outlive (core's option table). */
export const BWRAP_WIDENING: readonly { key: RegExp; why: string }[] = groupOptions((o) =>
  o.widens === undefined ? undefined : { why: o.widens },
);

/** Pi and Claude Code options whose presence confines the harness. */
export const ADAPTER_HARDENING: readonly { key: RegExp; id: string; why: string }[] = [
  {
    key: /^--restricted$/,
    id: "restricted-removed",
    why: "Claude Code loads memory files again: CLAUDE.md and auto-memory reach the model",
  },
  {
    key: /^--strict-mcp-config$/,
    id: "strict-mcp-removed",
    why: "MCP servers configured elsewhere load beside the bundle's",
  },
  {
    key: /^--setting-sources$/,
    id: "setting-sources-removed",
    why: "user, project and local settings load: their hooks, permissions and MCP servers",
  },
  {
    key: /^(--tools|--allowedTools|--allowed-tools)$/,
    id: "tool-limit-removed",
    why: "without the list the harness offers every built-in tool, not the role's limit",
  },
  {
    key: /^(-e|--extension)$/,
    id: "gate-extension-removed",
    why: "Pi runs without the gate's extension: no file call is checked",
  },
  {
    key: /^(--settings|--mcp-config)$/,
    id: "gate-config-removed",
    why: "Claude Code starts without the bundle's settings (the gate hook) or its MCP config",
  },
  {
    key: /^(--mode|--output-format)$/,
    id: "event-stream-removed",
    why: "the harness prints no event stream (Pi's --mode json, Claude Code's --output-format stream-json): the runner's tripwire cannot see which tool calls completed",
  },
  {
    key: /^(-nc|-ns|-ne|-np|-na|--no-session|--offline)$/,
    id: "pi-isolation-removed",
    why: "Pi loads context files, skills, extensions, prompt templates or project files from the workspace, keeps a session, or goes online",
  },
];

/** Options that open the harness up when they appear. */
export const ADAPTER_WIDENING: readonly { key: RegExp; why: string }[] = [
  {
    key: /^(--bare|--dangerously-skip-permissions|--allow-dangerously-skip-permissions|--add-dir|--plugin-dir|-e#\d+|--extension#\d+|--mcp-config#\d+|--settings#\d+)$/,
    why: "--bare skips every hook, the skip-permissions flags every check, --add-dir and --plugin-dir reach beyond the workspace, a second extension or config loads code beside the gate's",
  },
];

/** Variables of the adapter's environment that hold the session to its bundle, offline and gated. */
export const PROTECTIVE_ENV =
  /^(PI_OFFLINE|CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC|MCP_CONNECTION_NONBLOCKING|MOSAIC_POLICY_FILE|MOSAIC_EXTENSIONS|MOSAIC_CLAUDE_SETTINGS|MOSAIC_CLAUDE_MCP_CONFIG|MOSAIC_TOOLS|MOSAIC_TOOLS_FILE|MOSAIC_TURN_MARKER|PI_CODING_AGENT_DIR)$/;

/** Fact types whose order means nothing. */
const UNORDERED = [
  "env-allow",
  "founder-env",
  "credential-set",
  "tool",
  "runner-exit",
  "spec-error",
  "exit-map",
  "gate-call",
  "gate-tree",
  "adapter-option",
  "adapter-listed",
  "adapter-env",
  "bwrap-option",
  "bwrap-setenv",
  "bwrap-unsetenv",
  "route",
  "route-member",
  "module",
  "module-member",
  "policy",
  "policy-member",
  "settings",
  "settings-member",
  "mcp",
  "mcp-member",
  "tools",
  "tools-member",
  "manifest",
  "manifest-member",
  "seccomp-deny",
  "refusal",
  "egress-allow",
  "network-mode",
  "egress-call",
  "session-env",
  "session-file",
  "diagnosis",
];

const hardeningRows = (): Rule[] =>
  BWRAP_HARDENING.map(
    (h): Rule => ({ id: h.id, verdict: "weakens", why: h.why, types: ["bwrap-option"], op: "removed", key: h.key }),
  );
const adapterHardeningRows = (): Rule[] =>
  ADAPTER_HARDENING.map(
    (h): Rule => ({ id: h.id, verdict: "weakens", why: h.why, types: ["adapter-option"], op: "removed", key: h.key }),
  );

/** session.json's tripwire is an object (on), not null or absent (off). */
const tripwireOn = (facts: readonly Fact[]) =>
  facts.some((f) => f.type === "session-file" && f.key === "tripwire" && f.fields.value === "{…}");

// ---- the rules -------------------------------------------------------------------------------

export const RULES: readonly Rule[] = [
  // Whole goldens and headers.
  {
    id: "golden-removed",
    verdict: "weakens",
    why: "a case no longer pinned by a golden: nothing shows what it did is still done",
    types: ["golden"],
    op: "removed",
  },
  {
    id: "header-reworded",
    verdict: "neutral",
    why: "the header says what a golden shows; it decides nothing",
    types: ["header"],
    op: "changed",
  },

  // Mounts: the bind table and bwrap's mount options.
  {
    id: "ro-over-rw-removed",
    verdict: "weakens",
    why: "a read-only mount over a writable one is gone: the path under it (bundle/, session.json) is writable now",
    types: MOUNT_TYPES,
    op: "removed",
    when: uncoversWritable,
  },
  {
    id: "stand-in-over-rw-removed",
    verdict: "weakens",
    why: "an empty read-only stand-in or a private tmpfs inside a writable mount is gone: the session can create the path in the writable tree (.claude, .pi, .git/modules, HOME on the host's disk), and the host later loads what it finds there",
    types: MOUNT_TYPES,
    op: "removed",
    when: standInRemoved,
  },
  {
    id: "mount-point-removed",
    verdict: "weakens",
    why: "a writable path bound onto itself inside a writable tree only made it a mount point, which cannot be renamed or removed: without it .git can be moved aside and replaced by a repository with hooks of the session's own",
    types: MOUNT_TYPES,
    op: "removed",
    when: mountPointRemoved,
  },
  {
    id: "pinned-bind-removed",
    verdict: "weakens",
    why: "a host file bound read-only at another path (the pinned Claude Code or node binary) is gone: the session runs whatever it finds under that name, not the measured version",
    types: MOUNT_TYPES,
    op: "removed",
    when: (c) =>
      c.op === "removed" &&
      mountWidth(c.before) === 1 &&
      c.before.fields.source !== "" &&
      c.before.fields.source !== c.before.key,
  },
  {
    id: "bounded-tmpfs-removed",
    verdict: "weakens",
    why: "a tmpfs with a --size is gone: its path falls back to the mount under it, which holds as much as the host lets it (/dev/shm on --dev's tmpfs: half the host's RAM)",
    types: MOUNT_TYPES,
    op: "removed",
    when: boundedRemoved,
  },
  {
    id: "kernel-cover-removed",
    verdict: "weakens",
    why: "a read-only bind over part of the session's own /proc or /dev is gone: /proc/sys is writable again, and a kuid 0 session writes the host's sysctls (kernel.core_pattern runs a program as root)",
    types: MOUNT_TYPES,
    op: "removed",
    when: kernelCoverRemoved,
  },
  {
    id: "mount-removed",
    verdict: "strengthens",
    why: "a mount gone: the session sees less of the host",
    types: MOUNT_TYPES,
    op: "removed",
  },
  {
    id: "mount-added",
    verdict: "weakens",
    why: "a new mount shows the session another path of the host, until shown otherwise",
    types: MOUNT_TYPES,
    op: "added",
  },
  {
    id: "mount-widened",
    verdict: "weakens",
    why: "a wider mode at the same mount point: ro to rw lets the session write the host's files",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["mode", "option"],
    when: widened,
  },
  {
    id: "mount-narrowed",
    verdict: "strengthens",
    why: "a narrower mode at the same mount point: the session may do less there",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["mode", "option"],
    when: narrowed,
  },
  {
    id: "mount-source-changed",
    verdict: "weakens",
    why: "the same mount point shows another host path: check the new one holds nothing the session must not see",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["source"],
  },
  {
    id: "tmpfs-bound-loosened",
    verdict: "weakens",
    why: "a tmpfs without its --size (or with a larger one) grows until the host's memory runs out: the session can fill the host's RAM through /tmp or HOME",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["size"],
    when: (c) => sizeOf(now(c, "size")) > sizeOf(was(c, "size")),
  },
  {
    id: "tmpfs-bound-tightened",
    verdict: "strengthens",
    why: "a tmpfs gets a --size, or a smaller one: the session can fill less of the host's memory",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["size"],
    when: (c) => sizeOf(now(c, "size")) < sizeOf(was(c, "size")),
  },
  {
    id: "mount-covered-by-wider",
    verdict: "weakens",
    why: "a later, wider mount now covers this one, so its narrower mode no longer holds",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["shadowedBy"],
    when: (c, x) => newlyCovered(c) && compareCover(c, x) === "wider",
  },
  {
    id: "mount-covered-by-narrower",
    verdict: "strengthens",
    why: "a later, narrower mount now covers this one: less of it is reachable",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["shadowedBy"],
    when: (c, x) => newlyCovered(c) && compareCover(c, x) === "narrower",
  },
  {
    id: "mount-uncovered-wider",
    verdict: "weakens",
    why: "no later mount covers this one now, and it is wider than the one that did",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["shadowedBy"],
    when: (c, x) => newlyUncovered(c) && compareCover(c, x) === "narrower",
  },
  {
    id: "mount-uncovered-narrower",
    verdict: "strengthens",
    why: "no later mount covers this one now, and it is narrower than the one that did",
    types: MOUNT_TYPES,
    op: "changed",
    fields: ["shadowedBy"],
    when: (c, x) => newlyUncovered(c) && compareCover(c, x) === "wider",
  },
  {
    id: "mount-after-remount",
    verdict: "weakens",
    why: "a mount now comes after --remount-ro /: the read-only root must be the last mount step (the invariant beside the argv golden)",
    types: ["bwrap-mount"],
    op: "changed",
    fields: ["afterRemount"],
    when: (c) => now(c, "afterRemount") === "yes",
  },
  {
    id: "mount-before-remount",
    verdict: "strengthens",
    why: "a mount moved back before --remount-ro /",
    types: ["bwrap-mount"],
    op: "changed",
    fields: ["afterRemount"],
    when: (c) => now(c, "afterRemount") === "no",
  },
  {
    id: "why-reworded",
    verdict: "neutral",
    why: "a reason reworded; the row's values are unchanged",
    types: [
      "bind",
      "env-allow",
      "founder-env",
      "credential-set",
      "refusal-code",
      "runner-exit",
      "tool",
      "seccomp-deny",
      "egress-allow",
      "network-mode",
    ],
    op: "changed",
    fields: ["why", "meaning", "description"],
  },
  {
    id: "mount-reordered",
    verdict: "neutral",
    why: "mount order matters only where mounts overlap, and an overlap that changes shows as covered or uncovered",
    types: MOUNT_TYPES,
    op: "moved",
  },

  // bwrap's other options.
  {
    id: "remount-ro-removed",
    verdict: "weakens",
    why: "the root is no longer read-only: the session can create files anywhere outside its binds",
    types: ["bwrap-remount"],
    op: "removed",
    key: /^\/$/,
  },
  {
    id: "remount-ro-added",
    verdict: "strengthens",
    why: "the root is remounted read-only",
    types: ["bwrap-remount"],
    op: "added",
    key: /^\/$/,
  },
  ...hardeningRows(),
  {
    id: "hardening-added",
    verdict: "strengthens",
    why: "a namespace, --cap-drop, --disable-userns, --new-session or a seccomp filter added",
    types: ["bwrap-option"],
    op: "added",
    when: (c) => BWRAP_HARDENING.some((h) => h.key.test(factKey(c))),
  },
  {
    id: "cap-drop-narrowed",
    verdict: "weakens",
    why: "--cap-drop no longer drops ALL: the capabilities it leaves stay with a root caller",
    types: ["bwrap-option"],
    op: "changed",
    fields: ["operands"],
    key: /^--cap-drop/,
    when: (c) => was(c, "operands") === "ALL",
  },
  {
    id: "bwrap-widening-added",
    verdict: "weakens",
    why: BWRAP_WIDENING.map((w) => w.why).join("; "),
    types: ["bwrap-option"],
    op: "added",
    when: (c) => BWRAP_WIDENING.some((w) => w.key.test(factKey(c))),
  },
  {
    id: "bwrap-widening-removed",
    verdict: "strengthens",
    why: "an option that widened the sandbox (--die-with-parent, --share-net, --cap-add, a joined namespace) is gone",
    types: ["bwrap-option"],
    op: "removed",
    when: (c) => BWRAP_WIDENING.some((w) => w.key.test(factKey(c))),
  },
  {
    id: "sandbox-env-removed",
    verdict: "weakens",
    why: "without its --setenv the session inherits the host's value: the host's HOME (~/.ssh, ~/.config) or TMPDIR",
    types: ["bwrap-setenv"],
    op: "removed",
    key: /^(HOME|TMPDIR)$/,
  },
  {
    id: "sandbox-home-moved",
    verdict: "weakens",
    why: "HOME inside the sandbox is another path: outside the run it gives the session dotfiles it must not see",
    types: ["bwrap-setenv"],
    op: "changed",
    key: /^HOME$/,
  },
  {
    id: "pdeathsig-removed",
    verdict: "weakens",
    why: "the runner no longer dies with its bwrap: a host that died leaves it running unconfined by any host",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["wrapper"],
    when: (c) => was(c, "wrapper").includes("--pdeathsig") && !now(c, "wrapper").includes("--pdeathsig"),
  },
  {
    id: "pdeathsig-added",
    verdict: "strengthens",
    why: "the runner dies with its bwrap",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["wrapper"],
    when: (c) => !was(c, "wrapper").includes("--pdeathsig") && now(c, "wrapper").includes("--pdeathsig"),
  },

  {
    id: "session-identity-removed",
    verdict: "weakens",
    why: "bwrap no longer drops to the session's own uid: a root caller's session runs as kuid 0, writes the host's sysctls, reads its 0600 files and plants setuid-root binaries",
    types: ["bwrap-identity"],
    op: "removed",
  },
  {
    id: "session-identity-root",
    verdict: "weakens",
    why: "the session's identity is uid or gid 0 now, or keeps the caller's groups: what runs as it owns what a root caller owns",
    types: ["bwrap-identity"],
    op: "changed",
    when: (c) => idOf(now(c, "reuid")) === 0 || idOf(now(c, "regid")) === 0 || now(c, "clearGroups") !== "yes",
  },
  {
    id: "session-identity-added",
    verdict: "strengthens",
    why: "bwrap drops to the session's own uid before it starts",
    types: ["bwrap-identity"],
    op: "added",
  },
  {
    id: "memory-limit-loosened",
    verdict: "weakens",
    why: "the runner's prlimit --data is gone or higher: one process of the session can take the host's memory",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["limits"],
    when: (c) => dataOf(now(c, "limits")) > dataOf(was(c, "limits")),
  },
  {
    id: "memory-limit-tightened",
    verdict: "strengthens",
    why: "the runner's processes get a prlimit --data bound, or a lower one",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["limits"],
    when: (c) => dataOf(now(c, "limits")) < dataOf(was(c, "limits")),
  },
  {
    id: "task-limit-loosened",
    verdict: "weakens",
    why: "the runner's prlimit --nproc is gone or higher: a user caller's session can fork until the host's pid table is full (a root caller's bound is the pids cgroup)",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["limits"],
    when: (c) => nprocOf(now(c, "limits")) > nprocOf(was(c, "limits")),
  },
  {
    id: "task-limit-tightened",
    verdict: "strengthens",
    why: "the runner's tasks get a prlimit --nproc bound, or a lower one",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["limits"],
    when: (c) => nprocOf(now(c, "limits")) < nprocOf(was(c, "limits")),
  },
  {
    id: "runner-node-readable",
    verdict: "weakens",
    why: "the runner runs on a node its user can read, not the execute-only copy: only a binary it may not read makes the kernel mark pid 1 not dumpable, so a process in the sandbox can read /proc/1/mem or /proc/1/environ, or trace it, and take the capability the runner holds (docs/hardening.md)",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["program"],
    when: (c) => EXECUTE_ONLY_NODE.test(was(c, "program")) && !EXECUTE_ONLY_NODE.test(now(c, "program")),
  },
  {
    id: "runner-node-execute-only",
    verdict: "strengthens",
    why: "the runner runs on the execute-only copy of node: pid 1 is not dumpable, so its memory cannot be read or traced",
    types: ["bwrap-command"],
    op: "changed",
    fields: ["program"],
    when: (c) => !EXECUTE_ONLY_NODE.test(was(c, "program")) && EXECUTE_ONLY_NODE.test(now(c, "program")),
  },

  // The adapter's argv.
  {
    id: "adapter-program-changed",
    verdict: "weakens",
    why: "another program runs the session: check it is the pinned binary on the checked node",
    types: ["adapter-program"],
    op: ["changed", "removed", "added"],
  },
  {
    id: "tool-follows-limit",
    verdict: "neutral",
    why: "the list's members come and go with their option, which is classified on its own line",
    types: ["adapter-listed"],
    op: ["added", "removed"],
    when: (c, x) => !listKept(c, x),
  },
  {
    id: "tool-added",
    verdict: "weakens",
    why: "a tool added to a limit: the session can do more",
    types: ["adapter-listed", "policy-member", "manifest-member", "module-member", "tool"],
    op: "added",
    when: (c) => isToolList(factOf(c)),
  },
  {
    id: "tool-removed",
    verdict: "strengthens",
    why: "a tool taken out of a limit",
    types: ["adapter-listed", "policy-member", "manifest-member", "module-member", "tool"],
    op: "removed",
    when: (c) => isToolList(factOf(c)),
  },
  ...adapterHardeningRows(),
  {
    id: "adapter-hardening-added",
    verdict: "strengthens",
    why: "a confining option added (--restricted, --strict-mcp-config, --setting-sources, a tool list, the gate's extension or settings, Pi's isolation flags)",
    types: ["adapter-option"],
    op: "added",
    when: (c) => ADAPTER_HARDENING.some((h) => h.key.test(factKey(c))),
  },
  {
    id: "adapter-widening-added",
    verdict: "weakens",
    why: ADAPTER_WIDENING.map((w) => w.why).join("; "),
    types: ["adapter-option"],
    op: "added",
    when: (c) => ADAPTER_WIDENING.some((w) => w.key.test(factKey(c))),
  },
  {
    id: "adapter-widening-removed",
    verdict: "strengthens",
    why: "an option that opened the harness up is gone",
    types: ["adapter-option"],
    op: "removed",
    when: (c) => ADAPTER_WIDENING.some((w) => w.key.test(factKey(c))),
  },
  {
    id: "setting-sources-widened",
    verdict: "weakens",
    why: "--setting-sources names a source: its settings (hooks, permissions, MCP servers) load",
    types: ["adapter-option"],
    op: "changed",
    key: /^--setting-sources$/,
    when: (c) => was(c, "value") === '""',
  },
  {
    id: "permission-mode-loosened",
    verdict: "weakens",
    why: "a permission mode other than dontAsk may run an unlisted tool or bypass checks",
    types: ["adapter-option"],
    op: "changed",
    key: /^--permission-mode$/,
    when: (c) => was(c, "value") === "dontAsk",
  },
  {
    id: "permission-mode-tightened",
    verdict: "strengthens",
    why: "dontAsk: an unlisted tool is denied and nothing bypasses the hook",
    types: ["adapter-option"],
    op: "changed",
    key: /^--permission-mode$/,
    when: (c) => now(c, "value") === "dontAsk",
  },
  {
    id: "event-stream-changed",
    verdict: "weakens",
    why: "the harness prints another output format: the tripwire reads completed tool calls only from Pi's json mode and Claude Code's stream-json",
    types: ["adapter-option"],
    op: "changed",
    key: /^(--mode|--output-format)$/,
  },
  {
    id: "gate-file-changed",
    verdict: "weakens",
    why: "the file that carries the gate (Pi's extension, the hook's settings, the MCP config) is another one: check it is the bundle's",
    types: ["adapter-option"],
    op: "changed",
    key: /^(-e|--extension|--settings|--mcp-config)(#\d+)?$/,
  },
  {
    id: "model-choice-changed",
    verdict: "neutral",
    why: "which model runs and how hard it thinks: no confinement",
    types: ["adapter-option", "adapter-env", "route", "manifest", "module"],
    op: "changed",
    key: /^(--model|--effort|--thinking|MOSAIC_MODEL|MOSAIC_THINKING|model|thinking|route|routeReason|harnessVersion|[\w-]+ thinking)$/,
  },
  {
    id: "prompt-changed",
    verdict: "neutral",
    why: "the prompt tells the model what to do and confines nothing; the tool limits and the gate do, and their goldens show any change",
    types: ["adapter-option", "prompt-line"],
    op: ["changed", "added", "removed"],
    when: (c) => factOf(c).type === "prompt-line" || /^--append-system-prompt(-file)?$/.test(factKey(c)),
  },

  // The adapter's environment, and the harness modules' adapterEnv.
  {
    id: "credential-to-placeholder",
    verdict: "strengthens",
    why: "the session holds the placeholder instead of the host's credential; the host's proxy adds the real one",
    types: ["adapter-env"],
    op: "changed",
    when: (c) => was(c, "value") === "<set>" && now(c, "value") === "<placeholder>",
  },
  {
    id: "placeholder-to-credential",
    verdict: "weakens",
    why: "the session holds the host's credential again instead of the placeholder: bash and the model can read it",
    types: ["adapter-env"],
    op: "changed",
    when: (c) => was(c, "value") === "<placeholder>" && now(c, "value") !== "<placeholder>",
  },
  {
    id: "credential-shown",
    verdict: "weakens",
    why: "a credential's value in the golden is no longer the <set> placeholder: a value may reach a file or a log",
    types: ["adapter-env"],
    op: "changed",
    when: (c) => was(c, "value") === "<set>",
  },
  {
    id: "protective-env-removed",
    verdict: "weakens",
    why: "a variable that keeps the harness offline, gated or on its bundle is gone (PI_OFFLINE, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, MCP_CONNECTION_NONBLOCKING, MOSAIC_POLICY_FILE, ...)",
    types: ["adapter-env"],
    op: "removed",
    key: PROTECTIVE_ENV,
  },
  {
    id: "protective-env-changed",
    verdict: "weakens",
    why: "a variable that keeps the harness offline, gated or on its bundle has another value",
    types: ["adapter-env"],
    op: "changed",
    key: PROTECTIVE_ENV,
  },
  {
    id: "path-changed",
    verdict: "weakens",
    why: "PATH decides which program a name runs: an entry placed first can run the workspace's own",
    types: ["adapter-env"],
    op: "changed",
    key: /^PATH$/,
  },
  {
    id: "env-added",
    verdict: "weakens",
    why: "a new variable reaches the harness: bash and the model can read its value",
    types: ["adapter-env", "module-member"],
    op: "added",
    when: (c) => isEnvRow(factOf(c)),
  },
  {
    id: "env-removed",
    verdict: "strengthens",
    why: "one variable fewer reaches the harness",
    types: ["adapter-env", "module-member"],
    op: "removed",
    when: (c) => isEnvRow(factOf(c)),
  },

  // The gate's decisions.
  {
    id: "gate-block-to-allow",
    verdict: "weakens",
    why: "a call the gate blocked is allowed: a hole until shown otherwise",
    types: ["gate-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => decisionOf(was(c, "decision")) === "block" && decisionOf(now(c, "decision")) === "allow",
  },
  {
    id: "gate-allow-to-block",
    verdict: "strengthens",
    why: "a call the gate allowed is blocked",
    types: ["gate-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => decisionOf(was(c, "decision")) === "allow" && decisionOf(now(c, "decision")) === "block",
  },
  {
    id: "gate-block-check-changed",
    verdict: "weakens",
    why: "still blocked, but the reason names another check: the check that blocked it may be gone, and a call only it blocks would pass",
    types: ["gate-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) =>
      decisionOf(was(c, "decision")) === "block" &&
      decisionOf(now(c, "decision")) === "block" &&
      lostCheck(was(c, "decision"), now(c, "decision")),
  },
  {
    id: "gate-reason-reworded",
    verdict: "neutral",
    why: "a block's reason reworded; the call is still blocked",
    types: ["gate-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => decisionOf(was(c, "decision")) === "block" && decisionOf(now(c, "decision")) === "block",
  },
  {
    id: "gate-call-added-allow",
    verdict: "weakens",
    why: "a new call the gate lets through: check it should",
    types: ["gate-call"],
    op: "added",
    when: (c) => decisionOf(now(c, "decision")) === "allow",
  },
  {
    id: "gate-call-added-block",
    verdict: "strengthens",
    why: "a new call the gate is shown to block",
    types: ["gate-call"],
    op: "added",
    when: (c) => decisionOf(now(c, "decision")) === "block",
  },
  {
    id: "gate-call-removed-block",
    verdict: "weakens",
    why: "a blocked call dropped from the scene: nothing shows it is still blocked",
    types: ["gate-call"],
    op: "removed",
    when: (c) => decisionOf(was(c, "decision")) === "block",
  },
  {
    id: "gate-call-removed-allow",
    verdict: "neutral",
    why: "an allowed call dropped from the scene: no block is lost",
    types: ["gate-call"],
    op: "removed",
    when: (c) => decisionOf(was(c, "decision")) === "allow",
  },
  {
    id: "gate-scene-changed",
    verdict: "neutral",
    why: "the scene's tree; every decision made on it is classified on its own line",
    types: ["gate-tree"],
    op: ["added", "removed"],
  },

  // Bundle files.
  {
    id: "json-comes-with-entry",
    verdict: "neutral",
    why: "part of an entry added or removed whole, which is classified on its own line",
    types: [
      "policy",
      "policy-member",
      "settings",
      "settings-member",
      "mcp",
      "mcp-member",
      "tools",
      "tools-member",
      "manifest",
      "manifest-member",
    ],
    op: ["added", "removed"],
    when: comesWithEntry,
  },
  {
    id: "hook-changed",
    verdict: "weakens",
    why: "the gate hook or its wrapper changed: its command, matcher and timeout decide whether a call is checked and what a missing, crashing or hanging gate does",
    types: ["settings", "settings-member", "module"],
    op: ["changed", "added", "removed"],
    when: (c) => /^hooks(\.|\[|$)/.test(factOf(c).at) || (factOf(c).type === "module" && / gate$/.test(factKey(c))),
  },
  {
    id: "mcp-server-added",
    verdict: "weakens",
    why: "another MCP server gives the model tools the gate does not see",
    types: ["mcp"],
    op: "added",
    at: /^mcpServers\.[^.[]+$/,
  },
  {
    id: "mcp-server-removed",
    verdict: "strengthens",
    why: "an MCP server gone",
    types: ["mcp"],
    op: "removed",
    at: /^mcpServers\.[^.[]+$/,
  },
  {
    id: "mcp-server-changed",
    verdict: "weakens",
    why: "the MCP server runs another command, with other arguments or variables",
    types: ["mcp", "mcp-member"],
    op: ["changed", "added", "removed"],
    at: /^mcpServers\.[^.[]+[.[]/,
  },
  {
    id: "typed-tool-added",
    verdict: "weakens",
    why: "a typed tool added: the model can act on the bus through it",
    types: ["tools"],
    op: "added",
    at: /^tools\[[^\]]+\]$/,
  },
  {
    id: "typed-tool-removed",
    verdict: "strengthens",
    why: "a typed tool removed",
    types: ["tools"],
    op: "removed",
    at: /^tools\[[^\]]+\]$/,
  },
  {
    id: "models-key-not-placeholder",
    verdict: "weakens",
    why: "Pi's models.json holds a key other than the placeholder: a credential in the bundle, which the session reads",
    types: ["models"],
    op: ["changed", "added"],
    at: /\.apiKey$/,
    when: (c) => now(c, "value") !== JSON.stringify(CREDENTIAL_PLACEHOLDER),
  },
  {
    id: "models-url-moved",
    verdict: "weakens",
    why: "Pi's provider points elsewhere than the in-sandbox model port: past the proxy's table and log, if anything there answers",
    types: ["models"],
    op: ["changed", "added"],
    at: /\.baseUrl$/,
    when: (c) => now(c, "value") !== JSON.stringify(MODEL_URL),
  },
  {
    id: "policy-root-changed",
    verdict: "weakens",
    why: "the gate checks paths against another workspace or HOME",
    types: ["policy"],
    op: "changed",
    at: /^(workspace|home)$/,
  },
  {
    id: "service-added",
    verdict: "weakens",
    why: "the session is granted another service",
    types: ["policy-member"],
    op: "added",
    at: /^services$/,
  },
  {
    id: "service-removed",
    verdict: "strengthens",
    why: "a service taken away",
    types: ["policy-member"],
    op: "removed",
    at: /^services$/,
  },
  {
    id: "digest-changed",
    verdict: "neutral",
    why: "a digest follows the file it hashes; that file's own golden shows the change",
    types: ["manifest", "seccomp-digest"],
    op: ["changed", "added", "removed"],
    when: (c) => factOf(c).type === "seccomp-digest" || /^(files\.|sources\.|resolvedDigest$)/.test(factOf(c).at),
  },
  {
    id: "guarantee-dropped",
    verdict: "weakens",
    why: "the manifest no longer records one of the guarantees the gate relies on",
    types: ["manifest-member"],
    op: "removed",
    at: /^reliesOn$/,
  },
  {
    id: "guarantee-recorded",
    verdict: "strengthens",
    why: "the manifest records another guarantee the gate relies on",
    types: ["manifest-member"],
    op: "added",
    at: /^reliesOn$/,
  },
  {
    id: "json-text-reworded",
    verdict: "neutral",
    why: "a description reworded",
    types: ["tools", "manifest", "policy", "settings", "mcp"],
    op: "changed",
    at: /(^|\.)(description|how|why)$/,
  },

  // Route decisions and harness modules.
  {
    id: "sandbox-mount-added",
    verdict: "weakens",
    why: "the harness asks for another host path in its sandbox",
    types: ["route-member", "module-member"],
    op: "added",
    at: /^sandboxMounts$/,
  },
  {
    id: "sandbox-mount-removed",
    verdict: "strengthens",
    why: "one host path fewer in the harness's sandbox",
    types: ["route-member", "module-member"],
    op: "removed",
    at: /^sandboxMounts$/,
  },
  {
    id: "bundle-file-dropped",
    verdict: "weakens",
    why: "a bundle file the harness reads is gone: settings.json holds the hook, policy.json the gate's policy, mcp.json the only MCP server",
    types: ["route-member", "module-member"],
    op: "removed",
    at: /^bundleFiles$/,
  },
  {
    id: "turn-end-changed",
    verdict: "weakens",
    why: "how a turn's end is proven changed: a weaker proof counts a turn the gate never saw end as done",
    types: ["route", "module"],
    op: "changed",
    key: /(^| )turnEnd$/,
  },
  {
    id: "harness-module-added",
    verdict: "weakens",
    why: "another harness module can run sessions: its confinement must be shown like the others'",
    types: ["module-section"],
    op: "added",
  },
  {
    id: "harness-module-removed",
    verdict: "strengthens",
    why: "a harness module gone: it runs no session",
    types: ["module-section"],
    op: "removed",
  },

  // Refusals and typed errors.
  {
    id: "refusal-code-changed",
    verdict: "weakens",
    why: "the case is refused under another code: the check that refused it may be gone",
    types: ["refusal", "spec-error"],
    op: "changed",
    fields: ["code"],
  },
  {
    id: "refusal-reworded",
    verdict: "neutral",
    why: "a refusal's message reworded; its code holds",
    types: ["refusal", "spec-error"],
    op: "changed",
    fields: ["message"],
  },
  {
    id: "refusal-gone",
    verdict: "weakens",
    why: "a refusal gone: the case it refused is no longer shown refused",
    types: ["refusal", "spec-error", "refusal-code"],
    op: "removed",
  },
  {
    id: "refusal-added",
    verdict: "strengthens",
    why: "a refusal added",
    types: ["refusal", "spec-error", "refusal-code"],
    op: "added",
  },
  {
    id: "check-order-changed",
    verdict: "neutral",
    why: "every check still runs before a launch; the order picks which code a case reports first",
    types: ["refusal-code"],
    op: "moved",
  },

  // Session tables.
  {
    id: "env-allow-added",
    verdict: "weakens",
    why: "an ENV_ALLOW entry added: another host variable reaches every session",
    types: ["env-allow"],
    op: "added",
  },
  {
    id: "env-allow-removed",
    verdict: "strengthens",
    why: "one host variable fewer reaches sessions",
    types: ["env-allow"],
    op: "removed",
  },
  // The session's runtime (docs/runtime.md).
  {
    id: "session-env-added",
    verdict: "weakens",
    why: "another host variable in the sandbox's environment: the runner and every process it starts can read it",
    types: ["session-env"],
    op: "added",
  },
  {
    id: "session-env-removed",
    verdict: "strengthens",
    why: "one host variable fewer in the sandbox's environment",
    types: ["session-env"],
    op: "removed",
  },
  // The host's side of a launch (src/core/session/host-plan.ts): every row is something start() does.
  {
    id: "host-plan-removed",
    verdict: "weakens",
    why: "a decision the launcher carries out on the host for every session is gone: a drop, a handover, a seccomp rule, a cgroup setting, a bound's enforcer, the end check or the lock",
    types: ["host-plan"],
    op: "removed",
  },
  {
    id: "host-plan-changed",
    verdict: "weakens",
    why: "a decision the launcher carries out on the host changed: who the session runs as, a mode, a bound's value or enforcer, where the host keeps its own state",
    types: ["host-plan"],
    op: "changed",
  },
  {
    id: "host-plan-protection-added",
    verdict: "strengthens",
    why: "another seccomp rule or cgroup setting for every session",
    types: ["host-plan"],
    op: "added",
    key: /^(seccomp (deny|ioctl) |cgroup )/,
  },
  {
    id: "session-launch-socket-named",
    verdict: "weakens",
    why: "session.json names the launch socket: the runner routes the launch tool to it, and the sandbox binds it",
    types: ["session-file"],
    op: ["changed", "added"],
    at: /^launchSocket$/,
    when: (c) => now(c, "value") !== "null" && was(c, "value") !== now(c, "value"),
  },
  {
    id: "session-launch-socket-gone",
    verdict: "strengthens",
    why: "session.json no longer names the launch socket",
    types: ["session-file"],
    op: "changed",
    at: /^launchSocket$/,
    when: (c) => now(c, "value") === "null",
  },
  // The probe's diagnoses (src/core/sandbox/diagnose.ts): a recorded failure's named cause and fix.
  {
    id: "diagnosis-changed",
    verdict: "weakens",
    why: "a recorded bwrap failure now gets another cause, or none: a user who meets it may get the wrong fix, or only bwrap's line",
    types: ["diagnosis"],
    op: "changed",
    fields: ["row", "line"],
    when: (c) => was(c, "row") !== now(c, "row"),
  },
  {
    id: "diagnosis-reworded",
    verdict: "neutral",
    why: "a recorded bwrap failure gets the same row; only the words of its cause, fix or bwrap's line changed",
    types: ["diagnosis"],
    op: "changed",
    fields: ["line"],
    when: (c) => was(c, "row") === now(c, "row"),
  },
  {
    id: "diagnosis-case-removed",
    verdict: "weakens",
    why: "a recorded bwrap failure is no longer decided: nothing shows it still gets its cause and fix",
    types: ["diagnosis"],
    op: "removed",
  },
  // The tripwire (docs/protocols.md, "Gate reports"): a completed file-tool call the gate never allowed fails the turn.
  {
    id: "session-tripwire-off",
    verdict: "weakens",
    why: "session.json turns the tripwire off: a harness that stops calling its gate for a tool runs that tool ungated, and the turn still counts",
    types: ["session-file", "session-file-member"],
    op: ["changed", "removed"],
    at: /^tripwire(\.|$)/,
    when: (_c, ctx) => tripwireOn(ctx.before) && !tripwireOn(ctx.after),
  },
  {
    id: "session-tripwire-on",
    verdict: "strengthens",
    why: "session.json turns the tripwire on: every completed file-tool call needs the gate's allow",
    types: ["session-file", "session-file-member"],
    op: ["changed", "added"],
    at: /^tripwire(\.|$)/,
    when: (_c, ctx) => !tripwireOn(ctx.before) && tripwireOn(ctx.after),
  },
  {
    id: "tripwire-stream-changed",
    verdict: "weakens",
    why: "the tripwire reads another event stream: unless it is the one this harness prints, it sees no completed call",
    types: ["session-file"],
    op: "changed",
    key: /^tripwire\.stream$/,
  },
  {
    id: "tripwire-typed-tool-added",
    verdict: "weakens",
    why: "the tripwire passes one more tool name its table does not know: a harness tool of that name no longer fails closed until reviewed",
    types: ["session-file-member"],
    op: "added",
    at: /^tripwire\.typedTools$/,
  },
  {
    id: "tripwire-typed-tool-removed",
    verdict: "strengthens",
    why: "one typed tool fewer passes the tripwire's unknown-tool check",
    types: ["session-file-member"],
    op: "removed",
    at: /^tripwire\.typedTools$/,
  },
  // What the model proxy decides per request, and what it may cost the host (docs/network.md).
  {
    id: "decision-refusal-lost",
    verdict: "weakens",
    why: "the model proxy no longer refuses this request: it reaches the upstream, or the host pays for it",
    types: DECISION_TYPES,
    op: "removed",
    when: (c, ctx) =>
      c.op === "removed" && outcomeOf(c.before) === "refuse" && !decidedThere(c.before, ctx.after, "refuse"),
  },
  {
    id: "decision-now-passes",
    verdict: "weakens",
    why: "a request the model proxy refused now passes",
    types: DECISION_TYPES,
    op: "added",
    when: (c, ctx) => c.op === "added" && outcomeOf(c.after) === "pass" && decidedThere(c.after, ctx.before, "refuse"),
  },
  {
    id: "decision-now-refused",
    verdict: "strengthens",
    why: "a request the model proxy passed is refused now",
    types: DECISION_TYPES,
    op: ["added", "removed"],
    when: (c, ctx) =>
      c.op === "added"
        ? outcomeOf(c.after) === "refuse" && decidedThere(c.after, ctx.before, "pass")
        : c.op === "removed" && outcomeOf(c.before) === "pass" && decidedThere(c.before, ctx.after, "refuse"),
  },
  {
    id: "proxy-limit-raised",
    verdict: "weakens",
    why: "one session's model proxy may hold more of the host: a larger body, more bytes or connections, a longer wait",
    types: ["proxy-limit"],
    op: ["added", "removed"],
    when: (c, ctx) =>
      c.op === "added"
        ? limitThere(c.after, ctx.before) < 0
        : c.op === "removed" && limitThere(c.before, ctx.after) > 0,
  },
  {
    id: "proxy-limit-lowered",
    verdict: "strengthens",
    why: "one session's model proxy may hold less of the host",
    types: ["proxy-limit"],
    op: ["added", "removed"],
    when: (c, ctx) =>
      c.op === "added"
        ? limitThere(c.after, ctx.before) > 0
        : c.op === "removed" && limitThere(c.before, ctx.after) < 0,
  },
  {
    id: "session-bound-loosened",
    verdict: "weakens",
    why: "session.json bounds the runner less: a larger tool-socket line, depth or count, more turn output, or a turn's leftovers no longer killed",
    types: ["session-file"],
    op: "changed",
    key: /^bounds\./,
    when: (c) => boundChange(c) > 0,
  },
  {
    id: "session-bound-tightened",
    verdict: "strengthens",
    why: "session.json bounds the runner more",
    types: ["session-file"],
    op: "changed",
    key: /^bounds\./,
    when: (c) => boundChange(c) < 0,
  },
  // The end-of-session check (docs/hardening.md): what it finds and what it moves out of the workspace.
  {
    id: "workspace-entry-reworded",
    verdict: "neutral",
    why: "the end-of-session check still finds, or still acts on, the same path for the same reason; only its wording or destination changed",
    types: ["workspace-check-line"],
    op: ["added", "removed"],
    when: (c, ctx) => {
      const f = c.op === "added" ? c.after : c.op === "removed" ? c.before : null;
      return f !== null && isWorkspaceEntry(f) && keptThere(f, c.op === "added" ? ctx.before : ctx.after);
    },
  },
  {
    id: "workspace-entry-lost",
    verdict: "weakens",
    why: "the end-of-session check no longer finds, or no longer moves or clears, what the session left for the host's git or shell to run",
    types: ["workspace-check-line"],
    op: "removed",
    when: (c) => c.op === "removed" && isWorkspaceEntry(c.before),
  },
  {
    id: "workspace-entry-added",
    verdict: "strengthens",
    why: "the end-of-session check finds, moves or clears one thing more",
    types: ["workspace-check-line"],
    op: "added",
    when: (c) => c.op === "added" && isWorkspaceEntry(c.after),
  },
  // The network's one way out (docs/network.md).
  {
    id: "egress-allow-added",
    verdict: "weakens",
    why: "the model proxy forwards another request: another way out of every session",
    types: ["egress-allow"],
    op: "added",
  },
  {
    id: "egress-allow-removed",
    verdict: "strengthens",
    why: "the model proxy forwards one request fewer",
    types: ["egress-allow"],
    op: "removed",
  },
  {
    id: "network-mode-added",
    verdict: "weakens",
    why: "the policy's network field accepts another mode: check what it lets out",
    types: ["network-mode"],
    op: "added",
  },
  {
    id: "network-mode-removed",
    verdict: "strengthens",
    why: "a network mode gone: an instance that names it is refused",
    types: ["network-mode"],
    op: "removed",
  },
  {
    id: "egress-refuse-to-forward",
    verdict: "weakens",
    why: "a request the proxy refused is forwarded: a way out until shown otherwise",
    types: ["egress-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => egressOf(was(c, "decision")) === "refuse" && egressOf(now(c, "decision")) === "forward",
  },
  {
    id: "egress-forward-to-refuse",
    verdict: "strengthens",
    why: "a request the proxy forwarded is refused",
    types: ["egress-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => egressOf(was(c, "decision")) === "forward" && egressOf(now(c, "decision")) === "refuse",
  },
  {
    id: "egress-reason-reworded",
    verdict: "neutral",
    why: "a decision's reason reworded; it forwards or refuses as before",
    types: ["egress-call"],
    op: "changed",
    fields: ["decision"],
    when: (c) => egressOf(was(c, "decision")) === egressOf(now(c, "decision")) && egressOf(now(c, "decision")) !== "",
  },
  {
    id: "egress-case-added-forward",
    verdict: "weakens",
    why: "a new request the proxy forwards: check it should",
    types: ["egress-call"],
    op: "added",
    when: (c) => egressOf(now(c, "decision")) === "forward",
  },
  {
    id: "egress-case-added-refuse",
    verdict: "strengthens",
    why: "a new request the proxy is shown to refuse",
    types: ["egress-call"],
    op: "added",
    when: (c) => egressOf(now(c, "decision")) === "refuse",
  },
  {
    id: "egress-case-removed-refuse",
    verdict: "weakens",
    why: "a refused request dropped from the cases: nothing shows it is still refused",
    types: ["egress-call"],
    op: "removed",
    when: (c) => egressOf(was(c, "decision")) === "refuse",
  },
  {
    id: "egress-case-removed-forward",
    verdict: "neutral",
    why: "a forwarded request dropped from the cases: no refusal is lost",
    types: ["egress-call"],
    op: "removed",
    when: (c) => egressOf(was(c, "decision")) === "forward",
  },
  {
    id: "founder-env-removed",
    verdict: "weakens",
    why: "a founder variable no longer stops a launch",
    types: ["founder-env"],
    op: "removed",
  },
  {
    id: "founder-env-added",
    verdict: "strengthens",
    why: "another founder variable stops a launch",
    types: ["founder-env"],
    op: "added",
  },
  {
    id: "credential-set-added",
    verdict: "weakens",
    why: "another set of variables counts as a session credential",
    types: ["credential-set"],
    op: "added",
  },
  {
    id: "credential-set-removed",
    verdict: "strengthens",
    why: "a set no longer counts as a session credential",
    types: ["credential-set"],
    op: "removed",
  },
  {
    id: "credential-set-loosened",
    verdict: "weakens",
    why: "a credential set needs fewer variables: a proxy token without its URL would go to the public API",
    types: ["credential-set"],
    op: "changed",
    fields: ["variables"],
    when: (c) => varCount(now(c, "variables")) < varCount(was(c, "variables")),
  },
  {
    id: "credential-set-tightened",
    verdict: "strengthens",
    why: "a credential set needs more variables",
    types: ["credential-set"],
    op: "changed",
    fields: ["variables"],
    when: (c) => varCount(now(c, "variables")) > varCount(was(c, "variables")),
  },
  {
    id: "kill-unrecorded",
    verdict: "weakens",
    why: "a session killed by a signal would be recorded as an ordinary exit",
    types: ["exit-map"],
    op: "changed",
    when: (c) => was(c, "outcome").includes('"killed"') && !now(c, "outcome").includes('"killed"'),
  },
  {
    id: "kill-recorded",
    verdict: "strengthens",
    why: "a session killed by a signal is recorded as killed",
    types: ["exit-map"],
    op: "changed",
    when: (c) => !was(c, "outcome").includes('"killed"') && now(c, "outcome").includes('"killed"'),
  },

  // The seccomp listing.
  {
    id: "seccomp-row-removed",
    verdict: "weakens",
    why: "a syscall the filter denied is no longer denied",
    types: ["seccomp-deny"],
    op: "removed",
  },
  {
    id: "seccomp-row-added",
    verdict: "strengthens",
    why: "the filter denies another syscall",
    types: ["seccomp-deny"],
    op: "added",
  },
  {
    id: "seccomp-action-widened",
    verdict: "weakens",
    why: "a denied syscall gets a wider action: an error instead of a kill can be retried, an allow lets it through",
    types: ["seccomp-deny"],
    op: "changed",
    fields: ["action"],
    when: (c) => actionWidth(now(c, "action")) > actionWidth(was(c, "action")) && actionWidth(was(c, "action")) >= 0,
  },
  {
    id: "seccomp-action-narrowed",
    verdict: "strengthens",
    why: "a denied syscall gets a narrower action",
    types: ["seccomp-deny"],
    op: "changed",
    fields: ["action"],
    when: (c) => actionWidth(now(c, "action")) < actionWidth(was(c, "action")) && actionWidth(now(c, "action")) >= 0,
  },
  {
    id: "seccomp-clone-flags-narrowed",
    verdict: "weakens",
    why: "the flag test of a denied call lost flags (its mask or the flags it names): clone with those namespace flags passes again, and a new namespace lets a pivot_root hide the read-only binds",
    types: ["seccomp-deny"],
    op: "changed",
    fields: ["args", "flags"],
    when: (c) => isMaskTest(c) && flagChange(c) === -1,
  },
  {
    id: "seccomp-clone-flags-widened",
    verdict: "strengthens",
    why: "the flag test of a denied call covers more flags and lost none",
    types: ["seccomp-deny"],
    op: "changed",
    fields: ["args", "flags"],
    when: (c) => isMaskTest(c) && flagChange(c) === 1,
  },
  {
    id: "seccomp-jump-off-deny",
    verdict: "weakens",
    why: "a jump that led to a kill or an errno return lands elsewhere now: the calls it caught (another architecture, an x32 number, a denied syscall) go on to be allowed",
    types: ["seccomp-step", "seccomp-deny"],
    op: "changed",
    fields: JUMPS,
    when: jumpLeftDeny,
  },
  {
    id: "seccomp-jump-to-deny",
    verdict: "strengthens",
    why: "a jump lands on a kill or an errno return now: the calls it catches are stopped",
    types: ["seccomp-step", "seccomp-deny"],
    op: "changed",
    fields: JUMPS,
    when: jumpReachedDeny,
  },
  {
    id: "seccomp-check-removed",
    verdict: "weakens",
    why: "a check that sent calls to a kill or an errno is gone (the x32 check, the architecture check): the calls it caught go on to the next check and may be allowed",
    types: ["seccomp-step"],
    op: "removed",
    when: (c, x) => c.op === "removed" && sendsToDeny(c.before, x.before),
  },
  {
    id: "seccomp-check-added",
    verdict: "strengthens",
    why: "a check that sends calls to a kill or an errno is added",
    types: ["seccomp-step"],
    op: "added",
    when: (c, x) => c.op === "added" && sendsToDeny(c.after, x.after),
  },
  {
    id: "seccomp-arg-check-removed",
    verdict: "weakens",
    why: "a call no longer goes to the block that checks its arguments (socket's family, clone's flags, ioctl's request): it is allowed whatever they are, AF_VSOCK and AF_PACKET included",
    types: ["seccomp-step"],
    op: "removed",
    when: (c, x) => c.op === "removed" && entersArgCheck(c.before, x.before),
  },
  {
    id: "seccomp-allow-jump-added",
    verdict: "weakens",
    why: "a new jump lands on an allow: the value it matches (a socket family, a netlink protocol) passes now",
    types: ["seccomp-step"],
    op: "added",
    when: (c, x) => c.op === "added" && JUMPS.some((j) => landsOnAllow(c.after, j, x.after)),
  },
  {
    id: "seccomp-jump-to-allow",
    verdict: "weakens",
    why: "a jump that led to a further check now lands on an allow: what that check refused (netlink beyond NETLINK_ROUTE) passes",
    types: ["seccomp-step"],
    op: "changed",
    fields: JUMPS,
    when: (c, x) =>
      c.op === "changed" && !landsOnAllow(c.before, c.field, x.before) && landsOnAllow(c.after, c.field, x.after),
  },
  {
    id: "seccomp-allow-return-added",
    verdict: "weakens",
    why: "the program gained a return that allows: a call it stopped may pass",
    types: ["seccomp-insn", "seccomp-step"],
    op: "added",
    when: (c) => now(c, "op") === "ret" && actionWidth(now(c, "args").replace(/^#/, "")) >= 3,
  },
  {
    id: "seccomp-deny-return-removed",
    verdict: "weakens",
    why: "the program lost a return that denies (kill, trap or an errno)",
    types: ["seccomp-insn", "seccomp-step"],
    op: "removed",
    when: (c) =>
      was(c, "op") === "ret" &&
      actionWidth(was(c, "args").replace(/^#/, "")) >= 0 &&
      actionWidth(was(c, "args").replace(/^#/, "")) <= 1,
  },
  {
    id: "seccomp-deny-return-added",
    verdict: "strengthens",
    why: "the program gained a return that denies",
    types: ["seccomp-insn", "seccomp-step"],
    op: "added",
    when: (c) =>
      now(c, "op") === "ret" &&
      actionWidth(now(c, "args").replace(/^#/, "")) >= 0 &&
      actionWidth(now(c, "args").replace(/^#/, "")) <= 1,
  },

  // The review's own report goldens.
  {
    id: "review-alarm-lowered",
    verdict: "weakens",
    why: "the review raises less alarm for a fixture change than it did: a rule was loosened or lost",
    types: ["review-finding"],
    op: ["changed", "removed"],
    when: (c) => reviewRank(c, "after") < reviewRank(c, "before") && reviewRank(c, "before") >= 2,
  },
  {
    id: "review-alarm-raised",
    verdict: "strengthens",
    why: "the review raises more alarm for a fixture change than it did",
    types: ["review-finding"],
    op: ["changed", "added"],
    when: (c) => reviewRank(c, "after") > reviewRank(c, "before") && reviewRank(c, "after") >= 2,
  },
  {
    id: "review-wording",
    verdict: "neutral",
    why: "the review's wording of a finding, or a finding that asks nothing of a reviewer",
    types: ["review-finding", "review-summary", "review-section"],
    op: ["changed", "added", "removed", "moved"],
    when: (c) =>
      c.op !== "changed" || c.field !== "verdict" || Math.max(reviewRank(c, "before"), reviewRank(c, "after")) < 2,
  },

  // Order and fixtures.
  {
    id: "plan-probe-changed",
    verdict: "neutral",
    why: "the plan's probe line reports the fixture's bwrap answer, not what the sandbox does",
    types: ["plan-probe"],
    op: "changed",
  },
  // A denied syscall's check in a listed program has a place: moved past a return or into another branch, it no longer runs on the syscall number.
  {
    id: "reorder-unordered",
    verdict: "neutral",
    why: "a reorder where order means nothing",
    types: UNORDERED,
    op: "moved",
    when: (c) => !(factOf(c).type === "seccomp-deny" && factOf(c).at === "program"),
  },
];

function factKey(c: Change): string {
  return factOf(c).key;
}

/** The first rule that classifies a change, or null: then the change is unknown. */
export function findRule(c: Change, ctx: Context, rules: readonly Rule[] = RULES): Rule | null {
  const f = factOf(c);
  for (const r of rules) {
    if (!r.types.includes(f.type)) continue;
    if (typeof r.op === "string" ? r.op !== c.op : !r.op.includes(c.op)) continue;
    if (r.fields && !r.fields.includes(fieldOf(c))) continue;
    if (r.key && !r.key.test(f.key)) continue;
    if (r.at && !r.at.test(f.at)) continue;
    if (r.when && !r.when(c, ctx)) continue;
    return r;
  }
  return null;
}
