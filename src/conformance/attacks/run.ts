import { chownSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binds, placeholders } from "../../core/sandbox/binds.ts";
import { bwrapArgv } from "../../core/sandbox/bwrap-argv.ts";
import { SECCOMP_RULES, seccompArchOf, seccompProgram } from "../../core/sandbox/seccomp.ts";
import { realFsView } from "../../host/fs-view.ts";
import { removePlaceholders } from "../../host/placeholders.ts";
import { runConfined } from "../sandbox-run.ts";
import { layer, type Planned } from "./layers.ts";
import { workspaceSnapshot, type AttackRow, type Outcome } from "./table.ts";
import type { AttackWorld } from "./world.ts";

/**
 * Runs one row's script in a sandbox the shipped planner made for the world, with the named layers
 * removed on purpose, then puts the host back as it was. The sandbox is spawned as the launcher
 * spawns it (runConfined → spawnSandbox), as the world's identity.
 */
export type AttackResult = Outcome & { through: boolean; placeholdersLeft: string[] };

export async function runAttack(w: AttackWorld, row: AttackRow, removed: readonly string[]): Promise<AttackResult> {
  const before = workspaceSnapshot(w);
  const fs = realFsView();
  const spec = removed.includes("no-launch-socket") ? { ...w.spec, mayLaunch: true } : w.spec;
  let p: Planned = { spec, binds: binds(spec, w.facts, fs), argv: [], seccomp: SECCOMP_RULES, cgroup: true, runnerNode: w.facts.runnerNode };
  for (const id of removed) p = layer(id).remove(p, { readableNode: w.readableNode, founderHome: w.stand.founderHome });
  const planned = placeholders(spec, fs);
  let argv = bwrapArgv(p.spec, { ...w.facts, runnerNode: p.runnerNode }, p.binds);
  for (const f of p.argv) argv = f(argv);
  const script = join(w.run, "attack.sh");
  writeFileSync(script, row.script(w) + "\n");
  if (w.uid !== (process.getuid?.() ?? -1)) chownSync(script, w.uid, w.uid);
  for (const k of Object.keys(w.connections) as Array<keyof typeof w.connections>) w.connections[k] = 0;
  const arch = seccompArchOf(w.facts.arch)!;
  const command = [...w.asIdentity, ...argv];
  try {
    const r = await runConfined({
      command: row.wrap ? row.wrap(command) : command,
      env: w.env,
      facts: w.facts,
      timeoutMs: 30_000,
      stdin: `${w.capability}\n`,
      seccomp: seccompProgram(arch, p.seccomp ?? SECCOMP_RULES).bytes,
      cgroup: p.cgroup,
    });
    const outcome: Outcome = { out: r.stdout, status: r.status, signal: r.signal, stderr: r.stderr };
    const through = row.through(outcome, w);
    const left = removePlaceholders(planned).kept;
    return { ...outcome, through, placeholdersLeft: left };
  } finally {
    restoreWorld(w, before);
  }
}

/** Puts the run directory and the workspace back as the host had them before a run. */
function restoreWorld(w: AttackWorld, before: ReturnType<typeof workspaceSnapshot>): void {
  const own = (p: string) => {
    if (w.uid !== (process.getuid?.() ?? -1)) chownSync(p, w.uid, w.uid);
  };
  writeFileSync(join(w.run, "bundle/policy.json"), "{\"policy\":\"as the host wrote it\"}\n");
  writeFileSync(join(w.run, "session.json"), "{\"session\":\"as the host wrote it\"}\n");
  for (const f of ["policy-link", "new.json", "attack.sh"]) rmSync(join(w.run, f), { force: true });
  if (existsSync(join(w.ws, ".git-aside"))) {
    rmSync(join(w.ws, ".git"), { recursive: true, force: true });
    renameSync(join(w.ws, ".git-aside"), join(w.ws, ".git"));
  }
  for (const n of readdirSync(w.ws)) if (!before.top.includes(n)) rmSync(join(w.ws, n), { recursive: true, force: true });
  for (const n of readdirSync(join(w.ws, ".git/hooks"))) if (!before.hooks.includes(n)) rmSync(join(w.ws, ".git/hooks", n), { force: true });
  rmSync(join(w.ws, ".vscode/tasks.json"), { force: true });
  writeFileSync(join(w.ws, ".git/config"), before.config);
  for (const p of [join(w.run, "bundle/policy.json"), join(w.run, "session.json"), join(w.ws, ".git/config")]) own(p);
}
