import { isAbsolute, isWithin } from "../paths.ts";
import { fileTool, type PathField } from "./file-tools.ts";
import type { FsEntry, FsView } from "./fs-view.ts";
import { claudeBaseToCheck, patternReadings, splitPattern } from "./pattern.ts";
import { describeRefusal, refusePattern } from "./pattern-rules.ts";
import { normaliseAbsolute, normalisePiPath, readSpellings, resolveLexical } from "./pi-paths.ts";
import { readGatePolicy, type GatePolicy } from "./policy-shape.ts";
import { resolvePhysical, type Resolution } from "./resolve.ts";

export type Decision = { allow: true } | { allow: false; reason: string };

const ALLOW: Decision = { allow: true };
const block = (reason: string): Decision => ({ allow: false, reason });

type Ctx = { policy: GatePolicy; fs: FsView; wsGiven: string; wsReal: string };

/**
 * One tool call in, allow or block out. Pure over the FsView; never throws: anything it cannot
 * make sense of is a block with a reason.
 */
export function decide(policy: unknown, tool: unknown, input: unknown, fs: FsView): Decision {
  try {
    return decideCall(policy, tool, input, fs);
  } catch (e) {
    return block(`the gate could not decide (${e instanceof Error ? e.message : String(e)}), so it blocks`);
  }
}

/** One answer per path within a decision: the candidates share their long prefixes. */
function memoised(fs: FsView): FsView {
  const seen = new Map<string, FsEntry>();
  return {
    lstat(path) {
      let e = seen.get(path);
      if (e === undefined) seen.set(path, (e = fs.lstat(path)));
      return e;
    },
  };
}

function decideCall(rawPolicy: unknown, tool: unknown, input: unknown, rawFs: FsView): Decision {
  const policy = readGatePolicy(rawPolicy);
  if ("malformed" in policy) return block(`the policy is malformed: ${policy.malformed}`);
  if (typeof tool !== "string") return block("the tool name is not a string");
  // An empty typed-tool list grants no name: it is not "any".
  // safety: gate-unknown-tool // safety: gate-empty-typed-allows
  if (!policy.builtInTools.includes(tool) && !policy.typedTools.includes(tool))
    return block(`${tool} is not one of this session's tools`);
  if (typeof input !== "object" || input === null || Array.isArray(input))
    return block(`${tool}: the input is not a JSON object`);
  const ft = fileTool(tool);
  if (ft === undefined) return ALLOW;

  const fs = memoised(rawFs);
  const ws = resolvePhysical(fs, policy.workspace);
  if (ws.kind !== "resolved" || !ws.exists)
    return block(`the workspace ${policy.workspace} does not resolve (${judge(ws, "/") ?? "it does not exist"})`);
  const ctx: Ctx = { policy, fs, wsGiven: policy.workspace, wsReal: ws.path };
  const args = input as Record<string, unknown>;
  for (const f of ft.fields) {
    const problem = checkField(ctx, f, args, ft.readSpellings);
    if (problem !== null) return block(`${tool} ${f.field}: ${problem}`);
  }
  return ALLOW;
}

function checkField(ctx: Ctx, f: PathField, args: Record<string, unknown>, spellings: boolean): string | null {
  const v = args[f.field];
  if (v === undefined) return f.required ? "missing" : null;
  if (typeof v !== "string") return "not a string";
  if (f.role === "path") return checkPath(ctx, v, spellings);
  for (const r of patternReadings(v)) {
    const problem = checkPattern(ctx, r.pattern, args);
    if (problem !== null) return `${r.how}${problem}`;
  }
  return null;
}

