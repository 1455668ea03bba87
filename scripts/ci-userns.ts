// `sudo npm run ci:userns` (CI only, as root): lift the kernel switches that forbid unprivileged
// user namespaces on a throwaway runner (Ubuntu 24.04's AppArmor restriction), writing a switch only
// where it forbids them, then prove bwrap can make one as the invoking user (SUDO_UID).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const SWITCHES: [string, string][] = [
  ["/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0"],
  ["/proc/sys/kernel/unprivileged_userns_clone", "1"],
];
for (const [file, allow] of SWITCHES) {
  if (!existsSync(file) || readFileSync(file, "utf8").trim() === allow) continue;
  writeFileSync(file, `${allow}\n`);
  console.log(`ci:userns: ${file} = ${allow}`);
}
const uid = process.env.SUDO_UID;
const as = uid ? ["setpriv", `--reuid=${uid}`, `--regid=${process.env.SUDO_GID ?? uid}`, "--clear-groups", "--"] : [];
const r = spawnSync(
  as[0] ?? "bwrap",
  [...as.slice(1), ...(as.length ? ["bwrap"] : []), "--unshare-user", "--ro-bind", "/", "/", "true"],
  {
    stdio: "inherit",
  },
);
if (r.status !== 0) {
  console.error(`ci:userns: bwrap cannot make a user namespace${uid ? ` as uid ${uid}` : ""}`);
  process.exitCode = 1;
} else console.log(`ci:userns: bwrap makes a user namespace${uid ? ` as uid ${uid}` : ""}`);
