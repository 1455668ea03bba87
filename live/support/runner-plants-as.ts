// Every runner-plants case (runner-plants-cases.ts) as another identity (an unprivileged uid, under
// setpriv): the launcher, the stand-in broker, the session and the control's child are that uid's,
// in a world under <root> that it owns. Prints one JSON line: { uid, cases: { <plant>: PlantObserved } }.
// `node live/support/runner-plants-as.ts <root>`
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { PLANTS, plantCase, type PlantObserved } from "./runner-plants-cases.ts";

const [root] = process.argv.slice(2) as [string];
const w = await makeRuntimeWorld("plants", { root });
const cases: Record<string, PlantObserved> = {};
try {
  // The host's state (the probe's seccomp program, the runner's node) is this uid's too.
  for (const plant of PLANTS)
    cases[plant] = await plantCase(w, plant, `as-${plant}`, { ...w.hostEnv, MOSAIC_STATE_DIR: w.stateDir });
} finally {
  await w.close();
}
process.stdout.write(JSON.stringify({ uid: process.getuid?.() ?? -1, cases }) + "\n");
process.exit(0);
