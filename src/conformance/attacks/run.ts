import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { binds, mountStubs } from "../../core/sandbox/binds.ts";
import { bwrapArgv } from "../../core/sandbox/bwrap-argv.ts";
import { dropToSession } from "../../core/sandbox/identity.ts";
import { SECCOMP_RULES, seccompArchOf, seccompProgram } from "../../core/sandbox/seccomp.ts";
import { realFsView } from "../../host/fs-view.ts";
import { removeMountStubs } from "../../host/mount-stubs.ts";
import { checkWorkspace } from "../../host/workspace-check.ts";
import type { WorkspaceCheck } from "../../core/workspace/remedy.ts";
import { runConfined } from "../worlds/sandbox-run.ts";
import { layer, type Planned } from "./layers.ts";
import { workspaceSnapshot, type AttackRow, type Outcome } from "./table.ts";
import { chownTree, type AttackWorld } from "./world.ts";

/**
 * Runs one row's script in a sandbox the shipped planner made for the world, with the named layers
 * removed on purpose, then puts the host back as it was. The sandbox is spawned as the launcher
 * spawns it (runConfined → spawnSandbox), as the world's identity.
 */
export type AttackResult = Outcome & { through: boolean; stubsLeft: string[]; check: WorkspaceCheck | null };

/** Where the host's end-of-session check puts what it quarantines, in the world's state directory. */
export const quarantineOf = (w: AttackWorld) => join(w.root, "state/quarantine", basename(w.run));

export async function runAttack(w: AttackWorld, row: AttackRow, removed: readonly string[]): Promise<AttackResult> {
  const before = workspaceSnapshot(w);
  const saved = row.setup?.(w);
  const fs = realFsView();
  const spec = removed.includes("no-launch-socket") ? { ...w.spec, mayLaunch: true } : w.spec;
  let p: Planned = {
    spec,
    binds: binds(spec, w.facts, fs),
    argv: [],
    seccomp: SECCOMP_RULES,
    cgroups: { pids: true, memory: true },
    dropSession: true,
    runnerNode: w.facts.runnerNode,
    endCheck: true,
  };
  for (const id of removed) p = layer(id).remove(p, { readableNode: w.readableNode, founderHome: w.stand.founderHome });
  const planned = mountStubs(spec, fs);
  let argv = bwrapArgv(p.spec, { ...w.facts, runnerNode: p.runnerNode }, p.binds);
  for (const f of p.argv) argv = f(argv);
  // Without the drop a root caller's session is kuid 0, and the launcher would not have handed it
  // its workspace and run: they stay the caller's.
  const owner = p.dropSession || w.uid !== 0 ? w.session : { uid: 0, gid: 0 };
  chownTree(w.data, owner);
  const script = join(w.run, "attack.sh");
  writeFileSync(script, row.script(w) + "\n");
  chownSync(script, owner.uid, owner.gid);
  for (const k of Object.keys(w.connections) as Array<keyof typeof w.connections>) w.connections[k] = 0;
  const arch = seccompArchOf(w.facts.arch)!;
  const command = [...w.asIdentity, ...(p.dropSession ? dropToSession(w.facts) : []), ...argv];
  let check: WorkspaceCheck | null = null;
  try {
    const r = await runConfined({
      command: row.wrap ? row.wrap(command) : command,
      env: w.env,
      facts: w.facts,
      timeoutMs: row.timeoutMs ?? 30_000,
      stdin: `${w.capability}\n`,
      seccomp: seccompProgram(arch, p.seccomp ?? SECCOMP_RULES).bytes,
      cgroups: p.cgroups,
    });
    const outcome: Outcome = { out: r.stdout, status: r.status, signal: r.signal, stderr: r.stderr };
    // What the launcher does when a session ends: the placeholders go, then the host checks the workspace.
    const left = removeMountStubs(planned).kept;
    if (p.endCheck) check = checkWorkspace(w.ws, quarantineOf(w));
    const through = row.through(outcome, w);
    return { ...outcome, through, stubsLeft: left, check };
  } finally {
    putBack(w, check);
    row.teardown?.(w, saved);
    restoreWorld(w, before);
  }
}

/** Moves what the check quarantined back where it was, so the next row meets the world as it was made. */
function putBack(w: AttackWorld, check: WorkspaceCheck | null): void {
  if (check !== null && check.verdict !== "clean") {
    for (const d of check.done) {
      if (d.did !== "moved" || existsSync(join(w.ws, d.path))) continue;
      mkdirSync(dirname(join(w.ws, d.path)), { recursive: true });
      renameSync(join(check.quarantine, d.to!), join(w.ws, d.path));
    }
  }
  rmSync(quarantineOf(w), { recursive: true, force: true });
}

/** Puts the run directory and the workspace back as the host had them before a run. */
function restoreWorld(w: AttackWorld, before: ReturnType<typeof workspaceSnapshot>): void {
  writeFileSync(join(w.run, "bundle/policy.json"), '{"policy":"as the host wrote it"}\n');
  writeFileSync(join(w.run, "session.json"), '{"session":"as the host wrote it"}\n');
  for (const f of ["policy-link", "new.json", "attack.sh"]) rmSync(join(w.run, f), { force: true });
  if (existsSync(join(w.ws, ".git-aside"))) {
    rmSync(join(w.ws, ".git"), { recursive: true, force: true });
    renameSync(join(w.ws, ".git-aside"), join(w.ws, ".git"));
  }
  for (const n of readdirSync(w.ws))
    if (!before.top.includes(n)) rmSync(join(w.ws, n), { recursive: true, force: true });
  for (const n of readdirSync(join(w.ws, ".git/hooks")))
    if (!before.hooks.includes(n)) rmSync(join(w.ws, ".git/hooks", n), { force: true });
  rmSync(join(w.ws, ".vscode/tasks.json"), { force: true });
  writeFileSync(join(w.ws, ".git/config"), before.config);
  chmodSync(w.run, 0o755);
  chmodSync(join(w.run, "sock"), 0o700);
  chownTree(w.data, w.session);
}
