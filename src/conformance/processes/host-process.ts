// A launcher in a process of its own, for the tests where the host dies hard:
// `node host-process.ts <request.json>`, the capability on stdin. It launches, prints
// `LAUNCHED <bwrap pid>`, and waits to be killed.
import { readFileSync } from "node:fs";
import { prepareLaunch, start, type LaunchRequest } from "../../host/launcher.ts";

const req = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Omit<LaunchRequest, "bus">;
const cap = readFileSync(0, "utf8").trim();
const p = prepareLaunch({ ...req, bus: { issueCapability: () => cap, endRun: () => {} } });
if (p.kind !== "ready") {
  process.stdout.write(`REFUSED ${p.code}\n`);
  process.exit(1);
}
const s = start(p.prepared);
process.stdout.write(`LAUNCHED ${s.pid}\n`);
setInterval(() => {}, 1 << 30);
