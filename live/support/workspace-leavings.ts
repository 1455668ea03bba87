// What a session can leave in its workspace to defeat the end-of-session check or the next launch,
// through the real launcher and runner (the fake adapter runs each message as a shell script in the
// sandbox): a setuid file and a nested repository under a name that is not UTF-8, a fifo HEAD
// beside objects/ and refs/ (git discovers that directory and reads the fifo), and a tree 2,100
// levels deep (past PATH_MAX). Used by live/workspace-check.test.ts as the tests' own identity and,
// through workspace-leavings-as.ts, as an unprivileged uid.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ask, launchAndClaim, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";

/** The name that is not UTF-8: "bad" and the byte ff, as the session's shell writes it. */
const BAD = "bad\\377";
const badPath = (ws: string, rest: string) => Buffer.from(`${ws}/bad\xff/${rest}`, "latin1");
export const LEVELS = 2_100;

/** What the founder's shell would see, the check skipped (before the session ends) and after it. */
export interface Looks {
  /** The founder's git status in bad\xff/sub ran the session's fsmonitor. */
  nestedRan: boolean;
  /** The founder's git status in fifo/ did not return within its time. */
  fifoHung: boolean;
  /** id-copy under bad\xff still has its setuid bit. */
  setuid: boolean;
  /** A walk of the deep tree by path, as the handover once walked: the error that stopped it (ENAMETOOLONG past PATH_MAX), "" when it went through. */
  deepPath: string;
}

export interface Leavings {
  uid: number;
  planted: string;
  before: Looks;
  verdict: string;
  done: Array<[string, string, string]>;
  after: Looks;
  again: { reply: string; verdict: string };
}

/** The founder's shell in the workspace: a line of sh, with a time bound; its status and whether it timed out. */
function asFounder(ws: string, line: string, timeout: number): { hung: boolean; status: number | null } {
  const r = spawnSync("/bin/sh", ["-c", line], {
    cwd: ws,
    timeout,
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
  });
  return { hung: (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT", status: r.status };
}

function look(ws: string, marker: string): Looks {
  rmSync(marker, { force: true });
  asFounder(ws, `cd "$(printf '${BAD}')/sub" && git -c safe.directory='*' status`, 20_000);
  const nestedRan = existsSync(marker);
  const fifo = asFounder(ws, "cd fifo && git -c safe.directory='*' status", 8_000);
  const st = lstatSync(badPath(ws, "id-copy"), { throwIfNoEntry: false });
  return {
    nestedRan,
    fifoHung: fifo.hung,
    setuid: st !== undefined && (st.mode & 0o4000) !== 0,
    deepPath: walkByPath(join(ws, "deep")),
  };
}

/** Every entry under dir by its path (readdir and lstat of joined paths): the error code that stopped it, or "". */
function walkByPath(dir: string): string {
  const stack = [dir];
  try {
    while (stack.length > 0) {
      const d = stack.pop()!;
      for (const n of readdirSync(d)) if (lstatSync(join(d, n)).isDirectory()) stack.push(join(d, n));
    }
    return "";
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

/** The session's plant: one shell script, run in the sandbox in the workspace. */
function plant(marker: string): string {
  return [
    `mkdir "$(printf '${BAD}')" && cd "$(printf '${BAD}')"`,
    "cp /usr/bin/id id-copy && chmod 4755 id-copy",
    `git init -q sub && git -C sub config core.fsmonitor 'touch ${marker};:'`,
    'cd "$MOSAIC_WORKSPACE" && mkdir -p fifo/objects fifo/refs && mkfifo fifo/HEAD',
    // 100 levels a mkdir (fewer forks); -P: dash otherwise names the whole logical path to chdir, which fails past PATH_MAX.
    'p=d && i=1 && while [ $i -lt 100 ]; do p="$p/d"; i=$((i+1)); done',
    `mkdir deep && cd deep && j=0 && while [ $j -lt ${LEVELS / 100} ]; do mkdir -p "$p" && cd -P "$p" || exit 1; j=$((j+1)); done`,
    "echo PLANTED",
  ].join(" && ");
}

/** The founder's repository, as the founder leaves it before the session. */
function founderRepo(ws: string): void {
  const git = (...args: string[]) =>
    spawnSync("git", ["-c", "user.name=founder", "-c", "user.email=founder@invalid", ...args], {
      cwd: ws,
      env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
    });
  git("init", "-q");
  writeFileSync(join(ws, "README.md"), "the founder's project\n");
  git("add", ".");
  git("commit", "-qm", "founder");
}

/** Plants, looks (the check not yet run), stops (the check runs), looks again, launches once more on the same workspace. */
export async function leaveAndRelaunch(w: RuntimeWorld, name: string, hostEnv = w.hostEnv): Promise<Leavings> {
  const inst = w.instance("pi-coder", name);
  mkdirSync(inst.workspace, { recursive: true });
  founderRepo(inst.workspace);
  const marker = join(w.root, `host-ran-${name}`);
  // The plant makes 2,100 directories: a turn may take longer than the world's usual 20 s on a loaded machine.
  const timings = { pollMs: 100, brokerRetries: 5, brokerTimeoutSeconds: 2, turnTimeoutSeconds: 180 };
  const s = await launchAndClaim(w, w.request(inst, { hostEnv, timings }));
  const planted = await ask(w, inst.instance, plant(marker), "pm-test", 200_000);
  const before = look(inst.workspace, marker);
  const end = await s.stop();
  const check = end.workspace;
  const done =
    check.verdict === "clean" ? [] : check.done.map((d): [string, string, string] => [d.kind, d.path, d.did]);
  const after = look(inst.workspace, marker);
  const next = w.instance("pi-coder", name, { run: `${name}-2`, instance: `${name}-2` });
  const s2 = await launchAndClaim(w, w.request(next, { hostEnv }));
  const reply = await ask(w, next.instance, "echo AGAIN");
  const end2 = await s2.stop();
  return {
    uid: process.getuid?.() ?? -1,
    planted,
    before,
    verdict: check.verdict,
    done,
    after,
    again: { reply, verdict: end2.workspace.verdict },
  };
}
