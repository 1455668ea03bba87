// live/load.test.ts's waves as another identity (an unprivileged uid, under setpriv): the launcher,
// the stand-in broker and the sessions are that uid's, in a world under <root> that it owns. Prints
// one JSON line: { wave, crash }. `node live/support/load-as.ts <root> <n>`
import { makeRuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { crashWave, runWave } from "./load-wave.ts";

const [root, n] = process.argv.slice(2) as [string, string];
const w = await makeRuntimeWorld("load", { root });
// The host's state (the seccomp program, the runner's node) is this uid's too.
w.hostEnv.MOSAIC_STATE_DIR = w.stateDir;
try {
  const wave = await runWave(w, "u", Number(n));
  const crash = await crashWave(w, "uc", Math.max(2, Math.floor(Number(n) / 4)));
  process.stdout.write(JSON.stringify({ wave, crash }) + "\n");
} finally {
  await w.close();
}
