// A launcher in a process of its own, for the tests where the host dies hard:
// `node host-process.ts [--runner-outlives-bwrap] <request.json> [<request.json> ...]`, one
// capability a line on stdin, in the same order. It launches each, prints
// `LAUNCHED <bwrap pid> <run>` for each, and waits to be killed. `--runner-outlives-bwrap` starts
// each runner without its parent-death signal, on purpose: a runner that outlives its bwrap.
import { readFileSync } from "node:fs";
import { prepareLaunch, start, type LaunchRequest } from "../../host/launcher.ts";
import { withoutParentDeathSignal } from "../controls/argv.ts";

const OUTLIVES = "--runner-outlives-bwrap";
const outlives = process.argv[2] === OUTLIVES;

const caps = readFileSync(0, "utf8").trim().split("\n");
for (const [i, file] of process.argv.slice(outlives ? 3 : 2).entries()) {
  const req = JSON.parse(readFileSync(file, "utf8")) as Omit<LaunchRequest, "bus">;
  const cap = caps[i]!.trim();
  const p = prepareLaunch({ ...req, bus: { issueCapability: () => cap, endRun: () => {} } });
  if (p.kind !== "ready") {
    process.stdout.write(`REFUSED ${p.code}\n`);
    process.exit(1);
  }
  const prepared = outlives
    ? { ...p.prepared, session: { ...p.prepared.session, argv: withoutParentDeathSignal(p.prepared.session.argv) } }
    : p.prepared;
  const s = await start(prepared);
  process.stdout.write(`LAUNCHED ${s.pid} ${req.instance.run}\n`);
}
setInterval(() => {}, 1 << 30);
