// One arm of the attack table: the row's script sent to a session the shipped launcher started on
// the world's attack host (prepareLaunch(), the named layers removed on purpose, start()), judged by
// what it changed on the host, then the host put back as it was for the next arm.
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { WorkspaceCheck } from "../../core/workspace/remedy.ts";
import type { ArmRequest, ArmResult } from "./host-protocol.ts";
import { workspaceSnapshot, type AttackRow, type Outcome } from "./table.ts";
import { chownTree, type AttackWorld } from "./world.ts";

export type AttackResult = Outcome & {
  through: boolean;
  /** The runner ran the attack to its end and sent its result back (asRunner rows: the script printed its end). */
  ran: boolean;
  stubsLeft: string[];
  check: WorkspaceCheck | null;
  /** The launcher refused to plan the launch, and nothing ran. */
  refused: { code: string; message: string } | null;
};

/** What every script ends with: the line that shows it ran to its end, whatever it did before. */
export const ATTACK_END = "ATTACK-END";

/** Where the host's end-of-session check puts what it quarantines for this arm. */
export const quarantineOf = (w: AttackWorld, run: string) => join(w.root, "state/quarantine", run);

let arms = 0;

export async function runAttack(
  w: AttackWorld,
  row: AttackRow,
  removed: readonly string[],
  plan?: ArmRequest["plan"],
): Promise<AttackResult> {
  const name = `a${process.pid % 1000}-${++arms}`;
  const arm: AttackWorld = { ...w, run: join(w.data, "runs", name), capability: "" };
  const before = workspaceSnapshot(arm);
  const saved = row.setup?.(arm);
  // Without the drop a root caller's session is kuid 0, and the launcher hands it nothing: the trees stay the caller's.
  if (w.uid === 0 && removed.includes("session-uid")) chownTree(w.data, { uid: 0, gid: 0 });
  for (const k of Object.keys(w.connections) as Array<keyof typeof w.connections>) w.connections[k] = 0;
  // A subshell, so a script that exits early still reaches its end line.
  const end = row.asRunner ? `echo "${ATTACK_END} $?" >&2` : `echo "${ATTACK_END} $?"`;
  const script = `(\n${row.script(arm)}\n)\n${end}\n`;
  let r: ArmResult | null = null;
  let during: unknown;
  try {
    r = await w.arm(
      {
        name,
        removed,
        script,
        asRunner: row.asRunner === true,
        turnTimeoutSeconds: Math.ceil((row.timeoutMs ?? 30_000) / 1000),
        ...(plan !== undefined ? { plan } : {}),
        ...(row.during !== undefined ? { pause: true } : {}),
      },
      { terminal: row.terminal === true, paused: () => void (during = row.during?.(arm)) },
    );
    if (r.error !== undefined) throw new Error(`the attack host could not run ${row.id}: ${r.error}`);
    arm.capability = r.capability;
    w.connections.launch = r.launchConnects;
    const outcome: Outcome = {
      out: r.out,
      status: r.exit.kind === "code" ? r.exit.code : null,
      signal: r.exit.kind === "signal" ? r.exit.signal : null,
      stderr: `${r.stderr}\n-- the turn's stderr\n${r.turnStderr}`,
      replied: r.replied,
      during,
    };
    const ran = (row.asRunner === true || r.replied) && r.out.includes(ATTACK_END);
    return {
      ...outcome,
      through: row.through(outcome, arm),
      ran,
      stubsLeft: r.stubsLeft,
      check: r.check,
      refused: r.refused ?? null,
    };
  } finally {
    putBack(w, r?.check ?? null, name);
    row.teardown?.(arm, saved);
    restoreWorld(w, before, arm.run);
  }
}

/** Moves what the check quarantined back where it was, so the next row meets the world as it was made. */
function putBack(w: AttackWorld, check: WorkspaceCheck | null, run: string): void {
  if (check !== null && check.verdict !== "clean") {
    for (const d of check.done) {
      if (d.did !== "moved" || existsSync(join(w.ws, d.path))) continue;
      // A name shown with \xNN escapes is no string's: the row's own teardown puts its workspace back.
      if (d.path.includes("\\")) continue;
      mkdirSync(dirname(join(w.ws, d.path)), { recursive: true });
      renameSync(join(check.quarantine, d.to!), join(w.ws, d.path));
    }
  }
  rmSync(quarantineOf(w, run), { recursive: true, force: true });
}

/** Puts the workspace back as the host had it before a run, and removes the arm's run. */
function restoreWorld(w: AttackWorld, before: ReturnType<typeof workspaceSnapshot>, run: string): void {
  rmSync(run, { recursive: true, force: true });
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
  chmodSync(w.ws, 0o755);
  chownTree(w.data, w.session);
}
