// A positive control that removes one gate rule on purpose: a copy of the Claude Code hook's
// module graph with catalog mutants (mutants/gate.json) applied, which a prepared launch's hook
// runs instead of the checkout's. Each mutant undoes exactly its safety line, so the control
// removes that protection and nothing else.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { PreparedLaunch } from "../../host/launcher.ts";
import { importGraph } from "../../host/import-graph.ts";
import { exposedBind, withBindsBeforeLast } from "../controls/binds.ts";
import { launchWithBinds, launchWithSettings } from "../controls/launch.ts";
import { REPO_ROOT } from "../golden/golden.ts";

const HOOK = "src/host/claude-gate.ts";

type CatalogEntry = { id: string; file: string; find: string; replace: string };

/** The gate catalog's entries for these ids, each found: a control that removes nothing would pass as a proof. */
function gateMutants(ids: readonly string[]): CatalogEntry[] {
  const catalog = JSON.parse(readFileSync(join(REPO_ROOT, "mutants/gate.json"), "utf8")) as CatalogEntry[];
  return ids.map((id) => {
    const m = catalog.find((e) => e.id === id);
    if (m === undefined) throw new Error(`mutants/gate.json has no mutant ${id}`);
    return m;
  });
}

/**
 * Copies every file the hook loads under dir (readable by any uid, as a session's must be) with
 * the mutants applied; returns the copy's hook entry. Throws when a mutant's find does not match
 * its file exactly once, or names a file the hook does not load.
 */
export function gateCopyWithMutants(dir: string, ids: readonly string[]): string {
  const files = importGraph([join(REPO_ROOT, HOOK)]).files.map((f) => relative(REPO_ROOT, f));
  const texts = new Map(files.map((f) => [f, readFileSync(join(REPO_ROOT, f), "utf8")]));
  for (const m of gateMutants(ids)) {
    const text = texts.get(m.file);
    if (text === undefined) throw new Error(`${m.id}: the hook does not load ${m.file}`);
    const at = text.indexOf(m.find);
    if (at === -1 || text.indexOf(m.find, at + 1) !== -1)
      throw new Error(`${m.id}: find does not match ${m.file} once`);
    texts.set(m.file, text.slice(0, at) + m.replace + text.slice(at + m.find.length));
  }
  texts.set("package.json", '{"type":"module"}\n');
  const dirs = new Set([dir]);
  for (const [f, text] of texts) {
    const to = join(dir, f);
    for (let d = dirname(to); d !== dir; d = dirname(d)) dirs.add(d);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, text);
    chmodSync(to, 0o644);
  }
  for (const d of dirs) chmodSync(d, 0o755);
  return join(dir, HOOK);
}

/**
 * The prepared launch whose PreToolUse hook runs the copy at `entry` (under `dir`, bound read-only
 * into the sandbox) instead of the checkout's hook; throws when the hook command does not name it.
 */
export function launchWithGateCopy(p: PreparedLaunch, dir: string, entry: string): PreparedLaunch {
  const shipped = join(REPO_ROOT, HOOK);
  const q = launchWithSettings(p, "the gate copy", (settings) => {
    if (!settings.includes(shipped)) throw new Error(`the hook command does not run ${shipped}`);
    return settings.split(shipped).join(entry);
  });
  return launchWithBinds(q, (t) => withBindsBeforeLast(t, [exposedBind(dir)]));
}
