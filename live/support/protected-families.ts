// The auto-run config families of the protected table (PROTECTED_FAMILIES) through the real
// launcher and runner: a fake-adapter session tries to write every name of every family, absent
// ones and ones the founder has, and reports each; then the founder's workspace is read. The
// control launches the same session with those binds taken out of the plan on purpose. Used by
// live/protected-families.test.ts as the tests' own identity and, through
// protected-families-as.ts, as an unprivileged uid.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROTECTED_FAMILIES } from "../../src/core/sandbox/protected.ts";
import { launchWithBinds } from "../../src/conformance/controls/launch.ts";
import { ask, waitClaimed, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { prepareLaunch, start } from "../../src/host/launcher.ts";

/** Every family name, files and directories, and the ones the founder already has (with their text). */
export const FAMILY_FILES = Object.values(PROTECTED_FAMILIES).flatMap((f) => [...f.files]);
export const FAMILY_DIRS = Object.values(PROTECTED_FAMILIES).flatMap((f) => [...f.dirs]);
export const FOUNDERS = {
  "lefthook-local.yml": "pre-commit:\n  jobs: []\n",
  ".gitlab-ci.yml": "test:\n  script: true\n",
};

export interface FamilyRun {
  uid: number;
  /** Per name: WROTE when the session could write it (a file, or a file in the directory), else REFUSED. */
  writes: Record<string, string>;
  /** After the session: the founder's files' text, and every absent name left behind on the host. */
  founders: Record<string, string>;
  leftBehind: string[];
}

/** The session's script: one line per name, `WROTE <name>` or `REFUSED <name>`. */
function tryWrites(): string {
  const file = (n: string) => `(printf planted > '${n}') 2>/dev/null && echo 'WROTE ${n}' || echo 'REFUSED ${n}'`;
  const dir = (n: string) =>
    `(mkdir -p '${n}' && printf planted > '${n}/planted') 2>/dev/null && echo 'WROTE ${n}' || echo 'REFUSED ${n}'`;
  return [...FAMILY_FILES.map(file), ...FAMILY_DIRS.map(dir)].join("; ");
}

/** Launches a session in a fresh workspace holding the founder's files, with the families' binds, or (control) without them. */
export async function familyWrites(
  w: RuntimeWorld,
  name: string,
  control: boolean,
  hostEnv = w.hostEnv,
): Promise<FamilyRun> {
  const inst = w.instance("pi-coder", name);
  for (const [n, text] of Object.entries(FOUNDERS)) writeFileSync(join(inst.workspace, n), text);
  const p = prepareLaunch(w.request(inst, { hostEnv }));
  if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
  const family = new Set([...FAMILY_FILES, ...FAMILY_DIRS].map((n) => join(inst.workspace, n)));
  const prepared = control ? launchWithBinds(p.prepared, (t) => t.filter((b) => !family.has(b.inside))) : p.prepared;
  const s = await start(prepared);
  let reply = "";
  try {
    await waitClaimed(w, s, inst.run);
    reply = await ask(w, inst.instance, tryWrites());
  } finally {
    await s.stop();
  }
  const writes = Object.fromEntries(
    reply.split("\n").flatMap((l) => (l === "" ? [] : [[l.split(" ")[1]!, l.split(" ")[0]!]])),
  );
  const founders = Object.fromEntries(
    Object.keys(FOUNDERS).map((n) => [n, readFileSync(join(inst.workspace, n), "utf8")]),
  );
  const leftBehind = [...FAMILY_FILES, ...FAMILY_DIRS].filter(
    (n) => !(n in FOUNDERS) && existsSync(join(inst.workspace, n)),
  );
  return { uid: process.getuid?.() ?? -1, writes, founders, leftBehind };
}
