// Running a live support script as an unprivileged uid: 65534 under setpriv when the tests run as
// root (CI), else the tests' own uid. The script gets a fresh root under /var/tmp that the uid
// owns, removed afterwards, and reports on its last stdout line.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";

export const USER_UID = 65534;
const self = process.getuid?.() ?? -1;
/** Whether this process is root, so the scripts run as USER_UID under setpriv. */
export const runsAsRoot = self === 0;
/** The uid the scripts run as. */
export const userUid = runsAsRoot ? USER_UID : self;

/** Runs `node <script> <root> ...args` as userUid; its last stdout line, and its stderr's tail. */
export function runAsUser(
  script: string,
  prefix: string,
  args: readonly string[],
  timeoutMs: number,
): { line: string; stderr: string } {
  const root = mkdtempSync(`/var/tmp/${prefix}-`);
  try {
    chmodSync(root, 0o755);
    if (runsAsRoot) chownSync(root, USER_UID, USER_UID);
    const as = runsAsRoot ? ["setpriv", `--reuid=${USER_UID}`, `--regid=${USER_UID}`, "--clear-groups", "--"] : [];
    const argv = [...as, process.execPath, join(REPO_ROOT, script), root, ...args];
    // Pi's preflight runs `pi --version`, which needs the pinned node first on PATH.
    const env = {
      PATH: `${join(REPO_ROOT, "node_modules/.bin")}:/usr/bin:/bin`,
      HOME: "/nonexistent",
      LANG: "C.UTF-8",
    };
    const r = spawnSync(argv[0]!, argv.slice(1), { env, encoding: "utf8", timeout: timeoutMs });
    return { line: (r.stdout ?? "").trim().split("\n").at(-1) ?? "", stderr: (r.stderr ?? "").slice(-1500) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
