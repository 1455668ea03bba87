// contract/launcher-sweep-start.test.ts's child: start() under a umask, which a test's worker
// thread cannot set. Argv: the prepared launch's JSON file (its bus is a stand-in here) and the
// umask. Prints the modes of the run directory, its home and the session's passwd, or the failure's code.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type PreparedLaunch, start } from "../../src/host/launcher.ts";

const p = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as PreparedLaunch;
process.umask(Number(process.argv[3]));
const mode = (d: string) => (statSync(join(p.req.runDir, d)).mode & 0o777).toString(8);
try {
  // The session's identity files go at its end: their mode is read while it runs.
  let passwd = "";
  const identity = p.session.identityFiles.dir;
  const onSpawn = () => void (passwd = (statSync(join(identity, "passwd")).mode & 0o777).toString(8));
  const bus = { issueCapability: () => "cap", endRun: () => {} };
  const s = await start({ ...p, req: { ...p.req, bus, onSpawn } });
  await s.exited;
  process.stdout.write(JSON.stringify({ run: mode(""), home: mode("home"), passwd }));
} catch (e) {
  process.stdout.write(JSON.stringify({ error: (e as NodeJS.ErrnoException).code ?? String(e) }));
}
