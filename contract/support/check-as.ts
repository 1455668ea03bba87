// The end-of-session check in a process of its own, run as another uid by the test (under setpriv
// when the tests run as root): prints the report as one JSON line.
//   node check-as.ts <workspace> <quarantine>
import { checkWorkspace } from "../../src/host/workspace-check.ts";

const [ws, q] = process.argv.slice(2) as [string, string];
process.stdout.write(`${JSON.stringify(checkWorkspace(ws, q))}\n`);
