// The turn-stale-marker case (turn-marker.ts) as another identity (an unprivileged uid, under
// setpriv): the launcher, the stand-in broker and the session are that uid's, in a world under
// <root> that it owns. Prints one JSON line: { uid, replies }. `node live/support/turn-marker-as.ts <root> <case>`
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { markerTurns, type MarkerCase } from "./turn-marker.ts";

const [root, which] = process.argv.slice(2) as [string, MarkerCase];
const w = await makeRuntimeWorld("marker", { root });
try {
  // The host's state (the probe's seccomp program, the runner's node) is this uid's too.
  const replies = await markerTurns(w, "marker", which, { ...w.hostEnv, MOSAIC_STATE_DIR: w.stateDir });
  process.stdout.write(JSON.stringify({ uid: process.getuid?.() ?? -1, replies }) + "\n");
} finally {
  await w.close();
}
process.exit(0);
