// The bwrap argv golden (one option with its operands a line, the runner's command after `--`)
// as facts: binds keyed by where they mount, options by name, the command split at its wrapper.
import { uniqueKeys, type Fact } from "./model.ts";
import { findShadow } from "./parse-binds.ts";
import { bodyLines, fact, headerFact, type Line } from "./parse-lines.ts";

/** bwrap's mount options and how wide a view each gives; the last operand is where it mounts. */
export const BWRAP_MOUNTS: Readonly<Record<string, { width: number; why: string }>> = {
  "--tmpfs": { width: 0, why: "an empty private directory" },
  "--dev": { width: 0, why: "a private /dev with no host device" },
  "--proc": { width: 0, why: "the session's own /proc" },
  "--mqueue": { width: 0, why: "a private message-queue mount" },
  "--dir": { width: 0, why: "an empty directory" },
  "--symlink": { width: 0, why: "a link, showing nothing of the host by itself" },
  "--ro-bind-data": { width: 1, why: "a read-only file from a descriptor" },
  "--bind-data": { width: 2, why: "a writable file from a descriptor" },
  "--file": { width: 2, why: "a writable file from a descriptor" },
  "--ro-bind": { width: 1, why: "a host path, read-only" },
  "--ro-bind-try": { width: 1, why: "a host path, read-only, skipped when missing" },
  "--bind": { width: 2, why: "a host path, writable" },
  "--bind-try": { width: 2, why: "a host path, writable, skipped when missing" },
  "--dev-bind": { width: 3, why: "a host path with its devices usable" },
  "--dev-bind-try": { width: 3, why: "a host path with its devices usable, skipped when missing" },
};

const TWO_OPERANDS = new Set(["--ro-bind", "--ro-bind-try", "--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--symlink", "--ro-bind-data", "--bind-data", "--file"]);

/** One argv line to its fact; `afterRemount` is filled in once the whole argv is read. */
function readArgvLine(l: Line, at: string): Fact {
  const t = l.text.trim();
  const [opt = "", ...ops] = t.split(" ");
  if (opt === "--") {
    // setpriv and its options wrap the runner: keep them apart, so losing one is its own change.
    const rest = ops;
    const end = rest[0] === "setpriv" ? rest.indexOf("--") : -1;
    const wrapper = end === -1 ? "" : rest.slice(0, end + 1).join(" ");
    const runner = (end === -1 ? rest : rest.slice(end + 1)).join(" ");
    return fact("bwrap-command", "command", { wrapper, runner }, l, at);
  }
  if (opt in BWRAP_MOUNTS) {
    const dest = ops.at(-1) ?? "";
    const source = TWO_OPERANDS.has(opt) ? ops.slice(0, -1).join(" ") : "";
    return fact("bwrap-mount", dest, { option: opt, source, afterRemount: "no", shadowedBy: "" }, l, at);
  }
  if (opt === "--remount-ro") return fact("bwrap-remount", ops.join(" "), {}, l, at);
  if (opt === "--setenv") return fact("bwrap-setenv", ops[0] ?? "", { value: ops.slice(1).join(" ") }, l, at);
  if (opt === "--unsetenv") return fact("bwrap-unsetenv", ops[0] ?? "", {}, l, at);
  if (opt === "--chdir") return fact("bwrap-chdir", "chdir", { dir: ops.join(" ") }, l, at);
  if (opt === "bwrap" && ops.length === 0) return fact("bwrap-program", "program", { program: opt }, l, at);
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
    return { ...f, fields: { ...f.fields, afterRemount: remounted ? "yes" : "no", shadowedBy: findShadow(insides, i) } };
  });
  return uniqueKeys(out);
}

export function parseBwrapArgv(text: string): Fact[] {
  return [...headerFact(text), ...parseArgvLines(bodyLines(text))];
}
