// The protected families case (protected-families.ts) as another identity (an unprivileged uid,
// under setpriv): the launcher, the stand-in broker and the session are that uid's, in a world
// under <root> that it owns. Prints one JSON line: { blocked, control }, each a FamilyRun.
//   node live/support/protected-families-as.ts <root>
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { familyWrites } from "./protected-families.ts";

const [root] = process.argv.slice(2) as [string];
const w = await makeRuntimeWorld("families", { root });
try {
  // The host's state (the probe's seccomp program, the runner's node) is this uid's too.
  const hostEnv = { ...w.hostEnv, MOSAIC_STATE_DIR: w.stateDir };
  const blocked = await familyWrites(w, "families", false, hostEnv);
  const control = await familyWrites(w, "families-control", true, hostEnv);
  process.stdout.write(`${JSON.stringify({ blocked, control })}\n`);
} finally {
  await w.close();
}
process.exit(0);
