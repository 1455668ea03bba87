// The leavings case (workspace-leavings.ts) as another identity (an unprivileged uid, under
// setpriv): the launcher, the stand-in broker, the session and the founder's git are that uid's, in
// a world under <root> that it owns. Prints one JSON line: the Leavings.
//   node live/support/workspace-leavings-as.ts <root>
import { spawnSync } from "node:child_process";
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { leaveAndRelaunch } from "./workspace-leavings.ts";

const [root] = process.argv.slice(2) as [string];
const w = await makeRuntimeWorld("leavings", { root });
try {
  // The host's state (the probe's seccomp program, the runner's node) is this uid's too.
  const r = await leaveAndRelaunch(w, "leavings", { ...w.hostEnv, MOSAIC_STATE_DIR: w.stateDir });
  process.stdout.write(`${JSON.stringify(r)}\n`);
} finally {
  // rm -rf walks by descriptor: what is left past PATH_MAX (in the quarantine) cannot be removed by path.
  spawnSync("rm", ["-rf", w.stateDir, w.data]);
  await w.close();
}
process.exit(0);
