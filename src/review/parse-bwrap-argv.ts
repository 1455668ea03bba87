// The bwrap argv golden (one option with its operands a line, the runner's command after `--`)
// as facts: binds keyed by where they mount, options by name, the command split at its wrapper.
import { operandsOf, optionOf } from "../core/sandbox/bwrap-options.ts";
import { uniqueKeys, type Fact } from "./model.ts";
import { findShadow } from "./parse-binds.ts";
import { bodyLines, fact, headerFact, type Line } from "./parse-lines.ts";

/**
 * A mount line: `[--perms MODE] [--size N] <mount option> <operands>`, and for a read-only empty
 * stand-in `--remount-ro DEST` after it. Null when the line is not of that shape.
 */
function readMount(tokens: readonly string[]): { option: string; dest: string; fields: Record<string, string> } | null {
  const fields: Record<string, string> = {};
  let i = 0;
  for (let field = optionOf(tokens[i]!)?.modifies; field !== undefined; field = optionOf(tokens[i]!)?.modifies) {
    if (tokens[i + 1] === undefined) return null;
    fields[field] = tokens[i + 1]!;
    i += 2;
  }
  const option = tokens[i] ?? "";
  if (optionOf(option)?.mount === undefined) return null;
  let ops = tokens.slice(i + 1);
  const r = ops.indexOf("--remount-ro");
  if (r !== -1) {
    // Only the remount of the very mount point, as the last step of the line.
    if (r !== ops.length - 2 || r === 0 || ops[r + 1] !== ops[r - 1]) return null;
    fields.remountRo = "yes";
    ops = ops.slice(0, r);
  }
  const dest = ops.at(-1) ?? "";
  // A mount of two operands names what it shows (a host path, a descriptor, a link's target) first.
  const source = operandsOf(option) === 2 ? ops.slice(0, -1).join(" ") : "";
  return { option, dest, fields: { option, source, ...fields } };
}

/**
 * The runner's command, split where each part can be lost on its own: setpriv and its options,
 * prlimit and its bounds, the program (node) and what it runs.
 */
function readCommand(tokens: readonly string[]): Record<string, string> {
  let rest = [...tokens];
  const take = (name: string) => {
    const end = rest[0] === name ? rest.indexOf("--") : -1;
    if (end === -1) return "";
    const part = rest.slice(0, end + 1).join(" ");
    rest = rest.slice(end + 1);
    return part;
  };
  const wrapper = take("setpriv");
  const limits = take("prlimit");
  return { wrapper, limits, program: rest[0] ?? "", runner: rest.slice(1).join(" ") };
}

/** setpriv's identity options: who bwrap, and so the whole session, runs as. */
function readIdentity(ops: readonly string[]): Record<string, string> {
  const opt = (name: string) => ops.find((o) => o.startsWith(`--${name}=`))?.slice(name.length + 3) ?? "";
  return { reuid: opt("reuid"), regid: opt("regid"), clearGroups: ops.includes("--clear-groups") ? "yes" : "no" };
}

/** One argv line to its fact; `afterRemount` is filled in once the whole argv is read. */
function readArgvLine(l: Line, at: string): Fact {
  const t = l.text.trim();
  const [opt = "", ...ops] = t.split(" ");
  if (opt === "--") return fact("bwrap-command", "command", readCommand(ops), l, at);
  const mount = readMount([opt, ...ops]);
  if (mount) return fact("bwrap-mount", mount.dest, { ...mount.fields, afterRemount: "no", shadowedBy: "" }, l, at);
  if (opt === "--remount-ro") return fact("bwrap-remount", ops.join(" "), {}, l, at);
  if (opt === "--setenv") return fact("bwrap-setenv", ops[0] ?? "", { value: ops.slice(1).join(" ") }, l, at);
  if (opt === "--unsetenv") return fact("bwrap-unsetenv", ops[0] ?? "", {}, l, at);
  if (opt === "--chdir") return fact("bwrap-chdir", "chdir", { dir: ops.join(" ") }, l, at);
  if (opt === "bwrap" && ops.length === 0) return fact("bwrap-program", "program", { program: opt }, l, at);
  // A root caller's drop to the session's identity, on its own line before bwrap.
  if (opt === "setpriv") return fact("bwrap-identity", "identity", readIdentity(ops), l, at);
  return fact("bwrap-option", opt, { operands: ops.join(" ") }, l, at);
}

/** Argv lines (with or without an indent) to facts, with each mount's place against --remount-ro. */
export function parseArgvLines(lines: readonly Line[], at = ""): Fact[] {
  const facts = lines.filter((l) => l.text.trim() !== "").map((l) => readArgvLine(l, at));
  let remounted = false;
  const mounts = facts.filter((f) => f.type === "bwrap-mount");
  const insides = mounts.map((m) => m.key);
  const out = facts.map((f) => {
    if (f.type === "bwrap-remount" && f.key === "/") remounted = true;
    if (f.type !== "bwrap-mount") return f;
    const i = mounts.indexOf(f);
    return {
      ...f,
      fields: { ...f.fields, afterRemount: remounted ? "yes" : "no", shadowedBy: findShadow(insides, i) },
    };
  });
  return uniqueKeys(out);
}

export function parseBwrapArgv(text: string): Fact[] {
  return [...headerFact(text), ...parseArgvLines(bodyLines(text))];
}