/** One reading of a pattern: the rules first, then its fixed parts as paths. */
function checkPattern(ctx: Ctx, v: string, args: Record<string, unknown>): string | null {
  // safety: gate-pattern-rules-unchecked
  const refused = refusePattern(v);
  if (refused !== null) return describeRefusal(refused);
  // Two fixed parts: the gate's own short cut, and the longer one Claude Code's Glob searches
  // (a ] } \ or extglob does not end it), which may go through a link the short one stops before.
  const bases = [{ what: "its fixed prefix", base: splitPattern(v).prefix }];
  // safety: gate-glob-base-unchecked
  bases.push({ what: "its fixed part as Claude Code's Glob cuts it,", base: claudeBaseToCheck(v) });
  for (const { what, base } of bases) {
    if (base === "") continue;
    // A base names a path on its own (a tool may expand ~ in it) and, when the tool has a path
    // argument, under that path too.
    const targets = [base];
    if (typeof args.path === "string" && !isAbsolute(base)) targets.push(`${args.path}/${base}`);
    for (const t of targets) {
      // safety: gate-no-pattern-prefix
      const problem = checkPath(ctx, t, false);
      if (problem !== null) return `${JSON.stringify(v)}: ${what} ${problem}`;
    }
  }
  return null;
}

type Candidate = { how: string; path: string };

/** Every absolute path a tool might open for this argument, each labelled for the reason. */
function candidates(ctx: Ctx, raw: string, normalised: string): Candidate[] {
  const out: Candidate[] = [];
  const names = [{ how: "", value: normalised }];
  // Claude Code opens the name as given, without Pi's normalisation: check that spelling too.
  // safety: gate-no-raw-name
  if (raw !== normalised) names.push({ how: "as given, ", value: raw });
  for (const { how, value } of names) {
    if (isAbsolute(value)) out.push({ how, path: normaliseAbsolute(value) });
    else {
      // Both adapters cd into the workspace, and a working directory is a real path: ".."
      // climbs the real path's parents. The as-given base is stricter than Pi, on purpose.
      // safety: gate-no-real-base
      out.push({ how: `${how}from the workspace's real path, `, path: resolveLexical(ctx.wsReal, value) });
      // safety: gate-no-given-base
      out.push({ how: `${how}from the workspace as given, `, path: resolveLexical(ctx.wsGiven, value) });
    }
    // Lexical ".." is what Pi and Claude Code open; a caller that hands ".." to the kernel
    // climbs from a link's target instead. Check that reading too.
    // safety: gate-no-physical-dotdot
    if (value.split("/").includes(".."))
      out.push({
        how: `${how}with ".." taken after links, `,
        path: isAbsolute(value) ? value : `${ctx.wsReal}/${value}`,
      });
  }
  return out;
}

function checkPath(ctx: Ctx, raw: string, spellings: boolean): string | null {
  if (raw.includes("\0")) return `${JSON.stringify(raw)} contains a NUL byte`;
  const n = normalisePiPath(raw, ctx.policy.home);
  if (!n.ok) return `${JSON.stringify(raw)}: ${n.why}`;
  // A file URL's %00 decodes to one: no tool can open such a name, and no view may be asked it.
  if (n.path.includes("\0"))
    return `${JSON.stringify(raw)} names a NUL byte once normalised (${JSON.stringify(n.path)})`; // safety: gate-nul-after-normalising
  const cands = candidates(ctx, raw, n.path);
  for (const c of cands) {
    const problem = judge(resolvePhysical(ctx.fs, c.path), ctx.wsReal);
    if (problem !== null) return `${JSON.stringify(raw)} ${c.how}${problem}`;
  }
  if (!spellings) return null;
  for (const c of cands) {
    for (const s of readSpellings(c.path)) {
      const r = resolvePhysical(ctx.fs, s.path);
      // A spelling that is not there is one Pi's read will not open.
      if (r.kind === "resolved" && !r.exists) continue;
      const problem = judge(r, ctx.wsReal);
      if (problem !== null)
        return `${JSON.stringify(raw)}: Pi's read may open its ${s.label} spelling ${JSON.stringify(s.path)}, which ${problem}`;
    }
  }
  return null;
}

/** Why a resolution is not a safe place inside the workspace, or null when it is. */
function judge(r: Resolution, wsReal: string): string | null {
  switch (r.kind) {
    case "resolved":
      // safety: gate-no-containment
      return isWithin(r.path, wsReal) ? null : `resolves to ${r.path}, outside the workspace`;
    case "dangling":
      return `goes through the dangling link ${r.link} -> ${r.target}`;
    case "too-many-links":
      return `meets a link cycle or more than 40 links at ${r.link}`;
    case "not-a-directory":
      return `uses the file ${r.at} as a directory`;
    case "unreadable":
      return `cannot be checked at ${r.at} (${r.why})`;
  }
}
