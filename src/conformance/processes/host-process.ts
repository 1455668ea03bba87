// A launcher in a process of its own, for the tests where the host dies hard:
// `node host-process.ts <request.json> [<request.json> ...]`, one capability a line on stdin, in
// the same order. It launches each, prints `LAUNCHED <bwrap pid> <run>` for each, and waits to be
// killed.
import { readFileSync } from "node:fs";
import { prepareLaunch, start, type LaunchRequest } from "../../host/launcher.ts";

const caps = readFileSync(0, "utf8").trim().split("\n");
for (const [i, file] of process.argv.slice(2).entries()) {
  const req = JSON.parse(readFileSync(file, "utf8")) as Omit<LaunchRequest, "bus">;
  const cap = caps[i]!.trim();
  const p = prepareLaunch({ ...req, bus: { issueCapability: () => cap, endRun: () => {} } });
  if (p.kind !== "ready") {
    process.stdout.write(`REFUSED ${p.code}\n`);
    process.exit(1);
  }
  const s = start(p.prepared);
  process.stdout.write(`LAUNCHED ${s.pid} ${req.instance.run}\n`);
}
setInterval(() => {}, 1 << 30);
